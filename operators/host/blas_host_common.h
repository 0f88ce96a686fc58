/*
 * Host logic shared by every build of the operators (the CPU twin and the Ascend C launch code): integer helpers and
 * the ABI's enum/status constants as plain int32 values.
 *
 * No device dependency and no globals. By default the ABI comes from `aclblas_abi.h`; an ops-blas build defines
 * BLAS_HOST_USE_CANN_HEADERS so the same names come from `cann_ops_blas.h` instead (the values are identical).
 * Validation functions take enums as int32_t on purpose: a caller may pass any 32-bit value (999), and comparing
 * ints is well-defined where an out-of-range enum would not be.
 */
#ifndef BLAS_HOST_COMMON_H
#define BLAS_HOST_COMMON_H

#include <cstddef>
#include <cstdint>

#ifdef BLAS_HOST_USE_CANN_HEADERS
#include "cann_ops_blas.h"
#else
#include "aclblas_abi.h"
#endif

namespace blas_host {

constexpr int32_t kStatusSuccess = ACLBLAS_STATUS_SUCCESS;
constexpr int32_t kStatusAllocFailed = ACLBLAS_STATUS_ALLOC_FAILED;
constexpr int32_t kStatusInvalidValue = ACLBLAS_STATUS_INVALID_VALUE;
constexpr int32_t kStatusHandleIsNullptr = ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
constexpr int32_t kStatusInvalidEnum = ACLBLAS_STATUS_INVALID_ENUM;

constexpr int32_t kOpN = ACLBLAS_OP_N;
constexpr int32_t kOpT = ACLBLAS_OP_T;
constexpr int32_t kOpC = ACLBLAS_OP_C;
constexpr int32_t kUpper = ACLBLAS_UPPER;
constexpr int32_t kLower = ACLBLAS_LOWER;
constexpr int32_t kSideLeft = ACLBLAS_SIDE_LEFT;
constexpr int32_t kSideRight = ACLBLAS_SIDE_RIGHT;

/* ceil(a / b) for a >= 0, b > 0. */
constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* a rounded up to a multiple of b (a >= 0, b > 0). */
constexpr int64_t CeilAlign(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

constexpr int64_t Max1(int64_t a) { return a > 1 ? a : 1; }

constexpr int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

/* Extent of the last block when `extent` is cut into blocks of `block` (== block when it divides evenly; 0 for 0). */
constexpr int64_t TailOf(int64_t extent, int64_t block)
{
    return extent == 0 ? 0 : extent - (CeilDiv(extent, block) - 1) * block;
}

constexpr bool IsTrans(int32_t op) { return op != kOpN; }

/* Valid operation for real data: N, T or C (C == T for real matrices). */
constexpr bool IsValidOperation(int32_t op) { return op == kOpN || op == kOpT || op == kOpC; }

/* Exact comparisons on purpose: BLAS shortcuts fire only for exactly 0 and exactly 1. */
inline bool IsZero(float x) { return x == 0.0f; }
inline bool IsOne(float x) { return x == 1.0f; }
inline bool IsZero(const aclblasComplex& z) { return z.real == 0.0f && z.imag == 0.0f; }
inline bool IsOne(const aclblasComplex& z) { return z.real == 1.0f && z.imag == 0.0f; }

/* Serpentine (boustrophedon) walk over a rows x cols tile grid: odd rows run right to left, so consecutive tiles of
 * one core share an input panel. Tile t -> (row, col). */
inline void SerpentineTile(int64_t t, int64_t cols, int64_t* row, int64_t* col)
{
    const int64_t r = t / cols;
    const int64_t c = t % cols;
    *row = r;
    *col = (r % 2 == 0) ? c : cols - 1 - c;
}

/* Round-robin assignment of tiles to cores: core `core`'s step-th tile is core + step * usedCores, or -1 past the
 * end. Every core walks its tiles in increasing step. */
inline int64_t TileOfCore(int64_t tileCount, int32_t usedCores, int32_t core, int64_t step)
{
    const int64_t t = core + step * usedCores;
    return t < tileCount ? t : -1;
}

/* Cores worth launching: never more than there are tiles (empty cores only cost scheduling), at least one. */
inline int32_t UsedCores(int64_t tileCount, int32_t coreCount)
{
    const int64_t c = Min(tileCount, coreCount > 0 ? coreCount : 1);
    return static_cast<int32_t>(c > 0 ? c : 1);
}

}  // namespace blas_host

#endif  // BLAS_HOST_COMMON_H
