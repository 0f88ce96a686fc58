"""The `ascend-cpu` backend: the real Ascend C kernels and host code of `operators/ascend/` compiled with g++ over
the CPU emulator of an arch35 core (`operators/ascend_cpu/`), called through the same C ABI as every backend.

What it proves that the CPU twin cannot: the kernels' own plan (prepare, planes, L0C accumulation order, epilogue)
and numerics (fp32 L0C, per-K-fractal accumulation), and that they respect what the hardware would not forgive:
SetFlag/WaitFlag pairing and event ids, L1/L0 capacity and alignment, reads before the filling pipe signalled, the
Mmad PipeBarrier rule, NaN into the cube, GM accesses outside the buffers passed in. A violation makes the call
return EXECUTION_FAILED and `last_message()` names it. Times are host times of an emulator, not device times.
"""
from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

from harness.backends import BackendUnavailable, aclblas_lib
from harness.backends.build import BuildError, Patch, build_ascend_cpu
from harness.backends.cpu import CpuBackend

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
        u64 = ctypes.POINTER(ctypes.c_uint64)
        self.lib.aclblasAscendCpuGetStats.argtypes = [u64, u64, u64]

    def _describe(self) -> dict[str, Any]:
        info = super()._describe()
        info["device"] = f"ascend-cpu (arch35 kernels on the CPU emulator, {self.cores} emulated cube cores)"
        return info

    def alloc(self, nbytes: int) -> int:
        addr = super().alloc(nbytes)
        self.lib.aclblasAscendCpuMapBuffer(addr, nbytes)
        return addr

    def free(self, addr: int) -> None:
        self.lib.aclblasAscendCpuUnmapBuffer(addr)
        super().free(addr)

    def fail_device_info(self, fail: bool) -> None:
        """Make the runtime's core-count query fail (True) or work: the host code's error path."""
        self.lib.aclblasAscendCpuFailDeviceInfo(int(fail))

    def stats(self) -> dict[str, int]:
        """Kernels launched, blocks run and cube multiply-accumulates since the last reset_stats()."""
        values = [ctypes.c_uint64(0) for _ in range(3)]
        self.lib.aclblasAscendCpuGetStats(*(ctypes.byref(v) for v in values))
        return dict(zip(("launches", "blocks", "cube_macs"), (v.value for v in values)))

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
