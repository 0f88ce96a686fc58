"""A floor-time model of one operator call on the Ascend 950PR, from what its kernels do.

The work of a call (kernel launches, cube multiply-accumulates, GM bytes, workspace) is counted on the `ascend-cpu`
backend while the real kernels run (launches, MACs and the GM bytes of cube/queue copies are the emulator's
counters; raw SIMT accesses, which it does not see, are added from the kernels' loops here). The floor is what that
work costs at the hardware's peak: max(cube time, GM time) + one launch gap per kernel. Only the vector core count
is documented (asc-devkit impl/basic_api/utils/kernel_utils_constants.h: AIV_CORE_NUM = 72 for __NPU_ARCH__ 3510);
the rates are assumptions, named as such in every report, to be replaced by msprof figures on a device.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Hardware:
    vector_cores: int = 72            # documented (see module docstring)
    cube_cores: int = 36              # assumed: one AIC per two AIV
    clock_ghz: float = 1.8            # assumed
    fp32_macs_per_cycle: int = 2048   # assumed: one fp32 fractal (16x16 outputs x K 8, the Mmad fractal) per cycle
    hf32_speedup: float = 2.0         # assumed: HF32 operands double the cube rate
    hbm_gb_per_s: float = 1600.0      # assumed
    launch_gap_us: float = 3.0        # assumed: per kernel on one stream (dispatch + drain)

    def assumptions(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Work:
    """gm_bytes: every GM access the kernels make (each tile re-reads its K panels); unique_gm_bytes: each buffer's
    bytes once per read and once per write, the traffic no cache can avoid and what the floor charges."""
    launches: int
    cube_macs: int
    gm_bytes: int
    unique_gm_bytes: int
    workspace_bytes: int


def floor_us(work: Work, hw: Hardware = Hardware(), *, hf32: bool = False) -> dict[str, float]:
    """Cube, memory and launch components (us) and their floor: max(cube, memory) + launches * gap, memory from
    the unique bytes (an L2 that held every panel re-read)."""
    rate = hw.cube_cores * hw.fp32_macs_per_cycle * hw.clock_ghz * 1e3 * (hw.hf32_speedup if hf32 else 1.0)
    cube = work.cube_macs / rate
    memory = work.unique_gm_bytes / (hw.hbm_gb_per_s * 1e3)
    launches = work.launches * hw.launch_gap_us
    return {"cube_us": cube, "memory_us": memory, "launch_us": launches, "floor_us": max(cube, memory) + launches}


def csymm_simt_gm_bytes(m: int, n: int, left: bool, beta_zero: bool) -> int:
    """GM bytes of Csymm's SIMT kernels, which the emulator does not count: prepare reads A (k x k complex) and B
    and writes three A planes and two B planes; the epilogue reads both P planes, C when beta != 0, and writes C."""
    k = m if left else n
    prepare = 8 * k * k + 8 * m * n + 12 * k * k + 8 * m * n
    epilogue = 8 * m * n + (0 if beta_zero else 8 * m * n) + 8 * m * n
    return prepare + epilogue


GEMM_TILE = 128


def csymm_unique_gm_bytes(m: int, n: int, left: bool, beta_zero: bool) -> int:
    """Current design: A's stored triangle and B read once, five planes written and read once, P written and read
    once, C written (and read when beta != 0)."""
    k = m if left else n
    planes = 12 * k * k + 8 * m * n
    return 4 * k * (k + 1) + 8 * m * n + 2 * planes + 2 * 8 * m * n + 8 * m * n + (0 if beta_zero else 8 * m * n)


def csymm_embedded_design(m: int, n: int, left: bool) -> Work:
    """The proposed redesign for the compact alpha = 1, beta = 0 path (not implemented): the complex product as one
    real GEMM on a real-embedded operand ([[ar, ai], [-ai, ar]] per element, so both plane products share every K
    step), the plain operand read straight from GM, Fixpipe writing C. LEFT embeds A (2k x 2m, written once by a
    prepare kernel); RIGHT expands A densely and embeds B. Every output tile re-reads its K panels from GM."""
    k = m if left else n
    embedded = 16 * k * m if left else 16 * m * n
    dense_a = 0 if left else 8 * k * k
    prepare = 8 * k * k + (0 if left else 8 * m * n) + embedded + dense_a
    rows, depth, cols = n, 2 * k, 2 * m  # engine GEMM: P^T (n x 2m reals) = plain (n x 2k) * embedded (2k x 2m)
    tiles_rows, tiles_cols = -(-rows // GEMM_TILE), -(-cols // GEMM_TILE)
    panels = 4 * depth * (rows * tiles_cols + cols * tiles_rows)  # each tile reads its K panels once
    gemm = panels + 8 * m * n
    unique = 4 * k * (k + 1) + (0 if left else 8 * m * n) + 2 * (embedded + dense_a) + (8 * m * n if left else 0) \
        + 8 * m * n
    return Work(launches=2, cube_macs=4 * m * n * k, gm_bytes=prepare + gemm, unique_gm_bytes=unique,
                workspace_bytes=embedded + dense_a)
