"""The `cuda` backend: the cuBLAS peer of each operator (its package's `cublas` call) through CuPy, an optional extra
(`pip install '.[cuda]'`). It exists to produce the GPU-baseline tables task packages judge NPU times against, and to
run the same case tables on a real accelerator with device timing.

Everything runs on one blocking CUDA stream owned by the backend and made CuPy's current stream: CuPy's cuBLAS
wrappers re-bind the handle to the *current* stream on every call, so the handle, the copies and the timing events
all see the same stream only if it is current. CuPy's current stream is per thread: use a backend from the thread
that opened it.

Only the pure parts (enum tables, `scalar_ptr`, the unavailable paths, and the plumbing against a stub CuPy) are
exercised without a GPU; the cuBLAS calls, CUDA events, memory figures and `describe()` values are only exercised on
a real NVIDIA device.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np

from harness.model import abi
from harness.backends import BackendUnavailable, check_inside

INSTALL_HINT = "pip install '.[cuda]'"

# cuBLAS enum values (cublas_api.h). Spelled here, not read from CuPy, so the translation tables exist without it.
CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C = 0, 1, 2
CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER = 0, 1
CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT = 0, 1
CUBLAS_POINTER_MODE_HOST = 0

#: aclblas enum value -> cuBLAS enum value. Invalid aclblas values have no entry: the op code returns the aclblas
#: status itself instead of handing cuBLAS a value it would read differently.
SIDE = {abi.SIDE_LEFT: CUBLAS_SIDE_LEFT, abi.SIDE_RIGHT: CUBLAS_SIDE_RIGHT}
FILL = {abi.UPPER: CUBLAS_FILL_MODE_UPPER, abi.LOWER: CUBLAS_FILL_MODE_LOWER}
OP = {abi.OP_N: CUBLAS_OP_N, abi.OP_T: CUBLAS_OP_T, abi.OP_C: CUBLAS_OP_C}


def scalar_ptr(value: complex | float, dtype: Any) -> tuple[int, np.ndarray]:
    """Host address of `value` stored as one `dtype` element, and the array that keeps it alive: in host pointer
    mode cuBLAS reads alpha/beta through the pointer during the call."""
    dtype = np.dtype(dtype)
    if dtype.kind != "c" and complex(value).imag != 0:
        raise ValueError(f"scalar {value!r} has an imaginary part; {dtype} cannot hold it")
    held = np.array([value if dtype.kind == "c" else complex(value).real], dtype=dtype)
    return held.ctypes.data, held


def checked_call(backend: Any, valid: bool, alpha: complex | float | None, beta: complex | float | None,
                 dtype: Any, call: Callable[[int, int], object]) -> int:
    """Every operator's cuBLAS call has this shape: arguments with no cuBLAS meaning (an invalid enum: `valid` is
    false; a NULL scalar) are answered INVALID_VALUE here, alpha and beta go as host pointers kept alive through
    `call(alpha_ptr, beta_ptr)`, and a cuBLAS error is EXECUTION_FAILED."""
    if not valid or alpha is None or beta is None:
        return int(abi.Status.INVALID_VALUE)
    alpha_ptr, keep_alpha = scalar_ptr(alpha, dtype)
    beta_ptr, keep_beta = scalar_ptr(beta, dtype)
    try:
        call(alpha_ptr, beta_ptr)
    except backend.lib.CUBLASError:
        return int(abi.Status.EXECUTION_FAILED)
    return int(abi.Status.SUCCESS)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _import_cupy() -> tuple[Any, Any]:
    """(cupy, cupy_backends.cuda.libs.cublas), or BackendUnavailable saying whether CuPy is absent or broken."""
    try:
        return importlib.import_module("cupy"), importlib.import_module("cupy_backends.cuda.libs.cublas")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("cupy", "cupy_backends"):
            raise BackendUnavailable(f"cuda backend: CuPy is not installed ({INSTALL_HINT})") from None
        raise BackendUnavailable(f"cuda backend: CuPy failed to import ({_first_line(exc)})") from None
    except ImportError as exc:  # installed, but its CUDA libraries do not load
        raise BackendUnavailable(f"cuda backend: CuPy failed to import ({_first_line(exc)})") from None


def _loaded_cublas_path() -> str | None:
    """The libcublas file this process has mapped (CuPy's cuBLAS module loaded it). Binding that same file gives
    `native` the very library instance that created the handle."""
    try:
        lines = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and Path(fields[5]).name.startswith("libcublas.so"):
            return fields[5].strip()
    return None


def _load_cublas_cdll() -> ctypes.CDLL:
    """libcublas for the routines CuPy does not wrap (SYMM); called after a handle exists, so the library is loaded
    even where CuPy binds it lazily."""
    path = _loaded_cublas_path() or ctypes.util.find_library("cublas")
    if path is None:
        raise BackendUnavailable("cuda backend: cannot locate the libcublas CuPy uses (needed for routines CuPy "
                                 "does not wrap)")
    return ctypes.CDLL(path)


class CublasLib:
    """CuPy's cuBLAS module plus `native`, which calls a libcublas routine CuPy does not wrap. `native` takes CuPy's
    argument convention (ints for handle, enums, pointers) and, like CuPy's wrappers, binds the handle to the
    backend's stream first and raises CuPy's `CUBLASError` (with `.status`) on a non-success status. Every other
    name is CuPy's own function."""

    def __init__(self, cupy_cublas: Any, cdll: Any, stream_ptr: int):
        self._cupy = cupy_cublas
        self._cdll = cdll
        self._stream_ptr = stream_ptr
        self.path = getattr(cdll, "_name", None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cupy, name)

    def native(self, symbol: str, argtypes: list, handle: int, *args: Any) -> None:
        """Call libcublas `symbol` (declared with `argtypes`, int status) on `handle` and the backend's stream."""
        fn = getattr(self._cdll, symbol)
        if getattr(fn, "argtypes", None) is None:
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int
        self._cupy.setStream(handle, self._stream_ptr)
        self._cupy.check_status(fn(handle, *args))


class EventTimer:
    """CUDA events recorded on the backend's stream. Device time from start to stop, so it includes any host launch
    gap after `start()` while the stream is idle (one Python call into cuBLAS in sync mode)."""

    def __init__(self, cupy: Any, stream: Any):
        self._cupy = cupy
        self._stream = stream
        self._start = cupy.cuda.Event()
        self._stop = cupy.cuda.Event()

    def start(self) -> None:
        self._start.record(self._stream)

    def stop(self) -> None:
        self._stop.record(self._stream)

    def elapsed_s(self) -> float:
        self._stop.synchronize()
        return self._cupy.cuda.get_elapsed_time(self._start, self._stop) / 1e3


class CudaBackend:
    """One device, one stream, one cuBLAS handle in host pointer mode; buffers are CuPy allocations kept alive in a
    dict keyed by address."""

    name = "cuda"
    api = "cublas"

    def __init__(self, cupy: Any, cupy_cublas: Any, device: int):
        self._cupy = cupy
        self._rt = cupy.cuda.runtime
        self.device = device
        cupy.cuda.Device(device).use()
        self._stream = cupy.cuda.Stream(non_blocking=False)
        self._stream.use()
        self.handle = cupy_cublas.create()
        cupy_cublas.setStream(self.handle, self._stream.ptr)
        cupy_cublas.setPointerMode(self.handle, CUBLAS_POINTER_MODE_HOST)
        try:
            self.lib = CublasLib(cupy_cublas, _load_cublas_cdll(), self._stream.ptr)
        except BackendUnavailable:
            cupy_cublas.destroy(self.handle)
            cupy.cuda.Stream.null.use()
            raise
        self._pool = cupy.get_default_memory_pool()
        self._buffers: dict[int, tuple[Any, int]] = {}
        self._live = 0
        self.reset_peaks()

    def describe(self) -> dict[str, Any]:
        props = self._rt.getDeviceProperties(self.device)
        name = props["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        return {
            "device": name, "hardware": name,
            "device_index": self.device,
            "compute_capability": f"{props['major']}.{props['minor']}",
            "memory_bytes": int(props["totalGlobalMem"]),
            "driver": _nvidia_driver_version(),
            "driver_cuda_version": _cuda_version(self._rt.driverGetVersion()),
            "cuda_runtime_version": _cuda_version(self._rt.runtimeGetVersion()),
            "cublas_version": _cublas_version(self.lib.getVersion(self.handle)),
            "cupy_version": str(self._cupy.__version__),
            "library": self.lib.path,
        }

    def alloc(self, nbytes: int, name: str = "", span: tuple[int, int] | None = None) -> int:
        memory = self._cupy.cuda.alloc(max(nbytes, 1))  # 0 bytes would give the NULL address, shared by all
        self._buffers[memory.ptr] = (memory, nbytes)
        self._live += nbytes
        self._sample_memory()
        return memory.ptr

    def free(self, addr: int) -> None:
        _, nbytes = self._buffers.pop(addr)
        self._live -= nbytes

    # Copies go on the backend's stream and are waited for: a plain cudaMemcpy runs on the default stream, which a
    # per-thread-default-stream build does not order with ours, and a pageable upload may return before its DMA.
    def upload(self, addr: int, host: np.ndarray) -> None:
        data = np.ascontiguousarray(host)
        check_inside(self._buffers, addr, data.nbytes)
        self._rt.memcpyAsync(addr, data.ctypes.data, data.nbytes, self._rt.memcpyHostToDevice, self._stream.ptr)
        self._stream.synchronize()

    def download(self, addr: int, nbytes: int) -> np.ndarray:
        check_inside(self._buffers, addr, nbytes)
        out = np.empty(nbytes, dtype=np.uint8)
        self._rt.memcpyAsync(out.ctypes.data, addr, nbytes, self._rt.memcpyDeviceToHost, self._stream.ptr)
        self._stream.synchronize()
        return out

    def synchronize(self) -> None:
        self._stream.synchronize()
        self._sample_memory()

    def timer(self) -> EventTimer:
        return EventTimer(self._cupy, self._stream)

    def memory(self) -> dict[str, int | None]:
        """peak_bytes: the most bytes held at once through `alloc`, plus device memory taken outside CuPy's pool
        since reset_peaks (cuBLAS workspace, lazily loaded kernels), sampled at alloc, synchronize and here.
        Device-wide free memory is the source of the second part, so another process on the GPU disturbs it."""
        self._sample_memory()
        return {"workspace_bytes": None, "peak_bytes": self._peak}

    def reset_peaks(self) -> None:
        self._free0 = self._rt.memGetInfo()[0]
        self._held0 = self._pool.total_bytes()
        self._peak = self._live

    def _sample_memory(self) -> None:
        outside = (self._free0 - self._rt.memGetInfo()[0]) - (self._pool.total_bytes() - self._held0)
        self._peak = max(self._peak, self._live + max(0, outside))

    def close(self) -> None:
        if not self.handle:
            return
        self._stream.synchronize()
        self.lib.destroy(self.handle)
        self.handle = 0
        self._buffers.clear()
        self._live = 0
        self._cupy.cuda.Stream.null.use()


def _cuda_version(value: int) -> str:
    """CUDA's 1000*major + 10*minor encoding (12080 -> "12.8")."""
    return f"{value // 1000}.{value % 1000 // 10}"


def _cublas_version(value: int) -> str:
    """cuBLAS's 10000*major + 100*minor + patch encoding (120803 -> "12.8.3")."""
    return f"{value // 10000}.{value % 10000 // 100}.{value % 100}"


def _nvidia_driver_version() -> str | None:
    """The kernel driver version (e.g. "570.124.06"), which cudaDriverGetVersion does not give."""
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
    except OSError:
        return None
    found = re.search(r"Kernel Module(?: for \S+)?\s+([0-9][0-9.]*)", text)
    return found.group(1) if found else None


def open(device: int = 0, **_: Any) -> CudaBackend:
    """The cuda backend on `device`; BackendUnavailable (one line) without CuPy or without that CUDA device."""
    cupy, cupy_cublas = _import_cupy()
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except RuntimeError as exc:  # CUDARuntimeError: no driver, no device, driver older than the runtime
        raise BackendUnavailable(f"cuda backend: no CUDA device visible ({_first_line(exc)})") from None
    if count == 0:
        raise BackendUnavailable("cuda backend: no CUDA device visible (cudaGetDeviceCount returned 0)")
    if not 0 <= device < count:
        raise BackendUnavailable(f"cuda backend: no CUDA device {device} ({count} visible)")
    try:
        return CudaBackend(cupy, cupy_cublas, device)
    except RuntimeError as exc:  # CUDARuntimeError / CUBLASError while setting up the context, stream or handle
        raise BackendUnavailable(f"cuda backend: cannot start on device {device} ({_first_line(exc)})") from None
