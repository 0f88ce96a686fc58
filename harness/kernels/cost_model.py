"""A floor-time model of one operator call on the Ascend 950PR, on documented rates.

Every rate below names its source (`SOURCES`); nothing is an unstated assumption. A floor is stated in two timing
scopes (harness.model.settings.SCOPES), side by side: `device` (the kernels' work only, max(cube time, unique GM bytes /
HBM bandwidth): what msprof's Task Duration and the task book's limits measure, cases/baselines/csymm_taskbook.csv
declaring them `device`) and `call` (the device floor plus the stream's documented launch costs, host-timed with
synchronisation: the scope of the public per-call figures). Each is compared only with a limit of its own scope
(`scope_verdicts`). The cube time follows the
cube time follows the plan's tiles as the kernels hand them out (round-robin over the cube cores, so a last partial
wave of tiles costs a whole tile time) at the Mmad rate of table 2 (arch 3510) of asc-devkit's Cube instruction
performance summary. The Mmad head overhead (that table's Delta t) and the L0 load bandwidths are left out: the
floor is a lower bound. The per-core clock is not published; the chip's announced FP8 peak fixes cores x clock, so
the model derives the clock per core count (28 and 36 are reported).

HF32 has two documented rates: table 2's 16x16x8 (8x fp32) and HF32.md's "twice the fp32 rate" (2x). The model's
primary figures use table 2 (the rate the built kernels bet on, `HF32_BET`); every floor also carries its figures
under the other rate (`by_hf32_rate`), and `csymm_hf32_bet` says what the bet costs if HF32.md is right.
"""
from __future__ import annotations

from dataclasses import dataclass

CUBE_DOC = "asc-devkit docs/zh/api/附录/Cube指令理论性能汇总.md"
SOURCES = {
    "mmad": f"{CUBE_DOC}, table 2 (NPU arch 3510): Mmad cube_m x cube_n x cube_k, float 16x16x1, HF32 16x16x8, "
            "half 16x16x16, fp8 16x16x32",
    "fp8_peak": "Huawei Connect 2025 Ascend roadmap: 950PR 1 PFLOPS FP8 (reported e.g. by cloudnews.tech, "
                "'Huawei shows muscle with its AI chip roadmap'); clock = peak / (2 x fp8 MACs/cycle x cube cores)",
    "hbm": "Huawei Connect 2025 Ascend roadmap: 950PR HiBL 1.0 HBM, 128 GB, 1.6 TB/s (same report)",
    "launch": "public ops-blas Csymm contribution for the 950PR: ~7 us for one launch, ~3 us each extra launch "
              "(host-timed with stream synchronisation; quoted in issue 23)",
    "cube_cores": "platform query aclrtGetDeviceInfo on the device; 28 (the public contribution's 950PR) and 36 "
                  "(the emulator's default) reported",
    "vector_cores": "asc-devkit impl/basic_api/utils/kernel_utils_constants.h: AIV_CORE_NUM = 72 for 3510",
    "vector": "asc-devkit docs/zh/api/附录/Vector指令理论性能汇总.md, table 8 (Atlas A2/A3): FusedMulAdd float 64 "
              "elements per cycle and vector core; its 950PR tables give no vector arithmetic rates and SIMT's rate is "
              "not published, so the model takes 64 fp32 lanes per cycle for the 950's vector cores (SIMT included)",
    "movement": f"{CUBE_DOC}, table 5 (arch 3510): L1 -> L0A and L1 -> L0B 256 bytes per cycle each; table 8: "
                "L0C -> Unified Buffer float NoQuant 128 bytes per cycle",
    "hf32_doc": "asc-devkit docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/Mmad计算/关键特性说明/HF32.md, 特性说明: "
                "HF32 makes Mmad (f322f32) 'twice' the fp32 rate (2 x 16x16x1 = 512 MACs per cycle)",
    "vector_950": "asc-devkit docs/zh/api/附录/C-API-Reg矢量计算接口理论性能汇总.md (Ascend 950PR/950DT): table 1 "
                  "asc_add_scalar float 32 elements per cycle, table 2 asc_abs_sub and asc_axpy float 64; no add of "
                  "two float vectors is listed, so the chunked 3M's per-chunk adds are bounded by 64 (fast end) and "
                  "32 (slow end) elements per cycle and vector core",
    "hf32_format": "asc-devkit docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/Mmad计算/关键特性说明/HF32.md, "
                   "figure 2: 950PR HF32 keeps 10 mantissa bits",
}

