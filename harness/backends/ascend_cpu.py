"""The `ascend-cpu` backend: the real Ascend C kernels and host code of `operators/ascend/` compiled with g++ over
the CPU emulator of an arch35 core (`operators/ascend_cpu/`), called through the same C ABI as every backend.

What it proves that the CPU twin cannot: the kernels' own plan (prepare, embedded operand, L0C accumulation order)
and numerics (fp32 L0C, per-K-fractal accumulation), and that they respect what the hardware would not forgive:
SetFlag/WaitFlag pairing and event ids, L1/L0 capacity and alignment, reads before the filling pipe signalled, the
Mmad PipeBarrier rule, NaN into the cube, Inf results with the saturation mode never chosen, scalar reads of a stale
DCache line (no DataCacheCleanAndInvalid), GM accesses outside the buffers passed in, and, with a launch's cores
running as concurrent threads, cross-core deadlocks and GM races between cores (emu_launch.h). A violation makes the call
return EXECUTION_FAILED and `last_message()` names it. Times are host times of an emulator, not device times.
"""
from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

from harness.backends import BackendUnavailable, aclblas_lib
from harness.backends.build import BuildError, Patch, build_ascend_cpu
from harness.backends.cpu import CpuBackend

_CSYMM_KERNEL = "ascend/blas/symm/arch35/csymm_kernel.cpp"
_CUBE_GEMM = "ascend/blas/common/arch35_cube_gemm.h"
_CUBE_SIZES = "ascend/blas/common/arch35_cube_sizes.h"
_NAN_GUARD = "ascend/blas/common/arch35_nan_guard.h"
_SGEMM_KERNEL = "ascend/blas/gemm_strided_batched/arch35/sgemm_strided_batched_kernel.cpp"

_CSYMM_HOST = "ascend/blas/symm/arch35/csymm_host.cpp"
_CSYMM_PATH_CHOICE = "    return VectorPathCycles(plan, vectorCores) <= CubePathCycles(plan, vectorCores, SplitHf32(plan));"
#: Csymm's GEMM path forced one way for every shape (the host chooses per shape, csymm_host.cpp VectorPath): tests
#: run the cube path's checks on small rows the host would send to the vector cores, and the cost benchmark
#: measures the vector path on the task-book rows.
CSYMM_PATH: dict[str, tuple[Patch, ...]] = {
    "cube": ((_CSYMM_HOST, _CSYMM_PATH_CHOICE, "    return vectorCores < 0 && VectorPathCycles(plan, vectorCores) < 0;"),),
    "vector": ((_CSYMM_HOST, _CSYMM_PATH_CHOICE, "    return vectorCores > 0 || VectorPathCycles(plan, vectorCores) > 0;"),),
}

