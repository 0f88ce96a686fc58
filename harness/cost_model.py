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
    """GM bytes of Csymm's SIMT kernels, which the emulator does not count. prepare reads every A element (k x k
    complex, mirrored reads included) and B, and writes the embedded operand (LEFT: E(A), 2k x 2k floats; RIGHT:
    A expanded, n x 2k, and E(B), 2k x 2m); the epilogue (beta != 0 only) reads P and C and writes C."""
    k = m if left else n
    prepare = 8 * k * k + 8 * m * n + (16 * k * k if left else 8 * k * k + 16 * m * n)
    return prepare + (0 if beta_zero else 24 * m * n)


def csymm_tile(m: int, n: int, cube_cores: int = Hardware.cube_cores) -> int:
    """PlanCsymm's complex tile side (operators/host/csymm_host.h): 128, halved down to 32 while the tiles are fewer
    than the cube cores."""
    tile = 128
    while tile > 32 and -(-m // tile) * -(-n // tile) < cube_cores:
        tile //= 2
    return tile


def csymm_cube_gm_bytes(m: int, n: int, left: bool) -> int:
    """GM bytes of the cube in the one-GEMM design, P^T (n x 2m) = L (n x 2k) * R (2k x 2m): every output tile
    (t complex columns of C x t complex rows) reads its K panels once, and Fixpipe writes the product once."""
    k = m if left else n
    t = csymm_tile(m, n)
    tiles_rows, tiles_cols = -(-n // t), -(-m // t)
    return 4 * 2 * k * (n * tiles_cols + 2 * m * tiles_rows) + 8 * m * n


def csymm_unique_gm_bytes(m: int, n: int, left: bool, beta_zero: bool) -> int:
    """The one-GEMM design: A's stored triangle read once, B read by prepare (and again by the cube on LEFT, where
    it is the engine's left operand), the workspace operands written and read once, C written; with beta != 0 also
    P written and read and C read."""
    k = m if left else n
    workspace = 16 * k * k if left else 8 * k * k + 16 * m * n
    b_reads = 16 * m * n if left else 8 * m * n
    return 4 * k * (k + 1) + b_reads + 2 * workspace + 8 * m * n + (0 if beta_zero else 24 * m * n)


def csymm_plane_design(m: int, n: int, left: bool) -> Work:
    """The design before (three stages, seven fp32 planes in GM; no longer in the tree, so modelled from its loops,
    which reproduce its emulator counters: 331 MB at 1024^2): prepare expands A into Ar, Ai, An and B into Br, Bi;
    the cube makes four products per tile, each tile re-reading its K panels, into the planes Pr, Pi; an epilogue
    writes C. Launches: prepare, gemm, its NaN fallback, epilogue."""
    k = m if left else n
    t = csymm_tile(m, n)
    panels = 4 * 4 * k * t * 2 * (-(-m // t) * -(-n // t))  # four products, a t x k and a k x t panel per tile
    cube = panels + 8 * m * n
    simt = 8 * k * k + 8 * m * n + 12 * k * k + 8 * m * n + 16 * m * n  # prepare; epilogue: P read, C written
    planes = 12 * k * k + 8 * m * n
    unique = 4 * k * (k + 1) + 8 * m * n + 2 * planes + 2 * 8 * m * n + 8 * m * n
    return Work(launches=4, cube_macs=4 * m * n * k, gm_bytes=cube + simt, unique_gm_bytes=unique,
                workspace_bytes=4 * (3 * k * k + 4 * m * n))


def csymm_on_chip_design(m: int, n: int, left: bool) -> Work:
    """The target not built yet (docs/ascend.md): one mixed AIC/AIV launch whose vector cores mirror A's stored
    triangle and embed it panel by panel in UB and hand it to L1 (arch35 has a UB -> L1 path: asc-devkit
    impl/basic_api/dav_c310/kernel_operator_data_copy_impl.h), so no operand goes through GM workspace: A's
    triangle and B read, C written once, the same panels per tile as now."""
    k = m if left else n
    unique = 4 * k * (k + 1) + 8 * m * n + 8 * m * n
    return Work(launches=1, cube_macs=4 * m * n * k, gm_bytes=csymm_cube_gm_bytes(m, n, left),
                unique_gm_bytes=unique, workspace_bytes=0)