#: Mmad multiply-accumulates per cycle and cube core (table 2: cube_m x cube_n x cube_k).
MACS_PER_CYCLE = {"fp32": 16 * 16 * 1, "hf32": 16 * 16 * 8, "half": 16 * 16 * 16, "fp8": 16 * 16 * 32}
#: The two documented HF32 Mmad rates (MACs per cycle and cube core) and where each comes from (SOURCES keys).
HF32_RATES = {"table2_16x16x8": (16 * 16 * 8, "mmad"), "hf32_md_2x_fp32": (2 * 16 * 16 * 1, "hf32_doc")}
#: The rate the primary figures and the built kernels' precision choice (csymm_host.cpp SplitHf32) assume.
HF32_BET = "table2_16x16x8"
#: The timing scope of a floor without launches, and of one with them (harness.model.settings.SCOPES).
DEVICE_SCOPE, CALL_SCOPE = "device", "call"
#: A precision's cube passes: the operand format each runs in and how many products one real product costs
#: (hf32x3: x = hi + lo, hi*hi + hi*lo + lo*hi in one fp32 L0C chain).
PRECISIONS = {"fp32": ("fp32", 1), "hf32": ("hf32", 1), "hf32x3": ("hf32", 3)}
FP8_PEAK_FLOPS = 1e15
HBM_BYTES_PER_US = 1.6e12 / 1e6
FIRST_LAUNCH_US = 7.0
EXTRA_LAUNCH_US = 3.0
CUBE_CORES = (28, 36)
#: Mmad operand alignment the rate formula rounds to: m and n to 16, k to k0 = 8 (table 2's fp32/HF32 k0).
FRACTAL, K0 = 16, 8


def clock_ghz(cube_cores: int) -> float:
    """The per-core clock the FP8 peak implies for `cube_cores` cores."""
    return FP8_PEAK_FLOPS / (2 * MACS_PER_CYCLE["fp8"] * cube_cores) / 1e9


