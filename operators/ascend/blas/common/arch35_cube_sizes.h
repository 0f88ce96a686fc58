/*
 * Buffer and fractal sizes of the arch35 cube unit (Ascend 950PR, dav-3510) for fp32 GEMM: one place for what every
 * cube kernel and its tiling data agree on. Plain constants, safe to include from host code.
 */
#ifndef ARCH35_CUBE_SIZES_H
#define ARCH35_CUBE_SIZES_H

#include <cstdint>

/* FP32 fractal sizes: C0 = 8 floats (32 bytes) per L1/L0A/L0B row, 16 per L0C row; L0 K step of 8. */
constexpr uint32_t CUBE_FP32_C0 = 8;
constexpr uint32_t CUBE_L0C_C0 = 16;
constexpr uint32_t CUBE_FRACTAL = 16;
constexpr uint32_t CUBE_BASE_K = 8;
constexpr uint32_t CUBE_L1_BYTES = 512 * 1024;
constexpr uint32_t CUBE_L0_BYTES = 64 * 1024;

#endif  // ARCH35_CUBE_SIZES_H
