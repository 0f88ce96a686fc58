"""A worker's messages as the judge accepts them: exactly the fields the protocol names, each of its type, else
Malformed (the runner's CRASH: the operator wrote on its worker's pipe or patched the worker)."""
from __future__ import annotations

from typing import Any

from harness.run.sandbox import BackendInfo


class Malformed(ValueError):
    """A sandbox message that is not what the protocol says (the operator wrote on its worker's pipe or patched
    the worker)."""


def fields(payload: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """`payload` as a dict with exactly the keys of `spec`, each of its type (a tuple: any of them)."""
    if not isinstance(payload, dict) or set(payload) != set(spec):
        got = sorted(payload)[:8] if isinstance(payload, dict) else type(payload).__name__
        raise Malformed(f"expected the fields {sorted(spec)}, got {got}")
    for key, kind in spec.items():
        value = payload[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise Malformed(f"field {key!r} is {type(value).__name__}, expected "
                            f"{' or '.join(k.__name__ for k in kinds)}")
    return payload


def strings(value: Any, what: str, limit: int = 64) -> list[str]:
    if not isinstance(value, list) or len(value) > limit or not all(isinstance(v, str) for v in value):
        raise Malformed(f"{what}: expected a list of strings")
    return value


def backend_info(payload: Any) -> BackendInfo:
    """A sandbox's BackendInfo from its "ready" message: exactly these fields and types, else Malformed."""
    p = fields(payload, {"name": str, "api": str, "fenced": bool, "granule": int, "hardware": str,
                          "unsupported": dict})
    if not 1 <= p["granule"] <= 1 << 30 or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in p["unsupported"].items()):
        raise Malformed("bad backend description")
    return BackendInfo(**p)


def checked_timing(value: dict) -> dict:
    """A timing record from the sandbox, checked field by field (harness.perf.timing.checked_record)."""
    from harness.perf.timing import checked_record

    try:
        return checked_record(value)
    except ValueError as exc:
        raise Malformed(str(exc)) from None