#: Negative controls: name -> (patches of the real sources, text the failure must contain). Each is a plausible
#: kernel bug the emulator (or the precision gate, for the plane order) must catch on the tables' rows.
NEGATIVE_CONTROLS: dict[str, tuple[tuple[Patch, ...], str]] = {
    # CubeEnd no longer drains the second L0C buffer's flag: its last FIX_M SetFlag is never waited for.
    "unpaired-flag": ((
        (_CUBE_GEMM, "    AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(1);\n    AscendC::SetMMColumnMajor();",
         "    AscendC::SetMMColumnMajor();"),
    ), "never waited for (unpaired flag"),
    # L0A/L0B assumed twice their arch35 size: the second ping-pong half lies past the end of the buffer.
    "l0-over-capacity": ((
        (_CUBE_SIZES, "constexpr uint32_t CUBE_L0_BYTES = 64 * 1024;", "constexpr uint32_t CUBE_L0_BYTES = 128 * 1024;"),
    ), "exceed its capacity"),
    # The chunk's L1 panels are never signalled to MTE1 (Sgemm's GM -> L1 path), nor the L0A/L0B step to the cube
    # (both kernels; Csymm's panels come UB -> L1): the waits for them can never be satisfied.
    "wait-never-set": ((
        (_CUBE_GEMM, "        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(buf);\n", ""),
        (_CUBE_GEMM, "            AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(buf);\n", ""),
    ), "can never be satisfied"),
    # No MTE2 -> MTE1 and MTE1 -> M handshakes at all: L1 -> L0 copies read panels the GM -> L1 copy may still be
    # writing, Mmad reads L0A/L0B the L1 -> L0 copy may still be writing.
    "missing-sync": ((
        (_CUBE_GEMM, "        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(buf);\n"
                     "        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(buf);\n", ""),
        (_CUBE_GEMM, "            AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(buf);\n"
                     "            AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(buf);\n", ""),
    ), "without signalling it first"),
    # The asc-devkit PipeBarrier<PIPE_M> rule dropped (issue 13, point 3).
    "no-pipe-barrier": ((
        (_CUBE_GEMM, "constexpr uint32_t MMAD_BARRIER_THRESHOLD = 10;", "constexpr uint32_t MMAD_BARRIER_THRESHOLD = 0;"),
    ), "without PipeBarrier<PIPE_M>"),
    # The NaN guard disabled: NaN operands reach Mmad (issue 13, point 3).
    "nan-into-cube": ((
        (_NAN_GUARD, "return word.GetValue(0) == epoch;", "return word.GetValue(0) == epoch && false;"),
    ), "holds NaN"),
    # L0C buffers 512 bytes off the 1024-byte boundary the Mmad doc requires (64-aligned: the old check passed it).
    "l0c-misaligned": ((
        (_CUBE_GEMM, "te::MakeMemPtr<te::Location::L0C, float>(buf * L0C_HALF)",
         "te::MakeMemPtr<te::Location::L0C, float>(buf * L0C_HALF + 512)"),
    ), "is not 1024-byte aligned"),
    # The NaN flag read as set whenever it is nonzero (the scheme before issue 23, minus the per-call memset it
    # needed): the epoch an earlier NaN call stored reads as NaN in every later call, which then skips the cube and
    # runs the plain fp32 fallback. The result is still right, so the control shows in the stats (no cube MACs),
    # not in a failure message.
    "nan-flag-never-cleared": ((
        (_NAN_GUARD, "return word.GetValue(0) == epoch;", "return word.GetValue(0) != 0;"),
    ), ""),
    # The NaN flag read without DataCacheCleanAndInvalid: a core that cached the flag in an earlier call reads its
    # stale copy after another core's SIMT threads set it.
    "missing-dcci": ((
        (_NAN_GUARD, """    AscendC::DataCacheCleanAndInvalid<uint32_t, AscendC::CacheLine::SINGLE_CACHE_LINE,
                                      AscendC::DcciDst::CACHELINE_OUT>(word);
""", ""),
    ), "needs DataCacheCleanAndInvalid"),
    # CubeBegin no longer chooses the Inf/NaN mode: an Inf result depends on what CTRL[48] held.
    "saturation-unset": ((
        (_CUBE_GEMM, "    AscendC::AscendCUtils::SetOverflow(1);\n", ""),
    ), "never set CTRL[48]"),
    # Two AI cores deal every Csymm tile (AI core b starts at tile b / 2; its AIVs follow it): each tile is computed
    # and written twice, with the same values, so the sequential emulator passed it; concurrent cores write the same
    # C bytes unordered.
    "tile-dealt-twice": ((
        (_CSYMM_KERNEL, "__aicore__ inline uint32_t FirstTile() { return AiCore(); }\n"
                        "__aicore__ inline uint32_t TileStep() { return static_cast<uint32_t>(AscendC::GetBlockNum()); }",
         "__aicore__ inline uint32_t FirstTile() { return AiCore() / 2; }\n"
         "__aicore__ inline uint32_t TileStep() { return static_cast<uint32_t>((AscendC::GetBlockNum() + 1) / 2); }"),
    ), "GM race on bytes"),
    # Csymm's cube no longer waits for its AIVs' panels: its L1 -> L0 copies read the L1 half the AIVs are still
    # filling over the UB -> L1 channel.
    "handover-no-wait": ((
        (_CSYMM_KERNEL, "            AscendC::CrossCoreWaitFlag<2, PIPE_MTE1>(CS_PANEL_READY + half);  // both AIVs' "
                        "pieces are in L1\n", ""),
    ), "L1 race on bytes"),
    # Csymm's AIVs never report a chunk's panels ready: the cube waits for them, they wait for the L1 half back.
    "handover-never-ready": ((
        (_CSYMM_KERNEL, "            AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(CS_PANEL_READY + half);\n", ""),
    ), "deadlock: every live core of the launch waits"),
    # Csymm's AIVs no longer wait for the cube's result: the beta epilogue reads the UB the cube's Fixpipe writes.
    "epilogue-no-wait": ((
        (_CSYMM_KERNEL, "    AscendC::CrossCoreWaitFlag<2, PIPE_V>(CS_RESULT_READY);  // the AIC's Fixpipe wrote P into "
                        "this UB\n", ""),
    ), "UB race on bytes"),
    # Csymm's epilogue Fixpipe (L0C -> UB) with unitFlag 0 after the tile's last Mmad set the L0C unit flags
    # (unitFlag 3): the hazard before issue 38, against asc-devkit UnitFlag.md (both must enable it together).
    "epilogue-unit-flag-off": ((
        (_CSYMM_KERNEL, "        fp.unitFlag = arch35::FINAL_ACCUMULATION;\n", ""),
    ), "Fixpipe L0C->UB with unitFlag 0 reads L0C block"),
    # The GEMM's Fixpipe L0C -> GM with unitFlag 0 (both kernels' beta == 0 / fast paths).
    "fixpipe-unit-flag-off": ((
        (_CUBE_GEMM, "te::FixpipeParams{FINAL_ACCUMULATION}", "te::FixpipeParams{0}"),
    ), "Fixpipe L0C->GM with unitFlag 0 reads L0C block"),
    # Csymm's panel build reads the source block the DMA is still loading: no MTE2 -> V hand-off between the
    # DataCopyPad GM -> UB of A's / B's block and the SIMT build that reads it.
    "source-no-wait": ((
        (_CSYMM_KERNEL, "                AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(CS_EV_SRC);\n"
                        "                AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(CS_EV_SRC);\n", ""),
    ), "without signalling it first (no SetFlag<MTE2_V>"),
    # The source block read as if DataCopyPad packed its columns: each column is a block padded to 32 bytes in UB
    # (asc-devkit DataCopyPad), so a column of a complex count that is not a multiple of 4 shifts every later one
    # and the build reads pad bytes and other columns' elements (the run's UB and A's unstored triangle hold NaN).
    "source-unpadded": ((
        (_CSYMM_KERNEL, "    s.pitchS = arch35::RoundUp(2 * s.nx * sizeof(float), 32) / sizeof(float);",
         "    s.pitchS = 2 * s.nx;"),
        (_CSYMM_KERNEL, "    s.pitchM = arch35::RoundUp(2 * s.ny * sizeof(float), 32) / sizeof(float);",
         "    s.pitchM = 2 * s.ny;"),
    ), "holds NaN"),
    # A's block read from its stored columns only: the elements of the other triangle come from memory the operator
    # must not read as A (the mirror, loaded as the stored columns it equals, is skipped); the harness fills that
    # triangle with NaN, which reaches the cube.
    "source-no-mirror": ((
        (_CSYMM_KERNEL, "    if (s.fromA == 0 || StoredA(uplo, x, y)) {", "    if (true) {"),
        (_CSYMM_KERNEL, "    s.loadS = s.fromA == 0 || StoredA(", "    s.loadS = 1 || StoredA("),
    ), "holds NaN"),
    # A DataCopyPad past its documented blockCount range (0..4095): the source load's column count with bit 12 set.
    "pad-block-count": ((
        (_CSYMM_KERNEL, "    const AscendC::DataCopyExtParams copy{static_cast<uint16_t>(blocks),",
         "    const AscendC::DataCopyExtParams copy{static_cast<uint16_t>(blocks | 4096),"),
    ), "DataCopyPad takes blockCount 0..4095"),
    # The fused Sgemm epilogue's vector cores no longer wait for the cube's tile: they read a workspace slot the
    # cube core is writing (a missing cross-core barrier).
    "fused-no-wait": ((
        (_SGEMM_KERNEL, "        AscendC::CrossCoreWaitFlag(SB_SLOT_READY + slot);\n", ""),
    ), "GM race on bytes"),
    # The fused Sgemm's cube never reports a tile ready: its vector cores wait for it, it waits for their slots.
    "fused-never-ready": ((
        (_SGEMM_KERNEL, "            AscendC::CrossCoreSetFlag<2, PIPE_FIX>(SB_SLOT_READY + slot);\n", ""),
    ), "deadlock: every live core of the launch waits"),
    # The Sgemm epilogue's queues without their hand-offs (Ascend C tasks synchronise through TQue): a UB tile loaded
    # by DataCopyPad (MTE2) and read by Muls (V) without EnQue/DeQue; a temp tile overwritten by the next load before
    # Muls has released it (FreeTensor); C's tile stored (MTE3) before Axpy's result was enqueued.
    "epilogue-load-not-enqueued": ((
        (_SGEMM_KERNEL, "        que.EnQue(local);\n", ""),
    ), "that pipe MTE2 written (DataCopyPad GM->UB) without signalling it first (no SetFlag<MTE2_V>"),
    "epilogue-temp-not-freed": ((
        (_SGEMM_KERNEL, "            tempQue_.FreeTensor(temp);\n", ""),
    ), "that pipe V read (Muls) without signalling it first (no SetFlag<V_MTE2>"),
    "epilogue-result-not-enqueued": ((
        (_SGEMM_KERNEL, "        outQue_.EnQue(out);\n", ""),
    ), "that pipe V written (Axpy) without signalling it first (no SetFlag<V_MTE3>"),
    # Sgemm's Fixpipe writes with twice the leading dimension of C: past the end of the buffer passed in.
    "gm-out-of-bounds": ((
        ("ascend/blas/gemm_strided_batched/arch35/sgemm_strided_batched_host.cpp", "    t.ldOut = ldOut;",
         "    t.ldOut = 4 * ldOut;"),
    ), "outside every tensor passed to the kernel"),
    # Csymm's cube in HF32 mode without the lo products: one HF32 product, the precision split HF32 exists to avoid.
    "hf32-one-product": ((
        (_CSYMM_KERNEL, "    if (ft.gemm.split != 0) {  // hi*hi", "    if (false) {  // hi*hi"),
        (_CUBE_GEMM, "    AscendC::SetHF32Mode(AscendC::HF32Mode::DISABLE);\n    AscendC::AscendCUtils",
         "    AscendC::SetHF32Mode(AscendC::HF32Mode::ENABLE);\n    AscendC::AscendCUtils"),
    ), "matched"),
    # The first design's order: all of K for the real parts (Ar*Br) into L0C, then all of K for the imaginary parts
    # (Ai*(-Bi)), the real part as the difference of two finished sums (issue 13, point 1): the engine's real K
    # positions grouped by part instead of interleaved per element. The vector cores build both panels with the same
    # order, so the product stays correct and only its accumulation order (its precision) changes. Split HF32's
    # chunks of real K are made 64 deep (144 -> 192 KiB of an L1 half) so that no panel piece spans the K position
    # k where the grouped order wraps (the piece's source block is a contiguous range of elements).
    "old-plane-order": ((
        (_CSYMM_KERNEL, "{ return k == 0 ? 0 : q / 2; }", "{ return k == 0 ? 0 : q % k; }"),
        (_CSYMM_KERNEL, "{ return k == 0 ? 0 : q % 2; }", "{ return k == 0 ? 0 : q / k; }"),
        (_CSYMM_HOST, "constexpr uint32_t kSplitChunkK = 48;", "constexpr uint32_t kSplitChunkK = 64;"),
    ), "matched"),
}

