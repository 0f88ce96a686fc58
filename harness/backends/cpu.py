"""The `cpu` backend: the operators' C ABI on host memory, through the same ctypes shim the NPU library will use.

By default it builds (or takes from the cache) the CPU twin; `--operator-lib PATH` loads any other library that
exports the ABI instead. "Device" buffers are page-aligned host mappings between inaccessible guard pages
(`fence.py`), in a worker the pages of the row's shared memory themselves (`map_shared`: no copy), so the operator gets plain host pointers and an access far out of bounds is a SIGSEGV whose note names
the buffer; there is nothing to synchronise, and time is the host's monotonic clock.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from harness.backends import BackendUnavailable, aclblas_lib, check_inside, fence
from harness.backends.build import BuildError, build_twin
from harness.model.untrusted import count


class HostTimer:
    """Brackets calls with time.perf_counter_ns; the twin runs synchronously, so stop() is the end of the work."""

    def __init__(self) -> None:
        self._start = self._stop = 0

    def start(self) -> None:
        self._start = time.perf_counter_ns()

    def stop(self) -> None:
        self._stop = time.perf_counter_ns()

    def elapsed_s(self) -> float:
        return (self._stop - self._start) / 1e9


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def default_cores() -> int:
    """The twin's own default: ACLBLAS_TWIN_CORES, else the host CPU count."""
    env = os.environ.get("ACLBLAS_TWIN_CORES", "")
    return count(env) or os.cpu_count() or 1


class CpuBackend:
    """State: the loaded library, its handle, and the host buffers standing in for device memory (addr -> buffer)."""

    name = "cpu"
    api = "aclblas"
    #: buffers sit between guard pages: the engine keeps its byte guard zones small and page-rounds them
    fenced = True
    guard_granule = fence.PAGE
    #: buffers can be the row's shared memory itself (`map_shared`): nothing is uploaded or downloaded
    maps_shared_memory = True

    def __init__(self, lib_path: Path, is_twin: bool, cores: int | None, shown: tuple[str, str] | None = None):
        self.library = lib_path
        self.is_twin = is_twin
        self._shown = shown  # (path, sha256) of a library the harness opened and hashed (loaded from its descriptor)
        fence.install()  # build the guard-page helper and install its fault handler before the operator can fault
        self.lib = aclblas_lib.load_aclblas(str(lib_path))
        self.handle = aclblas_lib.create_handle(self.lib)
        self.cores = cores or default_cores()
        if aclblas_lib.has_extension(self.lib, "aclblasTwinSetCoreCount"):
            self.lib.aclblasTwinSetCoreCount(self.handle, self.cores)
        self._buffers: dict[int, tuple[str, int]] = {}  # address -> (buffer name, bytes)
        self._allocated = 0
        self._peak_allocated = 0
        self._description: dict[str, Any] | None = None

    def describe(self) -> dict[str, Any]:
        """Fixed for the backend's life, so computed once: the engine asks for the device on every perf row and
        hashing the library (and platform.processor()) each time would be wasted work."""
        if self._description is None:
            self._description = self._describe()
        return dict(self._description)

    def _describe(self) -> dict[str, Any]:
        path, sha = self._shown or (str(self.library), _sha256(self.library))
        device = f"cpu twin ({self.cores} emulated cores)" if self.is_twin else path
        return {
            "device": device,
            "library": path,
            "library_sha256": sha,
            "host": {"platform": platform.platform(), "machine": platform.machine(),
                     "processor": platform.processor(), "cpus": os.cpu_count(),
                     "python": platform.python_version()},
        }

    def alloc(self, nbytes: int, name: str = "", span: tuple[int, int] | None = None) -> int:
        return self._track(fence.alloc(nbytes, name, span), name, nbytes)

    def map_shared(self, fd: int, offset: int, nbytes: int, name: str, span: tuple[int, int]) -> int:
        """A buffer whose bytes are those of the shared memory `fd` at `offset` (between guard pages, like
        `alloc`'s): the operator reads and writes the judge's bytes in place."""
        return self._track(fence.map_shared(fd, offset, nbytes, name, span), name, nbytes)

    def _track(self, addr: int, name: str, nbytes: int) -> int:
        self._buffers[addr] = (name, nbytes)
        self._allocated += nbytes
        self._peak_allocated = max(self._peak_allocated, self._allocated)
        return addr

    def free(self, addr: int) -> None:
        _, nbytes = self._buffers.pop(addr)
        fence.free(addr)
        self._allocated -= nbytes

    def upload(self, addr: int, host: np.ndarray) -> None:
        data = np.ascontiguousarray(host)
        check_inside(self._buffers, addr, data.nbytes)
        ctypes.memmove(addr, data.ctypes.data, data.nbytes)

    def download(self, addr: int, nbytes: int) -> np.ndarray:
        check_inside(self._buffers, addr, nbytes)
        out = np.empty(nbytes, dtype=np.uint8)
        ctypes.memmove(out.ctypes.data, addr, nbytes)
        return out

    def synchronize(self) -> None:
        """The twin returns when the work is done; nothing is in flight."""

    def timer(self) -> HostTimer:
        return HostTimer()

    def memory(self) -> dict[str, int | None]:
        stats = aclblas_lib.workspace_stats(self.lib, self.handle)
        workspace = stats[0] if stats is not None else None
        return {"workspace_bytes": workspace, "peak_bytes": self._peak_allocated + (workspace or 0)}

    def reset_peaks(self) -> None:
        if aclblas_lib.has_extension(self.lib, "aclblasTwinResetWorkspaceStats"):
            self.lib.aclblasTwinResetWorkspaceStats(self.handle)
        self._peak_allocated = self._allocated

    def last_message(self) -> str:
        return aclblas_lib.last_message(self.lib, self.handle)

    def close(self) -> None:
        if self.handle:
            aclblas_lib.destroy_handle(self.lib, self.handle)
            self.handle = 0
        for addr in list(self._buffers):
            self.free(addr)
        fence.release()


def open(operator_lib: str | None = None, cores: int | None = None, twin: bool = False,  # noqa: A001
         library_path: str = "", library_sha256: str = "", **_: Any) -> CpuBackend:
    """The cpu backend on the twin (built on first use) or on `operator_lib`; BackendUnavailable says why not.
    A worker gets the library as the descriptor the harness opened and hashed (`/proc/self/fd/N`, loaded as is:
    resolving it would load whatever the path names now) with `library_path`/`library_sha256` to show."""
    by_fd = bool(operator_lib) and str(operator_lib).startswith("/proc/self/fd/")
    try:
        path = Path(operator_lib) if by_fd else Path(operator_lib).resolve() if operator_lib else build_twin()
    except BuildError as exc:
        raise BackendUnavailable(f"cpu backend: {exc}") from exc
    if not path.is_file():
        raise BackendUnavailable(f"cpu backend: operator library {library_path or path} does not exist")
    try:
        return CpuBackend(path, is_twin=twin if by_fd else operator_lib is None, cores=cores,
                          shown=(library_path, library_sha256) if by_fd else None)
    except BuildError as exc:
        raise BackendUnavailable(f"cpu backend: {exc}") from exc
    except (OSError, AttributeError) as exc:
        raise BackendUnavailable(f"cpu backend: cannot use {path}: {exc}") from exc
    except aclblas_lib.AclblasError as exc:
        raise BackendUnavailable(f"cpu backend: {path}: {exc}") from exc
