"""The floating-point control state of a process: what an operator must leave as it found it.

An operator library built with `-ffast-math` sets DAZ/FTZ in MXCSR when it is loaded (gcc links crtfastmath.o into
it); a call may change the rounding mode or unmask exceptions. Any of these persists into every later row of the
process, so the sandbox reads the state before and after each call and charges a change to the row that made it.
Read and restored through the C library's fegetenv/fesetenv (the x87 control word and MXCSR on x86-64, FPCR on
AArch64); the sticky exception flags are not control state and are ignored.
"""
from __future__ import annotations

import ctypes
import platform

_LIBM = ctypes.CDLL("libm.so.6")
_ENV_BYTES = 64  # >= sizeof(fenv_t) on every glibc target
_MACHINE = platform.machine()

_MXCSR_BITS = {0x8000: "FTZ (flush to zero)", 0x0040: "DAZ (denormals are zero)"}
_ROUNDING = {0: "to nearest", 1: "down", 2: "up", 3: "toward zero"}
_EXCEPTIONS = ["invalid", "denormal", "divide-by-zero", "overflow", "underflow", "inexact"]


def _raw() -> bytes:
    env = ctypes.create_string_buffer(_ENV_BYTES)
    _LIBM.fegetenv(env)
    return env.raw


def read() -> dict[str, int]:
    """The control state: {"x87": control word, "mxcsr": MXCSR without its flag bits} on x86-64, {"fpcr": ...} on
    AArch64, {} where the layout is not known."""
    raw = _raw()
    if _MACHINE in ("x86_64", "AMD64"):
        return {"x87": int.from_bytes(raw[0:2], "little"),
                "mxcsr": int.from_bytes(raw[28:32], "little") & ~0x3F}
    if _MACHINE in ("aarch64", "arm64"):
        return {"fpcr": int.from_bytes(raw[0:4], "little")}
    return {}


def restore(saved: dict[str, int]) -> None:
    """Put the control state back (the default environment first, then the saved control bits)."""
    if not saved:
        return
    env = ctypes.create_string_buffer(_raw(), _ENV_BYTES)
    if "mxcsr" in saved:
        flags = int.from_bytes(env.raw[28:32], "little") & 0x3F
        env[0:2] = saved["x87"].to_bytes(2, "little")
        env[28:32] = (saved["mxcsr"] | flags).to_bytes(4, "little")
    elif "fpcr" in saved:
        env[0:4] = saved["fpcr"].to_bytes(4, "little")
    _LIBM.fesetenv(env)


def describe(before: dict[str, int], after: dict[str, int]) -> list[str]:
    """One phrase per control setting that differs."""
    out = []
    if "mxcsr" in before:
        b, a = before["mxcsr"], after["mxcsr"]
        for bit, name in _MXCSR_BITS.items():
            if (a ^ b) & bit:
                out.append(f"{'set' if a & bit else 'cleared'} {name} in MXCSR")
        if (a ^ b) & 0x6000:
            out.append(f"changed the SSE rounding mode to {_ROUNDING[(a >> 13) & 3]} (MXCSR)")
        unmasked = [e for i, e in enumerate(_EXCEPTIONS) if (b >> (7 + i)) & 1 and not (a >> (7 + i)) & 1]
        masked = [e for i, e in enumerate(_EXCEPTIONS) if not (b >> (7 + i)) & 1 and (a >> (7 + i)) & 1]
        if unmasked:
            out.append(f"unmasked floating-point exceptions ({', '.join(unmasked)}: feenableexcept?)")
        if masked:
            out.append(f"masked floating-point exceptions ({', '.join(masked)})")
        rest = (a ^ b) & ~(0x8000 | 0x0040 | 0x6000 | 0x1F80)
        if rest:
            out.append(f"changed MXCSR from {b:#06x} to {a:#06x}")
        if before["x87"] != after["x87"]:
            out.append(f"changed the x87 control word from {before['x87']:#06x} to {after['x87']:#06x}")
    elif before != after:
        out.append(f"changed the floating-point control register ({before} -> {after})")
    return out


def changes(before: dict[str, int]) -> list[str]:
    """What changed since `before` (each phrase), the state put back as it was."""
    now = read()
    if now == before:
        return []
    restore(before)
    return describe(before, now)
