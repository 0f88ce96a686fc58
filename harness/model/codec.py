"""The one JSON codec of a run's evidence: results.jsonl, run.json, report.json and the history's meta, record and
samples columns all hold RFC 8259 JSON, which any parser reads.

The contract: a non-finite float is written as the string "NaN", "Infinity" or "-Infinity" (the spellings Python's
`float()` reads back), so an Inf max_abs_error stays apart from a NaN one instead of collapsing to null; numpy
scalars and arrays become plain numbers and lists, tuples lists, sets and frozensets sorted lists (a row's params
may hold one), anything else its `str()`. `loads` also reads the bare `NaN` tokens histories written before this
contract hold. Which strings become floats again is the reader's business (harness.store.stored): only in the measured
parts of a record, so a table cell that says "NaN" stays text.

Messages between the processes of one run (worker -> judge, judge -> runner) go through `message`: the same
conversions, but non-finite floats stay Python's NaN / Infinity tokens, since their only reader is this harness's
`json.loads` and the judge's checks on arrival name a non-finite figure as such.
"""
from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

#: The strings that stand for non-finite floats, and the floats they stand for.
NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def strict(obj: Any) -> Any:
    """A copy of obj that `json.dumps(allow_nan=False)` accepts, spelled as the module docstring says."""
    if isinstance(obj, dict):
        return {str(k): strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((strict(v) for v in obj), key=str)
    if isinstance(obj, np.ndarray):
        return strict(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if math.isfinite(x):
            return x
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if obj is None or isinstance(obj, str):
        return obj
    return str(obj)


def dumps(obj: Any, indent: int | None = None) -> str:
    """RFC JSON text of obj (non-ASCII kept as is: case descriptions may be Chinese)."""
    return json.dumps(strict(obj), allow_nan=False, ensure_ascii=False, indent=indent)


def plain(obj: Any) -> Any:
    """json.dumps's `default` for messages: numpy values as numbers and lists, sets as sorted lists, anything else
    its str()."""
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=str)
    for attr in ("tolist", "item"):
        if hasattr(obj, attr):
            return getattr(obj, attr)()
    return str(obj)


def message(obj: Any) -> bytes:
    """A message between the processes of one run, as the bytes sent (see the module docstring)."""
    return json.dumps(obj, default=plain).encode()


def loads(text: str | bytes) -> Any:
    """The value of a JSON text; ValueError (json.JSONDecodeError) when it is not one, RecursionError when it nests
    deeper than the parser goes."""
    return json.loads(text)


def finite_or_not(value: Any) -> Any:
    """A value with the non-finite strings turned back into floats, everywhere inside it (for measured values)."""
    if isinstance(value, str):
        return NON_FINITE.get(value, value)
    if isinstance(value, dict):
        return {k: finite_or_not(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite_or_not(v) for v in value]
    return value