#: The emulator's instruction kinds in the order aclblasAscendCpuGetInstrCounts writes them (emu_core.h Instr).
INSTR_KINDS = ("simt_calls", "simt_threads", "gm_to_l1", "gm_to_l1_bytes", "ub_to_l1", "ub_to_l1_bytes", "l1_to_l0",
               "l1_to_l0_bytes", "mmads", "fixpipes", "data_copy_pads", "data_copy_pad_bytes")

#: Emulated AI cube cores (vector cores: twice as many); the 950PR's real count is read on the device.
DEFAULT_CUBE_CORES = 36


class AscendCpuBackend(CpuBackend):
    """The cpu backend's host buffers, registered with the emulator as device memory so GM bounds are checked."""

    name = "ascend-cpu"

    def __init__(self, lib_path: Path, cores: int | None):
        super().__init__(lib_path, is_twin=False, cores=cores or DEFAULT_CUBE_CORES)
        self.lib.aclblasAscendCpuMapBuffer.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.lib.aclblasAscendCpuUnmapBuffer.argtypes = [ctypes.c_void_p]
        self.lib.aclblasAscendCpuFailDeviceInfo.argtypes = [ctypes.c_int]
        self.lib.aclblasAscendCpuDeviceInfoQueries.restype = ctypes.c_uint64
        u64 = ctypes.POINTER(ctypes.c_uint64)
        self.lib.aclblasAscendCpuGetStats.argtypes = [u64, u64, u64, u64]
        self.lib.aclblasAscendCpuGetInstrCounts.argtypes = [u64, ctypes.c_uint32]
        self.lib.aclblasAscendCpuSelfTest.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]

    def _describe(self) -> dict[str, Any]:
        info = super()._describe()
        info["device"] = f"ascend-cpu (arch35 kernels on the CPU emulator, {self.cores} emulated cube cores)"
        return info

    def alloc(self, nbytes: int, name: str = "", span: tuple[int, int] | None = None) -> int:
        addr = super().alloc(nbytes, name, span)
        self.lib.aclblasAscendCpuMapBuffer(addr, nbytes)
        return addr

    def map_shared(self, fd: int, offset: int, nbytes: int, name: str, span: tuple[int, int]) -> int:
        addr = super().map_shared(fd, offset, nbytes, name, span)
        self.lib.aclblasAscendCpuMapBuffer(addr, nbytes)
        return addr

    def free(self, addr: int) -> None:
        self.lib.aclblasAscendCpuUnmapBuffer(addr)
        super().free(addr)

    def fail_device_info(self, fail: bool) -> None:
        """Make the runtime's core-count query fail (True) or work: the host code's error path."""
        self.lib.aclblasAscendCpuFailDeviceInfo(int(fail))

    def device_info_queries(self) -> int:
        """aclrtGetDeviceInfo calls the library made since it was loaded (the core counts are kept per handle)."""
        return int(self.lib.aclblasAscendCpuDeviceInfoQueries())

    def stats(self) -> dict[str, int]:
        """Kernels launched, blocks run, cube multiply-accumulates and GM bytes moved by tensor and queue copies
        (not raw SIMT accesses) since the last reset_stats()."""
        values = [ctypes.c_uint64(0) for _ in range(4)]
        self.lib.aclblasAscendCpuGetStats(*(ctypes.byref(v) for v in values))
        return dict(zip(("launches", "blocks", "cube_macs", "cube_gm_bytes"), (v.value for v in values)))

    def instr_counts(self) -> dict[str, int]:
        """The emulator's instruction counts since the last reset_stats() (INSTR_KINDS: calls and bytes of each
        copy kind, SIMT calls and threads, Mmads, Fixpipes), for benchmarks/panel_counts.py."""
        values = (ctypes.c_uint64 * len(INSTR_KINDS))()
        self.lib.aclblasAscendCpuGetInstrCounts(values, len(INSTR_KINDS))
        return dict(zip(INSTR_KINDS, values))

    def self_test(self, scenario: str) -> str:
        """Runs one of the emulator's cross-core self-test kernels (`operators/ascend_cpu/selftest/`): "" when its
        launch passed, else the fault it reported."""
        buf = ctypes.create_string_buffer(4096)
        if self.lib.aclblasAscendCpuSelfTest(scenario.encode(), buf, len(buf)) < 0:
            raise ValueError(f"no emulator self-test named {scenario!r}")
        return buf.value.decode()

    def reset_stats(self) -> None:
        self.lib.aclblasAscendCpuResetStats()

    def close(self) -> None:
        for addr in list(self._buffers):
            self.lib.aclblasAscendCpuUnmapBuffer(addr)
        super().close()


def open(patches: tuple[Patch, ...] = (), cores: int | None = None, operator_lib: str | None = None,  # noqa: A001
         **_: Any) -> AscendCpuBackend:
    """The ascend-cpu backend (built on first use, `patches` applied for a negative control); BackendUnavailable
    says why not."""
    if operator_lib:
        raise BackendUnavailable("ascend-cpu backend: --operator-lib does not apply (it builds operators/ascend/)")
    try:
        path = build_ascend_cpu(tuple(patches))
    except BuildError as exc:
        raise BackendUnavailable(f"ascend-cpu backend: {exc}") from exc
    try:
        return AscendCpuBackend(path, cores=cores)
    except (OSError, AttributeError) as exc:
        raise BackendUnavailable(f"ascend-cpu backend: cannot use {path}: {exc}") from exc
    except aclblas_lib.AclblasError as exc:
        raise BackendUnavailable(f"ascend-cpu backend: {path}: {exc}") from exc
