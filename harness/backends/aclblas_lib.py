"""The ctypes launch shim for any library exporting the operators' C ABI (`operators/include/aclblas_abi.h`): the
CPU twin, a user's `--operator-lib`, and later the Ascend library through the `npu` backend.

Every function gets argtypes/restype, so ctypes converts and checks arguments instead of guessing: enums travel as
raw 32-bit ints (a table's 999 reaches the C validation unchanged), statuses come back as int32, host scalars are
pointers that may be None (NULL), device buffers are addresses (int) or None.
"""
from __future__ import annotations

import ctypes
from ctypes import POINTER, c_char_p, c_float, c_int, c_int32, c_int64, c_size_t, c_void_p

from harness.model.abi import Status


class AclblasComplex(ctypes.Structure):
    """`aclblasComplex`: 8 bytes, {float real, imag}, the layout of numpy complex64."""
    _fields_ = [("real", c_float), ("imag", c_float)]


_HANDLE = c_void_p
_STATUS = c_int32

#: The handle-management functions every library must export; operator symbols are bound on first use
#: (`function`), so a library lacking one operator still runs the others.
_REQUIRED = {
    "aclblasCreate": [POINTER(c_void_p)],
    "aclblasDestroy": [_HANDLE],
    "aclblasSetStream": [_HANDLE, c_void_p],
    "aclblasSetWorkspace": [_HANDLE, c_void_p, c_size_t],
}
#: ctypes spellings the operator packages use in their C signatures.
HANDLE, STATUS, ENUM, INT, INT64, PTR = _HANDLE, _STATUS, c_int32, c_int, c_int64, c_void_p
FLOAT_PTR, COMPLEX_PTR = POINTER(c_float), POINTER(AclblasComplex)

#: The CPU twin's extensions; a foreign library may lack any of them.
_EXTENSIONS = {
    "aclblasTwinGetWorkspaceStats": ([_HANDLE, POINTER(c_size_t), POINTER(c_size_t)], _STATUS),
    "aclblasTwinResetWorkspaceStats": ([_HANDLE], _STATUS),
    "aclblasTwinSetCoreCount": ([_HANDLE, c_int], _STATUS),
    "aclblasTwinGetLastMessage": ([_HANDLE], c_char_p),
}


class AclblasError(RuntimeError):
    """A handle-management call failed; carries the status."""

    def __init__(self, what: str, status: int):
        super().__init__(f"{what} returned {status}")
        self.status = status


class MissingSymbol(AttributeError):
    """The library does not export an operator's symbol: that operator's rows are skipped, not the library."""


def load_aclblas(path: str) -> ctypes.CDLL:
    """Load `path` and declare the handle functions; raises OSError when it cannot be loaded and AttributeError
    naming the first missing handle function. Operator symbols are declared lazily by `function`."""
    lib = ctypes.CDLL(str(path))
    for name, argtypes in _REQUIRED.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = _STATUS
    for name, (argtypes, restype) in _EXTENSIONS.items():
        if hasattr(lib, name):
            fn = getattr(lib, name)
            fn.argtypes = argtypes
            fn.restype = restype
    return lib


def function(lib: ctypes.CDLL, symbol: str, argtypes: list) -> ctypes._CFuncPtr:
    """`symbol` of `lib`, declared with `argtypes` and an int32 status; MissingSymbol when the library lacks it."""
    try:
        fn = getattr(lib, symbol)
    except AttributeError:
        raise MissingSymbol(f"{getattr(lib, '_name', 'the operator library')} does not export {symbol}") from None
    if fn.argtypes is None:
        fn.argtypes = argtypes
        fn.restype = _STATUS
    return fn


def has_extension(lib: ctypes.CDLL, name: str) -> bool:
    return name in _EXTENSIONS and hasattr(lib, name)


def create_handle(lib: ctypes.CDLL) -> int:
    handle = c_void_p(None)
    status = lib.aclblasCreate(ctypes.byref(handle))
    if status != Status.SUCCESS or not handle.value:
        raise AclblasError("aclblasCreate", status)
    return handle.value


def destroy_handle(lib: ctypes.CDLL, handle: int) -> None:
    status = lib.aclblasDestroy(handle)
    if status != Status.SUCCESS:
        raise AclblasError("aclblasDestroy", status)


def complex_value(value: complex | None) -> AclblasComplex | None:
    """A host aclblasComplex holding `value`, or None (NULL)."""
    return None if value is None else AclblasComplex(complex(value).real, complex(value).imag)


def float_value(value: float | None) -> c_float | None:
    """A host float holding `value`, or None (NULL)."""
    return None if value is None else c_float(value)


def scalar_pointer(value, make):
    """A pointer to a host scalar: a ctypes object is passed by reference (the caller checks afterwards that the
    operator left it alone), a Python number is converted, None is NULL."""
    if value is None:
        return None
    return ctypes.pointer(value if isinstance(value, (AclblasComplex, c_float)) else make(value))


#: The host-scalar pointer types of the C signatures, and how a Python number becomes the scalar each points to.
_SCALAR_MAKERS = {FLOAT_PTR: float_value, COMPLEX_PTR: complex_value}


def invoke(symbol: str, argtypes: list, lib: ctypes.CDLL, handle: int | None, *args) -> int:
    """`symbol` of `lib` called with (handle, *args), returning the raw status: the one call pattern of every
    operator's `invoke`. Host-scalar arguments (FLOAT_PTR / COMPLEX_PTR in the signature) may be Python numbers,
    ctypes scalars or None (NULL); device buffers are addresses or None."""
    values = [scalar_pointer(value, _SCALAR_MAKERS[kind]) if kind in _SCALAR_MAKERS else value
              for kind, value in zip(argtypes[1:], args, strict=True)]
    return function(lib, symbol, argtypes)(handle, *values)


def host_scalars(args, make=float_value) -> dict[str, object]:
    """alpha and beta of a BLAS-3 call as the host memory it points to (None = NULL), kept by the engine to check
    them afterwards; `make` is complex_value for complex operators."""
    return {"alpha": make(args.alpha), "beta": make(args.beta)}


def workspace_stats(lib: ctypes.CDLL, handle: int) -> tuple[int, int] | None:
    """(high-water bytes, bytes of the last call) from the twin extension; None when the library lacks it."""
    if not has_extension(lib, "aclblasTwinGetWorkspaceStats"):
        return None
    high, current = c_size_t(0), c_size_t(0)
    status = lib.aclblasTwinGetWorkspaceStats(handle, ctypes.byref(high), ctypes.byref(current))
    if status != Status.SUCCESS:
        raise AclblasError("aclblasTwinGetWorkspaceStats", status)
    return high.value, current.value


def last_message(lib: ctypes.CDLL, handle: int) -> str:
    """The twin's explanation of the last failure on `handle` ("" when the library lacks the extension)."""
    if not has_extension(lib, "aclblasTwinGetLastMessage"):
        return ""
    return (lib.aclblasTwinGetLastMessage(handle) or b"").decode(errors="replace")
