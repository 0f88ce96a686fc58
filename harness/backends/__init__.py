"""Backends: where an operator runs. `cpu` (the CPU twin or any library with the same C ABI), `npu` (Ascend, via
the ACL runtime), `cuda` (cuBLAS through CuPy), `ascend-cpu` (the Ascend C kernels on a CPU emulator). The names
are a contract; see docs/architecture.md, "Backends and the C ABI".

Every backend offers the same small surface (`Backend` below), so the engine, timing and memory code never ask
which one they hold. Per-operator call code lives with the operator in `harness/ops/`, keyed by `Backend.api`.
"""
from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np

from harness.model.settings import BACKENDS


class BackendUnavailable(Exception):
    """The requested backend cannot run on this machine; the message is the one line `harness` prints (exit 3)."""


class Timer(Protocol):
    """Brackets operator calls: device events where the device has them, a monotonic host clock on `cpu`."""

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def elapsed_s(self) -> float:
        """Seconds between start and stop; waits for the device first."""
        ...


class CallTimer:
    """The `call` scope on any backend: host wall clock from before the call to the end of a stream
    synchronisation after it."""

    method = "host clock through stream synchronisation"

    def __init__(self, synchronize: Callable[[], None], clock: Callable[[], int] = time.perf_counter_ns):
        self._synchronize, self._clock = synchronize, clock
        self._start = self._stop = 0

    def start(self) -> None:
        self._start = self._clock()

    def stop(self) -> None:
        self._synchronize()
        self._stop = self._clock()

    def elapsed_s(self) -> float:
        return (self._stop - self._start) / 1e9


class ScopeUnavailable(Exception):
    """A backend cannot time a scope; the message is one line."""


class Backend(Protocol):
    name: str
    #: "aclblas": `lib` is a ctypes.CDLL exporting the ops-blas C ABI (see aclblas_lib.py) and `handle` an
    #: aclblasHandle_t; "cublas": `lib` is CuPy's cuBLAS module and `handle` a cuBLAS handle.
    api: str
    lib: Any
    handle: int

    def describe(self) -> dict[str, Any]:
        """Device, library path and sha256, versions: what a report needs to say where numbers came from."""
        ...

    def alloc(self, nbytes: int, name: str = "", span: tuple[int, int] | None = None) -> int:
        """Device buffer of nbytes; returns its address (contents undefined). `name` (A, B, C) and `span` (offset,
        length of the operator's data inside the buffer) label it where the backend can say which buffer a stray
        access hit and how far off (the cpu backend's guard pages)."""
        ...

    def free(self, addr: int) -> None: ...
    def upload(self, addr: int, host: np.ndarray) -> None: ...
    def download(self, addr: int, nbytes: int) -> np.ndarray:
        """A uint8 host copy of nbytes at addr."""
        ...

    def synchronize(self) -> None: ...
    def timer(self) -> Timer: ...
    def memory(self) -> dict[str, int | None]:
        """{"workspace_bytes": high-water workspace since reset_peaks, "peak_bytes": peak device bytes}; None
        where the backend cannot tell."""
        ...

    def reset_peaks(self) -> None: ...
    def close(self) -> None: ...


def check_inside(buffers: Mapping[int, tuple[Any, int]], addr: int, nbytes: int) -> None:
    """A stray copy would corrupt memory silently: insist that it lies inside one buffer of `buffers` (base address
    -> (owner, size), as a backend keeps what it handed out)."""
    for base, (_, size) in buffers.items():
        if base <= addr and addr + nbytes <= base + size:
            return
    raise ValueError(f"{nbytes} bytes at {addr:#x} are not inside a buffer of this backend")


def open_backend(name: str, **options: Any) -> Backend:
    """Open backend `name`; raises BackendUnavailable with a one-line reason when this machine lacks it."""
    if name not in BACKENDS:
        raise BackendUnavailable(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    module = importlib.import_module(f"harness.backends.{name.replace('-', '_')}")
    return module.open(**options)
