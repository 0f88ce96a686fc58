"""The reports' content, built once and rendered by both report.md (markdown.py) and report.html (html.py): sections
of paragraphs, bullet lists and tables, and how one value is shown in a cell (so both files show it alike).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd


#: Longest text cell shown in report.md / report.html; report.json and results.csv keep the whole text.
MAX_CELL_CHARS = 400
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def human_text(value: Any) -> Any:
    """A table cell fit for people: control characters (NUL, ESC ...) shown as \\xNN, long text cut with its length."""
    if not isinstance(value, str):
        return value
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", value)
    if len(text) > MAX_CELL_CHARS:
        text = f"{text[:MAX_CELL_CHARS]}… ({len(value)} characters; whole in report.json)"
    return text


@dataclass
class Table:
    """A titled table; cells are already display strings or numbers."""
    title: str
    headers: list[str]
    rows: list[list[Any]]


@dataclass
class Section:
    """One `##` section: a sequence of blocks, each a paragraph (str), a bullet list (list[str]) or a Table."""
    heading: str
    blocks: list[str | list[str] | Table] = field(default_factory=list)


def fmt(value: Any) -> str:
    """Compact display: 4 significant digits, integers as-is, empty for missing, NaN / inf for measured ones."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, bool):
        return "是" if value else "否"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.4g}"
    if isinstance(value, (list, tuple)):  # a run holds tuples where its stored copy has lists: one spelling for both
        return "[" + ", ".join(map(fmt, value)) + "]"
    return str(value)


def metric_cell(row: dict[str, Any], key: str) -> str:
    """A metric cell: `re 1 · im 0.995` for complex outputs (a bare `1/1` would read as a fraction), one value
    when both parts are equal, the plain value for real outputs."""
    real, imag = row.get(f"{key}_real"), row.get(f"{key}_imag")
    if present(real) or present(imag):
        return fmt(real) if fmt(real) == fmt(imag) else f"re {fmt(real)} · im {fmt(imag)}"
    return fmt(row.get(key))


def present(value: Any) -> bool:
    return value is not None and value is not pd.NA


def short_status(status: Any) -> str:
    """ACLBLAS_STATUS_SUCCESS -> SUCCESS: what a table column of statuses needs."""
    return fmt(status).removeprefix("ACLBLAS_STATUS_")
