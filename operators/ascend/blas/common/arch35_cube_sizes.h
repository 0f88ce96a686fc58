/*
 * Buffer and fractal sizes of the arch35 cube unit (Ascend 950PR, dav-3510) for fp32 GEMM: one place for what every
 * cube kernel and its tiling data agree on. Plain constants, safe to include from host code.
 */
#ifndef ARCH35_CUBE_SIZES_H
#define ARCH35_CUBE_SIZES_H

#include <cstdint>

/* FP32 fractal sizes: C0 = 8 floats (32 bytes) per L1/L0A/L0B row, 16 per L0C row. L0 K step (one Mmad) of 32,
 * as the upstream blasLt fp32 matmul: 128 x 32 floats is 16 KiB, half an L0A/L0B ping-pong buffer. Measured on the
 * ascend-cpu emulator (1024x1024 Csymm, NORMAL_5_1, real part against the float64 truth): K step 8 / 16 / 32 give
 * max abs error 0.00134 / 0.00140 / 0.00153, all far inside the seed's 1e-2 (the old separate-plane order: 0.0287). */
constexpr uint32_t CUBE_FP32_C0 = 8;
constexpr uint32_t CUBE_L0C_C0 = 16;
constexpr uint32_t CUBE_FRACTAL = 16;
constexpr uint32_t CUBE_BASE_K = 32;
constexpr uint32_t CUBE_L1_BYTES = 512 * 1024;
constexpr uint32_t CUBE_L0_BYTES = 64 * 1024;
constexpr uint32_t CUBE_L0C_BYTES = 256 * 1024;

#endif  // ARCH35_CUBE_SIZES_H
