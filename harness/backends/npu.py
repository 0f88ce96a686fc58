"""The `npu` backend: Ascend 950PR through the ACL runtime (`libascendcl.so`) and the Ascend operator library.

Only the runtime wrapper is NPU-specific: device, stream, buffers, copies, events and memory info come from ACL via
ctypes; the operators are called through `aclblas_lib.load_aclblas`, the same shim the `cpu` backend uses, so case
code is shared. Requires CANN + NPU (`source <CANN>/set_env.sh`); without CANN, `open` raises BackendUnavailable
with one line and attempts nothing else.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import time
from collections.abc import Callable
from ctypes import POINTER, byref, c_float, c_int32, c_size_t, c_uint32, c_uint64, c_void_p
from pathlib import Path
from typing import Any

import numpy as np

from harness.backends import BackendUnavailable, CallTimer, ScopeUnavailable, aclblas_lib

NO_CANN = "npu backend: libascendcl.so not found (requires CANN + NPU; source <CANN>/set_env.sh)"
#: Where operators/ascend/CMakeLists.txt puts the library when built as docs/npu.md says.
DEFAULT_OPERATOR_LIB = Path(__file__).resolve().parents[2] / "operators" / "ascend" / "build" / "libaclblas_ascend.so"

ACL_SUCCESS = 0
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_HBM_MEM = 1

_ACL_FUNCTIONS = {
    "aclInit": [ctypes.c_char_p],
    "aclFinalize": [],
    "aclrtSetDevice": [c_int32],
    "aclrtResetDevice": [c_int32],
    "aclrtCreateStream": [POINTER(c_void_p)],
    "aclrtDestroyStream": [c_void_p],
    "aclrtSynchronizeStream": [c_void_p],
    "aclrtMalloc": [POINTER(c_void_p), c_size_t, c_uint32],
    "aclrtFree": [c_void_p],
    "aclrtMemcpy": [c_void_p, c_size_t, c_void_p, c_size_t, c_uint32],
    "aclrtCreateEvent": [POINTER(c_void_p)],
    "aclrtDestroyEvent": [c_void_p],
    "aclrtRecordEvent": [c_void_p, c_void_p],
    "aclrtSynchronizeEvent": [c_void_p],
    "aclrtEventElapsedTime": [POINTER(c_float), c_void_p, c_void_p],
    "aclrtGetMemInfo": [c_uint32, POINTER(c_size_t), POINTER(c_size_t)],
}
#: What the device scope holds the stream with (hicann/runtime include/external/acl/acl_rt.h). A runtime without
#: them has no device scope: the backend says so once (describe()["notes"], printed at start-up) and times the
#: call scope instead, whose figures are NO_REF against device-scope limits with NO_NOTIFY as the reason.
_NOTIFY_FUNCTIONS = {
    "aclrtCreateNotify": [POINTER(c_void_p), c_uint64],
    "aclrtDestroyNotify": [c_void_p],
    "aclrtWaitAndResetNotify": [c_void_p, c_void_p, c_uint32],
    "aclrtRecordNotify": [c_void_p, c_void_p],
}
NO_NOTIFY = ("this ACL runtime lacks aclrtCreateNotify/aclrtRecordNotify/aclrtWaitAndResetNotify, so the device "
             "scope cannot hold the stream; timed in the call scope instead")
#: Seconds a held stream waits for its release before the runtime reports the wait as failed (a call that
#: synchronises its own stream could otherwise never be released).
HOLD_TIMEOUT_S = 60
#: aclFinalize waits up to 2000 ms for the device log flush unless this is 0 (hicann/runtime
#: docs/api_docs/aclFinalize.md); every fresh perf-round process would pay it. Set only where the user has not.
LOG_FLUSH_ENV = "ASCEND_LOG_DEVICE_FLUSH_TIMEOUT"


def canonical_hardware(soc_name: str) -> str:
    """The hardware name baselines use for an ACL SoC name: 'Ascend950PR_9599' -> 'Ascend 950PR' (the suffix after
    '_' is a chip variant, not other hardware); a name not of that shape is kept as it is."""
    match = re.match(r"ascend\s*(\d+[a-z]*)", soc_name.strip(), re.IGNORECASE)
    return f"Ascend {match[1].upper()}" if match else soc_name.strip()


#: aclDeviceInfo (hicann/runtime docs/api_docs/aclDeviceInfo.md): what aclGetDeviceCapability is asked for.
ACL_DEVICE_INFO = {"ai_cores": 0, "vector_cores": 1}
#: Where CANN and the driver write `Version=...` (tried in order; relative paths under ASCEND_HOME_PATH).
CANN_VERSION_FILES = ("version.info", "runtime/version.info", "compiler/version.info")
DRIVER_VERSION_FILE = Path("/usr/local/Ascend/driver/version.info")


def version_file(path: Path) -> str:
    """The `Version=` value of a CANN or driver version.info ("" when there is none); reads 4 KiB at most."""
    try:
        with path.open("rb") as f:  # not open(): this module's open() is the backend's
            text = f.read(4096).decode(errors="replace")
    except OSError:
        return ""
    match = re.search(r"^\s*Version\s*=\s*(\S+)", text, re.MULTILINE)
    return match[1] if match else ""


def runtime_identity(acl: ctypes.CDLL, device: int) -> dict[str, Any]:
    """What the runtime says it is, for the run's operator identity: CANN and driver versions (their version.info),
    the runtime's version and the device's AI / vector core counts (each left out where the runtime lacks it)."""
    home = Path(os.environ.get("ASCEND_HOME_PATH") or "/usr/local/Ascend/ascend-toolkit/latest")
    out: dict[str, Any] = {"cann_version": next((v for v in map(version_file, (home / f for f in CANN_VERSION_FILES))
                                                 if v), ""), "driver_version": version_file(DRIVER_VERSION_FILE)}
    if hasattr(acl, "aclrtGetVersion"):
        parts = [c_int32(), c_int32(), c_int32()]
        if acl.aclrtGetVersion(*(byref(p) for p in parts)) == ACL_SUCCESS:
            out["runtime_version"] = ".".join(str(p.value) for p in parts)
    if hasattr(acl, "aclGetDeviceCapability"):
        for key, info in ACL_DEVICE_INFO.items():
            value = ctypes.c_int64()
            if acl.aclGetDeviceCapability(c_uint32(device), c_int32(info), byref(value)) == ACL_SUCCESS:
                out[key] = value.value
    return out


def soc_name(acl: ctypes.CDLL) -> str:
    """aclrtGetSocName() after aclrtSetDevice: the SoC this process runs on ('' when the runtime lacks it)."""
    if not hasattr(acl, "aclrtGetSocName"):
        return ""
    raw = acl.aclrtGetSocName()
    return raw.decode(errors="replace") if raw else ""


class AclError(RuntimeError):
    def __init__(self, call: str, code: int):
        super().__init__(f"{call} failed with ACL error {code}")
        self.code = code


def acl_library_candidates(env: dict[str, str] | None = None) -> list[str]:
    """Where libascendcl.so may be: the CANN lib64 folders named by set_env.sh's variables, then the loader path."""
    env = os.environ if env is None else env
    found = []
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        if env.get(var):
            found.append(str(Path(env[var]) / "lib64" / "libascendcl.so"))
    found.append("libascendcl.so")
    return found