def _ceil_div(x: int, a: int) -> int:
    return -(-x // a)


def _up(x: int, a: int) -> int:
    return _ceil_div(x, a) * a


def macs_per_cycle(fmt: str, hf32_rate: str = HF32_BET) -> int:
    """Mmad MACs per cycle and cube core of an operand format; HF32 at one of its two documented rates."""
    return HF32_RATES[hf32_rate][0] if fmt == "hf32" else MACS_PER_CYCLE[fmt]


def tile_cycles(rows: int, cols: int, k: int, precision: str, hf32_rate: str = HF32_BET) -> float:
    """Cube cycles of one output tile: its Mmads at the documented rate, operands rounded up to whole fractals."""
    fmt, passes = PRECISIONS[precision]
    return passes * _up(rows, FRACTAL) * _up(cols, FRACTAL) * _up(k, K0) / macs_per_cycle(fmt, hf32_rate)


def cube_us(tiles: list[tuple[int, int, int]], cube_cores: int, precision: str, hf32_rate: str = HF32_BET) -> float:
    """Time of one launch's tiles (rows, cols, k) dealt round-robin to the cores: the busiest core's sum."""
    busy = [0.0] * cube_cores
    for i, (rows, cols, k) in enumerate(tiles):
        busy[i % cube_cores] += tile_cycles(rows, cols, k, precision, hf32_rate)
    return max(busy) / (clock_ghz(cube_cores) * 1e3)


def launch_us(launches: int) -> float:
    """Stream tasks (kernels and memsets) of one call, host-timed with synchronisation."""
    return FIRST_LAUNCH_US + EXTRA_LAUNCH_US * (launches - 1) if launches else 0.0


@dataclass(frozen=True)
class Design:
    """One way to run a call: its stream tasks, the tiles of each cube launch, and the GM bytes no cache avoids
    (split_gm_bytes: those the split HF32's lo operands add; vector_cycles: a vector-only path's work). built: the
    kernels in the tree; built_products: its
    cube computes the built kernels' products in their L0C order (so their precision, measured on the emulator, is
    its precision)."""
    name: str
    launches: int
    cube_launches: tuple[tuple[tuple[int, int, int], ...], ...]
    unique_gm_bytes: int
    built: bool
    built_products: bool
    split_gm_bytes: int = 0
    vector_cycles: float = 0.0  # the busiest vector core's SIMT work on a vector-only path (64 lanes per cycle)
    chunk_k: int = 0  # > 0: a 3M design recombining per K chunk of this; its tiles are blocks (rows, cols, 3k)


def cube_macs(design: Design) -> int:
    """Multiply-accumulates of the real products (what the cube computes at fp32; the HF32 split runs 3x this)."""
    return sum(r * c * k for tiles in design.cube_launches for r, c, k in tiles)


def _scoped(design: Design, cube_cores: int, precision: str, hf32_rate: str) -> dict:
    """The design's cube, vector and memory times and its floors in the device scope (kernel work only) and the call
    scope (+ launches) at one HF32 rate."""
    cube = sum(cube_us(list(tiles), cube_cores, precision, hf32_rate) for tiles in design.cube_launches)
    vector = design.vector_cycles / (clock_ghz(cube_cores) * 1e3)
    memory = (design.unique_gm_bytes + (design.split_gm_bytes if precision == "hf32x3" else 0)) / HBM_BYTES_PER_US
    device = max(cube + vector, memory)
    out = {"cube_us": cube, "vector_us": vector, "memory_us": memory, "device_floor_us": device,
           "call_floor_us": device + launch_us(design.launches)}
    if design.chunk_k:
        to_us = 1 / (clock_ghz(cube_cores) * 1e3)
        ends = {end: chunked_3m_cycles(design.cube_launches[0], cube_cores, precision, design.chunk_k, end,
                                       hf32_rate) * to_us for end in CHUNK_ENDS}
        out.update(device_floor_us=max(ends["overlapped"], memory), handover_us=ends["overlapped"] - cube,
                   device_serial_us=max(ends["serial"], memory))
        out.update(call_floor_us=out["device_floor_us"] + launch_us(design.launches),
                   call_serial_us=out["device_serial_us"] + launch_us(design.launches))
    return out


def floor(design: Design, cube_cores: int, precision: str) -> dict:
    """The design's floors (us) and their parts at `cube_cores` and `precision`; launches on one stream run in order.
    device_floor_us: the kernels' work only (the task book's scope); call_floor_us (= floor_us): plus the documented
    launch costs; both at table 2's HF32 rate, and per HF32 rate in by_hf32_rate. A chunked 3M design (chunk_k) adds
    chunk_k, block, handover_us and the serial end (device_serial_us, call_serial_us); its device floor is the
    overlapped end (chunked_3m_cycles)."""
    primary = _scoped(design, cube_cores, precision, HF32_BET)
    fmt, passes = PRECISIONS[precision]
    # the cube time of the same products on any tiling at all: every cube core busy to the end
    balanced = passes * cube_macs(design) / (macs_per_cycle(fmt) * cube_cores * clock_ghz(cube_cores) * 1e3)
    rates = ("mmad", "fp8_peak", "hbm", "launch") + (("vector",) if design.vector_cycles else ())
    if fmt == "hf32":
        rates += ("hf32_doc",)
    chunked = {}
    if design.chunk_k:
        rates += ("movement", "vector_950")
        chunked = {"chunk_k": design.chunk_k, "block": design.cube_launches[0][0][:2],
                   "handover_us": primary["handover_us"], "device_serial_us": primary["device_serial_us"],
                   "call_serial_us": primary["call_serial_us"]}
    return {**chunked, "name": design.name, "precision": precision, "cube_cores": cube_cores,
            "clock_ghz": clock_ghz(cube_cores),
            "launches": design.launches, "cube_macs": cube_macs(design), "built": design.built,
            "built_products": design.built_products, "cube_us": primary["cube_us"], "balanced_cube_us": balanced,
            "vector_us": primary["vector_us"], "memory_us": primary["memory_us"],
            "launch_us": launch_us(design.launches),
            "device_floor_us": primary["device_floor_us"], "call_floor_us": primary["call_floor_us"],
            "floor_us": primary["call_floor_us"], "hf32_rate": HF32_BET,
            "by_hf32_rate": {rate: _scoped(design, cube_cores, precision, rate) for rate in HF32_RATES},
            "rates_source": [SOURCES[k] for k in rates]}


def scope_verdicts(variant: dict, limit_us: float, limit_scope: str) -> dict:
    """The variant's floor in each scope against the limit carried into that scope: a `device` limit as is for the
    device floor, plus one documented launch for the call floor (the call a one-launch kernel of that device time
    would make); a `call` limit as is for the call floor, less one launch for the device floor."""
    device_limit = limit_us if limit_scope == DEVICE_SCOPE else limit_us - launch_us(1)
    out = {}
    for scope, limit in ((DEVICE_SCOPE, device_limit), (CALL_SCOPE, device_limit + launch_us(1))):
        us = variant[f"{scope}_floor_us"]
        out[scope] = {"floor_us": us, "limit_us": limit, "under_limit": us <= limit,
                      "limit_is": "declared" if scope == limit_scope else f"carried from {limit_scope} by one launch"}
    return out


# ---- Csymm ----------------------------------------------------------------------------------------------------


def csymm_block(m: int, n: int, cube_cores: int) -> int:
    """PlanCsymm's complex block side (operators/host/csymm_host.h): 128, halved down to 32 while the tiles are
    fewer than the cube cores."""
    block = 128
    while block > 32 and -(-m // block) * -(-n // block) < cube_cores:
        block //= 2
    return block


def csymm_tiles(m: int, n: int, left: bool, cube_cores: int, gemms: int = 1) -> tuple[tuple[int, int, int], ...]:
    """Engine tiles of the one real GEMM P^T (n x 2m) = L (n x 2k) * R (2k x 2m): a block of b complex columns of C
    x b complex rows is a b x 2b region over K = 2k. gemms = 3: the 3M method's three real m x n x k products, each
    tiled by the same blocks (b x b over K = k)."""
    k = m if left else n
    b = csymm_block(m, n, cube_cores)
    blocks = [(min(b, n - j), min(b, m - i)) for j in range(0, n, b) for i in range(0, m, b)]
    if gemms == 1:
        return tuple((rows, 2 * cols, 2 * k) for rows, cols in blocks)
    return tuple((rows, cols, k) for _ in range(gemms) for rows, cols in blocks)


def csymm_simt_gm_bytes(m: int, n: int, left: bool, beta_zero: bool) -> int:
    """GM bytes of Csymm's SIMT kernels, which the emulator does not count. prepare reads every A element (k x k
    complex, mirrored reads included) and B, and writes the embedded operand (LEFT: E(A), 2k x 2k floats; RIGHT:
    A expanded, n x 2k, and E(B), 2k x 2m); the epilogue (beta != 0 only) reads P and C and writes C."""
    k = m if left else n
    prepare = 8 * k * k + 8 * m * n + (16 * k * k if left else 8 * k * k + 16 * m * n)
    return prepare + (0 if beta_zero else 24 * m * n)


#: The built Csymm runs split HF32 from this real K (2k) on (csymm_host.cpp, kSplitMinRealK), fp32 below.
CSYMM_SPLIT_MIN_REAL_K = 64


def csymm_precision(m: int, n: int, left: bool) -> str:
    """The precision the built Csymm chooses for a shape."""
    return "hf32x3" if 2 * (m if left else n) >= CSYMM_SPLIT_MIN_REAL_K else "fp32"


#: Real K per L1 chunk in the built kernel (csymm_host.cpp kRealChunkK / kSplitChunkK).
CSYMM_CHUNK_K = {"fp32": 128, "hf32x3": 48}
#: Panel pairs the vector cores build per K chunk (csymm_kernel.cpp Pairs): split HF32's three products share (L, R)
#: and (lo L, lo R), each panel built once (three pairs, one per product, before issue 38).
CSYMM_PANEL_PAIRS = {"fp32": 1, "hf32": 1, "hf32x3": 2}
VECTOR_LANES = 64
L0_LOAD_BYTES_PER_CYCLE = 256
FIXPIPE_BYTES_PER_CYCLE = 128


def aiv_count(cube_cores: int) -> int:
    """Two vector cores per AI core (KERNEL_TYPE_MIX_AIC_1_2; 72 for 36: AIV_CORE_NUM in SOURCES['vector_cores'])."""
    return 2 * cube_cores


def csymm_vector_path_cycles(m: int, n: int, left: bool, vector_cores: int) -> float:
    """The vector path (csymm_vector): one SIMT thread per element of C, ceil(mn / cores) consecutive elements per
    vector core (at least one round of lanes each), each thread 4k multiply-adds, 64 lanes per cycle."""
    k = m if left else n
    cores = min(vector_cores, _ceil_div(m * n, VECTOR_LANES))
    return _ceil_div(_ceil_div(m * n, cores), VECTOR_LANES) * 4 * k


def csymm_cube_path_cycles(m: int, n: int, left: bool, cube_cores: int, vector_cores: int,
                           precision: str | None = None, hf32_rate: str = HF32_BET) -> float:
    """The built cube path's busiest AI core in cycles, as csymm_host.cpp CubePathCycles counts it: the NaN scan
    (before the SyncAll), the first K chunk's panels built by the core's two vector cores and loaded into L0, the
    larger of the panel building, the L0A and L0B loads and the Mmads (they overlap), and the last tile's Fixpipe.
    What no document gives (SyncAll, cross-core flags, each instruction's head overhead) is left out: it only adds
    to the cube path. Device scope: no launch (both paths are one launch). precision: the built choice unless given;
    hf32_rate: which documented HF32 rate the Mmads run at."""
    k = m if left else n
    precision = precision or csymm_precision(m, n, left)
    terms = PRECISIONS[precision][1]
    pairs = CSYMM_PANEL_PAIRS[precision]
    rate = macs_per_cycle(PRECISIONS[precision][0], hf32_rate)
    chunk = CSYMM_CHUNK_K[precision]
    real_k = 2 * k
    full_chunks = _ceil_div(real_k, chunk) - 1  # every chunk is `chunk` deep (a multiple of K0) but the last
    k_sum = full_chunks * chunk + _up(real_k - full_chunks * chunk, K0)
    k_first = _up(min(chunk, real_k), K0)
    tiles = csymm_tiles(m, n, left, cube_cores)
    used = min(cube_cores, len(tiles))
    busiest = 0.0
    for core in range(used):
        build = load_a = load_b = mmad = fixpipe = 0.0
        fill = None
        for rows, cols, _ in tiles[core::used]:
            rows, cols = _up(rows, FRACTAL), _up(cols, FRACTAL)
            if fill is None:
                a, b = rows * k_first, k_first * cols
                fill = pairs * (a + b) / (2 * VECTOR_LANES) + terms * max(a, b) * 4 / L0_LOAD_BYTES_PER_CYCLE
            build += pairs * (rows + cols) * k_sum / (2 * VECTOR_LANES)
            load_a += terms * rows * k_sum * 4 / L0_LOAD_BYTES_PER_CYCLE
            load_b += terms * cols * k_sum * 4 / L0_LOAD_BYTES_PER_CYCLE
            mmad += terms * rows * cols * k_sum / rate
            fixpipe = rows * cols * 4 / FIXPIPE_BYTES_PER_CYCLE
        busiest = max(busiest, fill + max(build, mmad, load_a, load_b) + fixpipe)
    scan = _ceil_div(k * k + m * n, min(vector_cores, 2 * used) * VECTOR_LANES)
    return scan + busiest


def csymm_path(m: int, n: int, left: bool, cube_cores: int, vector_cores: int, hf32_rate: str = HF32_BET) -> str:
    """"vector" where the vector path's cycles are not above the cube path's (csymm_host.cpp VectorPath), else
    "cube". Both paths are one launch, so the choice compares device-scope work only: no launch cost enters it."""
    vector = csymm_vector_path_cycles(m, n, left, vector_cores)
    cube = csymm_cube_path_cycles(m, n, left, cube_cores, vector_cores, hf32_rate=hf32_rate)
    return "vector" if vector <= cube else "cube"


def csymm_hf32_bet(m: int, n: int, left: bool, cube_cores: int) -> dict:
    """The built precision choice (split HF32 from real K 64, csymm_host.cpp SplitHf32) bets on table 2's HF32 rate.
    Per documented HF32 rate: the device-scope cube path (us) with split HF32 and with plain fp32, which is faster,
    and what the built choice loses against the faster one under that rate (0 where it is the faster)."""
    aivs = aiv_count(cube_cores)
    to_us = 1 / (clock_ghz(cube_cores) * 1e3)
    built = csymm_precision(m, n, left)
    out = {"bet": HF32_BET, "built_precision": built, "rates": {}}
    for rate in HF32_RATES:
        us = {p: csymm_cube_path_cycles(m, n, left, cube_cores, aivs, p, rate) * to_us for p in ("fp32", "hf32x3")}
        faster = min(us, key=us.get)
        out["rates"][rate] = {"cube_path_us": us, "faster": faster, "built_loses_us": us[built] - us[faster]}
    return out


def csymm_copy_gm_bytes(m: int, n: int, beta_zero: bool) -> int:
    """GM bytes the on-chip Csymm moves by copies (what the emulator's cube_gm_bytes counts: tensor copies, Fixpipe,
    DataCopyPad): C written once (Fixpipe L0C -> GM when beta == 0, else DataCopyPad after the epilogue) and read
    once when beta != 0. The panels are built from A and B by SIMT reads and reach L1 over the UB -> L1 channel,
    never through GM."""
    return 8 * m * n * (1 if beta_zero else 2)


def csymm_split_gm_bytes(m: int, n: int, left: bool) -> int:
    """The split HF32's lo operands in the GM-workspace design (before the on-chip one), lo(L) (n x 2k) and lo(R)
    (R's size), each written by prepare and read by the cube."""
    k = m if left else n
    return 2 * (8 * n * k + (16 * k * k if left else 16 * m * n))


def csymm_unique_gm_bytes(m: int, n: int, left: bool, beta_zero: bool) -> int:
    """The GM-workspace design (before the on-chip one) at fp32: A's stored triangle read once, B read by prepare
    (and again by the cube on LEFT, where it is the engine's left operand), the workspace operands written and read
    once, C written; with beta != 0 also P written and read and C read."""
    k = m if left else n
    workspace = 16 * k * k if left else 8 * k * k + 16 * m * n
    b_reads = 16 * m * n if left else 8 * m * n
    return 4 * k * (k + 1) + b_reads + 2 * workspace + 8 * m * n + (0 if beta_zero else 24 * m * n)


def csymm_on_chip_unique_gm_bytes(m: int, n: int, left: bool, beta_zero: bool) -> int:
    """The built design (one mixed AIC/AIV launch, operands mirrored and embedded in UB and handed to L1, no GM
    workspace): A's stored triangle and B read once, C written (and read when beta != 0). The kernel's SIMT reads
    fetch A's and B's panel elements once per tile and K chunk; the repeats are L2 hits the floor does not
    charge."""
    k = m if left else n
    return 4 * k * (k + 1) + 8 * m * n + 8 * m * n + (0 if beta_zero else 8 * m * n)


#: The 3M design's name (its precision is measured by harness/kernels/three_m.py, not by a kernel).
THREE_M = "one launch, 3M (three real products)"
#: The vector path's name (csymm_vector: plain fp32 on the vector cores, for shapes csymm_path sends there).
VECTOR_PATH = "built: one vector-only launch, plain fp32 (small shapes)"


#: The 3M design recombined per K chunk (harness/kernels/three_m.py `kc`), and the chunk its precision passed at.
THREE_M_CHUNKED = "one launch, 3M recombined per K chunk (L0C -> UB, re/im summed on the vector cores)"
THREE_M_CHUNK_K = 64
#: fp32 vector operations per element of C and K chunk: re += P1 - P2 (2), im += (P3 - P1) - P2 (3).
THREE_M_CHUNK_OPS = 5
#: The two ends of the chunked 3M's hand-over: `overlapped` (Fixpipe and vector adds hidden under the cube, with
#: double-buffered L0C, but for the last chunk's; adds at 64 elements per cycle) and `serial` (nothing overlaps the
#: cube; adds at 32): vector add rates per end, SOURCES['vector_950'].
CHUNK_ENDS = {"overlapped": 64, "serial": 32}
#: Blocks the chunked 3M may deal (each block's three products stay on one AI core, which sums their chunks).
THREE_M_BLOCKS = (128, 64, 32)


def chunked_3m_cycles(blocks: tuple[tuple[int, int, int], ...], cube_cores: int, precision: str, chunk_k: int,
                      end: str, hf32_rate: str = HF32_BET) -> float:
    """The busiest AI core's cycles for the chunked 3M's blocks (rows, cols, 3k), dealt round-robin: per block and
    K chunk, three products' Mmads (and their L1 -> L0A / L0B loads, 256 bytes per cycle each), the three L0C
    accumulators handed to UB by Fixpipe (128 bytes per cycle, the rows split between the two vector cores) and
    THREE_M_CHUNK_OPS fp32 operations per element on the two vector cores. `end` (CHUNK_ENDS): `overlapped`, the
    largest of these per core plus the last chunk's Fixpipe and adds; `serial`, their sum (the loads under the
    Mmads). The panels' pre-adds and lo parts are not counted (as for THREE_M)."""
    fmt, terms = PRECISIONS[precision]
    rate, lanes = macs_per_cycle(fmt, hf32_rate), CHUNK_ENDS[end]
    busiest = 0.0
    for core in range(min(cube_cores, len(blocks))):
        mmad = load_a = load_b = fixpipe = vector = drain = 0.0
        for rows, cols, k3 in blocks[core::cube_cores]:
            k = k3 // 3
            chunks = _ceil_div(k, chunk_k)
            k_sum = (chunks - 1) * chunk_k + _up(k - (chunks - 1) * chunk_k, K0)
            r16, c16 = _up(rows, FRACTAL), _up(cols, FRACTAL)
            mmad += 3 * terms * r16 * c16 * k_sum / rate
            load_a += 3 * terms * r16 * k_sum * 4 / L0_LOAD_BYTES_PER_CYCLE
            load_b += 3 * terms * c16 * k_sum * 4 / L0_LOAD_BYTES_PER_CYCLE
            fix_chunk = 3 * r16 * c16 * 4 / FIXPIPE_BYTES_PER_CYCLE
            add_chunk = THREE_M_CHUNK_OPS * rows * cols / (2 * lanes)
            fixpipe += chunks * fix_chunk
            vector += chunks * add_chunk
            drain = fix_chunk + add_chunk
        if end == "overlapped":
            busy = max(mmad, load_a, load_b, fixpipe, vector) + drain
        else:
            busy = max(mmad, load_a, load_b) + fixpipe + vector
        busiest = max(busiest, busy)
    return busiest


def three_m_blocks(m: int, n: int, left: bool, block: int) -> tuple[tuple[int, int, int], ...]:
    """The chunked 3M's blocks of C (b x b, edges smaller), each (rows, cols, 3k): its three real products."""
    k = m if left else n
    return tuple((min(block, n - j), min(block, m - i), 3 * k) for j in range(0, n, block) for i in range(0, m, block))


def three_m_chunked_block(m: int, n: int, left: bool, cube_cores: int, chunk_k: int = THREE_M_CHUNK_K) -> int:
    """The block of THREE_M_BLOCKS whose overlapped end is least at split HF32 on table 2's rate (the precision
    and rate the variant is for); the larger block on a tie."""
    return min(THREE_M_BLOCKS, key=lambda b: (chunked_3m_cycles(three_m_blocks(m, n, left, b), cube_cores, "hf32x3",
                                                                chunk_k, "overlapped"), -b))


def csymm_designs(m: int, n: int, left: bool, beta_zero: bool, cube_cores: int) -> list[Design]:
    """Built: one mixed launch on chip and no other stream task (csymm_kernel.cpp: the NaN scan, SyncAll, the
    AIVs' panels UB -> L1 and the cube's GEMM under cross-core flags, the beta epilogue L0C -> UB; no GM
    workspace, so the split's lo operands cost no GM bytes): A's stored triangle and B read once, C written (and
    read when beta != 0), 4k(k+1) + 16mn (+ 8mn) bytes; the NaN flag needs no memset (the scan stores the call's
    epoch, common/arch35_nan_guard.h), so the call is 1 stream task. Workspace: the design before it, the same
    launch with the embedded operands, the lo operands and P through a GM workspace, after the flag's memset (2
    tasks). 3M: three real products (Ar*Br, Ai*Bi,
    (Ar+Ai)*(Br+Bi)) instead of the embedded GEMM's four, in one launch; its imaginary part subtracts finished
    sums. Before: the kernels as four launches (prepare, gemm, gemm_nan, + epilogue when beta != 0) after the
    memset. Vector: the built vector-only launch the host takes where csymm_path says "vector" (fp32 only). 3M
    chunked: the three products of a block on one AI core, handed L0C -> UB per K chunk of THREE_M_CHUNK_K and
    recombined there (chunked_3m_cycles), in one launch; not built."""
    tiles = (csymm_tiles(m, n, left, cube_cores),)
    gm_bytes = csymm_unique_gm_bytes(m, n, left, beta_zero)
    split_bytes = csymm_split_gm_bytes(m, n, left)
    on_chip = csymm_on_chip_unique_gm_bytes(m, n, left, beta_zero)
    built = Design("built: one mixed launch on chip (panels UB -> L1, epilogue L0C -> UB)", 1, tiles, on_chip, True,
                   True)
    workspace = Design("before: one mixed launch on a GM workspace", 2, tiles, gm_bytes, False, True, split_bytes)
    three_m = Design(THREE_M, 1, (csymm_tiles(m, n, left, cube_cores, gemms=3),),
                     on_chip, False, False)
    before = Design("before: prepare, gemm, gemm_nan (+ epilogue) on a GM workspace", 4 if beta_zero else 5, tiles,
                    gm_bytes, False, True, split_bytes)
    vector = Design(VECTOR_PATH, 1, (), on_chip, True, False,
                    vector_cycles=csymm_vector_path_cycles(m, n, left, aiv_count(cube_cores)))
    block = three_m_chunked_block(m, n, left, cube_cores)
    chunked = Design(THREE_M_CHUNKED, 1, (three_m_blocks(m, n, left, block),), on_chip, False, False,
                     chunk_k=THREE_M_CHUNK_K)
    return [built, workspace, three_m, before, vector, chunked]


# ---- SgemmStridedBatched ---------------------------------------------------------------------------------------


def sgemm_tiles(m: int, n: int, k: int) -> tuple[tuple[int, int, int], ...]:
    """PlanSgemmStridedBatched's engine tiles of one batch (128 x 128 over all of K; C^T = B^T * A^T, n x m)."""
    return tuple((min(128, n - j), min(128, m - i), k) for j in range(0, n, 128) for i in range(0, m, 128))


def sgemm_unique_gm_bytes(m: int, n: int, k: int, batches: int, beta_zero: bool, general: bool) -> int:
    """A and B read once per batch, C written (read when beta != 0); the general path's temp written and read."""
    per_batch = 4 * (m * k + k * n + m * n + (0 if beta_zero else m * n) + (2 * m * n if general else 0))
    return batches * per_batch


def sgemm_designs(m: int, n: int, k: int, batches: int, beta_zero: bool, fast: bool) -> list[Design]:
    """Before: memset, NaN scan, one gemm launch per batch (+ one combine per batch off the fast path), NaN fallback.
    Built (with disjoint C_i, as in every table row): every batch's tiles in one task grid (batch = task / tiles
    per batch) after the NaN guard (the scan and, on NaN, the fallback in one launch), 2 launches (no memset: the
    scan stores the call's epoch in the NaN flag, common/arch35_nan_guard.h); on the general path that grid is the
    mixed launch whose vector cores combine each tile into C (its tiles still pass through GM workspace slots)."""
    tiles = sgemm_tiles(m, n, k)
    per_batch = 1 if fast else 2
    before = Design("one launch per batch", 3 + per_batch * batches, (tiles,) * batches,
                    sgemm_unique_gm_bytes(m, n, k, batches, beta_zero, not fast), False, True)
    name = "batches folded into one task grid" if fast else "batches in one mixed launch, epilogue fused"
    folded = Design(name, 2, (tiles * batches,), sgemm_unique_gm_bytes(m, n, k, batches, beta_zero, not fast), True,
                    True)
    return [before, folded]


def limit_budget(limit_us: float, variants: list[dict], limit_scope: str = DEVICE_SCOPE) -> dict:
    """What reaching a task-book limit takes, in the limit's own scope: the compute time (cube, or a vector-only
    path's) the limit leaves (all of it for a device-scope limit; after one launch for a call-scope one), how far
    each precision's best variant is from it, and the variants whose floor in that scope is under the limit."""
    budget = limit_us if limit_scope == DEVICE_SCOPE else limit_us - launch_us(1)
    best: dict[str, float] = {}
    for v in variants:
        best[v["precision"]] = min(best.get(v["precision"], float("inf")), v["cube_us"] + v["vector_us"])
    return {"limit_us": limit_us, "limit_scope": limit_scope, "cube_budget_us": budget,
            "cube_over_budget": {p: round(us / budget, 3) for p, us in sorted(best.items())},
            "floor_under_limit": [f"{v['name']} / {v['precision']} / {v['cube_cores']} cores" for v in variants
                                  if v[f"{limit_scope}_floor_us"] <= limit_us]}