def bindings() -> dict[str, tuple[list, Any]]:
    """Every ACL function this backend binds: name -> (argtypes, restype), what `harness check-acl`
    (harness/backends/acl_signatures.py) compares with the public declarations."""
    out: dict[str, tuple[list, Any]] = {name: (args, c_int32)
                                        for name, args in {**_ACL_FUNCTIONS, **_NOTIFY_FUNCTIONS}.items()}
    out["aclrtGetSocName"] = ([], ctypes.c_char_p)
    return out


def load_acl(env: dict[str, str] | None = None) -> ctypes.CDLL:
    """The ACL runtime with argtypes declared (the notify calls and aclrtGetSocName where the runtime has them);
    BackendUnavailable(NO_CANN) when no candidate loads."""
    for candidate in acl_library_candidates(env):
        try:
            acl = ctypes.CDLL(candidate)
        except OSError:
            continue
        for name, (argtypes, restype) in bindings().items():
            if name in _ACL_FUNCTIONS or hasattr(acl, name):
                fn = getattr(acl, name)
                fn.argtypes, fn.restype = argtypes, restype
        return acl
    raise BackendUnavailable(NO_CANN)


def _check(call: str, code: int) -> None:
    if code != ACL_SUCCESS:
        raise AclError(call, code)


class EventTimer:
    """Device events recorded on the operator stream; elapsed_s waits for the stop event. The start event is
    reached as soon as it is recorded on an idle stream, so a sample also holds the host's enqueue time: the
    `steady` scope, where back-to-back calls keep the stream busy. The backend destroys the events at close."""

    method = "ACL events on the operator stream"

    def __init__(self, backend: "NpuBackend"):
        self._acl, self._stream = backend.acl, backend.stream
        self._start, self._stop = backend.event(), backend.event()

    def start(self) -> None:
        _check("aclrtRecordEvent", self._acl.aclrtRecordEvent(self._start, self._stream))

    def stop(self) -> None:
        _check("aclrtRecordEvent", self._acl.aclrtRecordEvent(self._stop, self._stream))

    def elapsed_s(self) -> float:
        _check("aclrtSynchronizeEvent", self._acl.aclrtSynchronizeEvent(self._stop))
        ms = c_float(0.0)
        _check("aclrtEventElapsedTime", self._acl.aclrtEventElapsedTime(byref(ms), self._start, self._stop))
        return ms.value / 1e3


class HeldEventTimer(EventTimer):
    """The `device` scope: start() holds the operator stream behind a notify wait and records the start event
    behind it; stop() records the stop event and only then releases the stream by recording the notify on an
    idle second stream. The call's tasks are all enqueued before the device reaches the start event, so the
    sample is the device's time from the call's first task to the end of its last, without the host's enqueue
    latency (NVBench's blocking kernel, with an ACL notify as the block)."""

    method = "ACL events on the operator stream, held by a notify until the call is enqueued"

    def __init__(self, backend: "NpuBackend"):
        super().__init__(backend)
        self._gate, self._notify = backend.gate()

    def start(self) -> None:
        _check("aclrtWaitAndResetNotify", self._acl.aclrtWaitAndResetNotify(self._notify, self._stream,
                                                                            HOLD_TIMEOUT_S))
        super().start()

    def stop(self) -> None:
        super().stop()
        _check("aclrtRecordNotify", self._acl.aclrtRecordNotify(self._notify, self._gate))


class NpuBackend:
    """State: the ACL runtime, device, stream, the operator library and its handle, and the live device buffers."""

    name = "npu"
    api = "aclblas"

    def __init__(self, acl: ctypes.CDLL, device: int, library: Path):
        self.acl, self.device, self.library = acl, device, library
        self.stream, self.handle, self.lib = 0, 0, None
        #: the clock of the `call` scope, in ns (a test puts a model's clock here)
        self.host_clock: Callable[[], int] = time.perf_counter_ns
        self._buffers: dict[int, int] = {}
        self._events: list[c_void_p] = []
        self._gate: tuple[int, c_void_p] | None = None
        code = acl.aclInit(None)
        if code not in (ACL_SUCCESS, ACL_ERROR_REPEAT_INITIALIZE):
            raise AclError("aclInit", code)
        try:
            self._open()
        except BaseException:
            try:
                self.close()  # reset and finalise on this path too
            except Exception:  # noqa: BLE001 - the failure that stopped the open is the one to report
                pass
            raise

    def _open(self) -> None:
        acl = self.acl
        _check("aclrtSetDevice", acl.aclrtSetDevice(self.device))
        self.soc_name = soc_name(acl)
        self.runtime = runtime_identity(acl, self.device)
        stream = c_void_p()
        _check("aclrtCreateStream", acl.aclrtCreateStream(byref(stream)))
        self.stream = stream.value
        self.lib = aclblas_lib.load_aclblas(str(self.library))
        self.handle = aclblas_lib.create_handle(self.lib)
        status = self.lib.aclblasSetStream(self.handle, self.stream)
        if status != 0:
            raise aclblas_lib.AclblasError("aclblasSetStream", status)
        self._baseline_used = self._used_bytes()
        self._peak_used = self._baseline_used

    def _used_bytes(self) -> int:
        free, total = c_size_t(0), c_size_t(0)
        _check("aclrtGetMemInfo", self.acl.aclrtGetMemInfo(ACL_HBM_MEM, byref(free), byref(total)))
        return total.value - free.value

    def has_notify(self) -> bool:
        """Whether the runtime has the calls the device scope holds the stream with."""
        return all(hasattr(self.acl, name) for name in _NOTIFY_FUNCTIONS)

    def describe(self) -> dict[str, Any]:
        return {"device": f"npu {self.device}", "hardware": canonical_hardware(self.soc_name),
                "notes": [] if self.has_notify() else [f"npu backend: {NO_NOTIFY}"],
                "soc_name": self.soc_name, "library": str(self.library),
                "library_sha256": hashlib.sha256(self.library.read_bytes()).hexdigest(),
                "ascend_home": os.environ.get("ASCEND_HOME_PATH"), LOG_FLUSH_ENV: os.environ.get(LOG_FLUSH_ENV),
                **self.runtime}

    def alloc(self, nbytes: int, name: str = "", span: tuple[int, int] | None = None) -> int:
        ptr = c_void_p()
        _check("aclrtMalloc", self.acl.aclrtMalloc(byref(ptr), max(nbytes, 1), ACL_MEM_MALLOC_HUGE_FIRST))
        self._buffers[ptr.value] = nbytes
        self._peak_used = max(self._peak_used, self._used_bytes())
        return ptr.value

    def free(self, addr: int) -> None:
        """aclrtFree neither waits for the tasks using the buffer nor synchronises: the stream is synchronised
        first."""
        self.synchronize()
        self._buffers.pop(addr)
        _check("aclrtFree", self.acl.aclrtFree(addr))

    def _inside(self, addr: int, nbytes: int) -> None:
        if not any(base <= addr and addr + nbytes <= base + size for base, size in self._buffers.items()):
            raise ValueError(f"{nbytes} bytes at {addr:#x} are not inside a buffer of this backend")

    def upload(self, addr: int, host: np.ndarray) -> None:
        data = np.ascontiguousarray(host)
        self._inside(addr, data.nbytes)
        _check("aclrtMemcpy", self.acl.aclrtMemcpy(addr, data.nbytes, data.ctypes.data, data.nbytes,
                                                   ACL_MEMCPY_HOST_TO_DEVICE))

    def download(self, addr: int, nbytes: int) -> np.ndarray:
        self._inside(addr, nbytes)
        out = np.empty(nbytes, dtype=np.uint8)
        _check("aclrtMemcpy", self.acl.aclrtMemcpy(out.ctypes.data, nbytes, addr, nbytes, ACL_MEMCPY_DEVICE_TO_HOST))
        return out

    def _synchronize_operator_stream(self) -> None:
        _check("aclrtSynchronizeStream", self.acl.aclrtSynchronizeStream(self.stream))

    def synchronize(self) -> None:
        """The operator stream, and the device scope's gate stream where there is one."""
        _check("aclrtSynchronizeStream", self.acl.aclrtSynchronizeStream(self.stream))
        if self._gate:
            _check("aclrtSynchronizeStream", self.acl.aclrtSynchronizeStream(self._gate[0]))
        self._peak_used = max(self._peak_used, self._used_bytes())

    def timer(self) -> EventTimer:
        return EventTimer(self)

    def scope_timer(self, scope: str) -> Any:
        """The timer of a timing scope (harness.model.settings.SCOPES) on this device."""
        if scope == "device" and self.has_notify():
            return HeldEventTimer(self)
        if scope in ("device", "call"):
            timer = CallTimer(self._synchronize_operator_stream, self.host_clock)
            if scope == "device":  # the runtime cannot hold the stream: the call scope, and why (NO_REF then)
                timer.scope, timer.fallback = "call", NO_NOTIFY
            return timer
        if scope == "steady":
            return EventTimer(self)
        raise ScopeUnavailable(f"timing scope {scope}: run harness under msprof as docs/npu.md, 'msprof', "
                               "says; the npu backend does not time it itself")

    def event(self) -> c_void_p:
        """A new event, destroyed at close (never after aclFinalize, as a finalizer could)."""
        event = c_void_p()
        _check("aclrtCreateEvent", self.acl.aclrtCreateEvent(byref(event)))
        self._events.append(event)
        return event

    def gate(self) -> tuple[int, c_void_p]:
        """(stream, notify) the device scope holds and releases the operator stream with; made once."""
        if self._gate is None:
            stream, notify = c_void_p(), c_void_p()
            _check("aclrtCreateStream", self.acl.aclrtCreateStream(byref(stream)))
            self._gate = (stream.value, notify)
            _check("aclrtCreateNotify", self.acl.aclrtCreateNotify(byref(notify), 0))
        return self._gate

    def memory(self) -> dict[str, int | None]:
        """Workspace use is not observable from outside the Ascend library (None); peak_bytes is the device
        memory in use above the level at open/reset, sampled at every alloc and synchronize."""
        return {"workspace_bytes": None, "peak_bytes": self._peak_used - self._baseline_used}

    def reset_peaks(self) -> None:
        self._baseline_used = self._used_bytes() - sum(self._buffers.values())
        self._peak_used = self._used_bytes()

    def close(self) -> None:
        """Tear down in the order ACL asks for: synchronise the streams, then the handle, buffers, events, notify
        and streams, then reset and finalise, each step attempted even when one before it failed (the first
        failure is raised at the end); nothing calls ACL after aclFinalize."""
        if self.acl is None:
            return
        acl, failures = self.acl, []

        def attempt(what: str, step: Any, *args: Any) -> None:
            try:
                code = step(*args)
                if isinstance(code, int) and code != ACL_SUCCESS:
                    raise AclError(what, code)
            except Exception as exc:  # noqa: BLE001 - every step runs; the first failure is re-raised below
                failures.append(exc)

        streams = [s for s in (self.stream, self._gate[0] if self._gate else 0) if s]
        for stream in streams:
            attempt("aclrtSynchronizeStream", acl.aclrtSynchronizeStream, stream)
        if self.handle:
            attempt("aclblasDestroy", aclblas_lib.destroy_handle, self.lib, self.handle)
            self.handle = 0
        for addr in list(self._buffers):
            attempt("aclrtFree", acl.aclrtFree, addr)
        self._buffers.clear()
        for event in self._events:
            attempt("aclrtDestroyEvent", acl.aclrtDestroyEvent, event)
        self._events.clear()
        if self._gate and self._gate[1].value:
            attempt("aclrtDestroyNotify", acl.aclrtDestroyNotify, self._gate[1])
        for stream in streams:
            attempt("aclrtDestroyStream", acl.aclrtDestroyStream, stream)
        self.stream, self._gate = 0, None
        attempt("aclrtResetDevice", acl.aclrtResetDevice, self.device)
        attempt("aclFinalize", acl.aclFinalize)
        self.acl = None
        if failures:
            raise failures[0]


def operator_library(operator_lib: str | None, env: dict[str, str] | None = None) -> Path:
    """--operator-lib, else ASCEND_OPS_BLAS_LIB, else the CMake output of operators/ascend."""
    env = os.environ if env is None else env
    return Path(operator_lib or env.get("ASCEND_OPS_BLAS_LIB") or DEFAULT_OPERATOR_LIB).resolve()


def open(device: int = 0, operator_lib: str | None = None, **_: Any) -> NpuBackend:  # noqa: A001
    """The npu backend on `device`; BackendUnavailable (one line) when CANN, the device or the library is missing."""
    os.environ.setdefault(LOG_FLUSH_ENV, "0")
    acl = load_acl()
    library = operator_library(operator_lib)
    if not library.is_file():
        raise BackendUnavailable(f"npu backend: operator library {library} does not exist (build it: docs/npu.md)")
    try:
        return NpuBackend(acl, device, library)
    except AclError as exc:
        raise BackendUnavailable(f"npu backend: {exc} (device {device})") from exc
    except (OSError, AttributeError, aclblas_lib.AclblasError) as exc:
        raise BackendUnavailable(f"npu backend: cannot use {library}: {exc}") from exc
