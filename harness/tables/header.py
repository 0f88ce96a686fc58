"""A table's operator and its header, checked before any row is read for a run.

The ops-blas frames read every cell with `ReadMap(map, "m", "0")`: a column the header lacks silently takes its
default, so a csymm table that says `M` for `m` runs every row with m = 0 and passes. The harness is stricter than
the frame: a column its operator does not read, a column named twice, or a missing column without which a row means
nothing (the operator's `REQUIRED` and the base ones) is an error at `file:line:column`, with the nearest known name;
a missing column the frame would default is said once, with the default each row takes (`DEFAULTS`).

The operator is the one the file name names (`<op>_test.csv`, the ops-blas convention, an operator this harness
lacks included: its rows are skipped), else the one whose columns the header fits; a header two operators share
(csymm and ssymm both read side, uplo, m, n...) is an error listing them, and `--operator NAME` decides for any table.
"""
from __future__ import annotations

import difflib
from types import ModuleType

from harness.model import operators as ops
from harness.tables.cases import BASE_DEFAULTS, BASE_REQUIRED, ERROR, NOTE, Diagnostic, Table, op_for_table


def required(spec: ModuleType) -> tuple[str, ...]:
    return (*BASE_REQUIRED, *spec.REQUIRED)


def defaults(spec: ModuleType) -> dict[str, str]:
    return {**BASE_DEFAULTS, **spec.DEFAULTS}


def fits(header: list[str], spec: ModuleType) -> bool:
    """Every named column is one the operator reads, and every column it requires is there."""
    names = {name for name in header if name}
    return names <= set(spec.COLUMNS) and set(required(spec)) <= names


def nearest(name: str, known: list[str]) -> str | None:
    """The known column `name` most likely misspells (case first: `M` is `m`), or None."""
    by_lower = {k.lower(): k for k in known}
    if name.lower() in by_lower:
        return by_lower[name.lower()]
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[close[0]] if close else None


def check(table: Table, spec: ModuleType) -> list[Diagnostic]:
    """The header's errors for `spec`'s rows, then one note naming the defaults its missing columns take."""
    def error(col: int, message: str) -> Diagnostic:
        return Diagnostic(table.path, table.header_line, col, ERROR, message)

    found, seen = [], {}
    for col, name in enumerate(table.header, start=1):
        if not name:
            continue  # cases.read_table warns about an empty column name
        if name in seen:
            found.append(error(col, f"duplicate column {name!r} (also column {seen[name]}): the frame keeps the "
                                    "last non-empty cell, so one of them is silently ignored"))
        elif name not in spec.COLUMNS:
            near = nearest(name, [c for c in spec.COLUMNS if c not in table.header])
            found.append(error(col, f"unknown column {name!r} (did you mean {near!r}?)" if near else
                                    f"unknown column {name!r}: {spec.NAME} reads no column of that name"))
        seen.setdefault(name, col)
    end = len(table.header) + 1
    for name in required(spec):
        if name not in seen:
            found.append(error(end, f"missing column {name!r}: a {spec.NAME} row means nothing without it (the "
                                    "frame would silently give every row its default)"))
    lacking: dict[str, list[str]] = {}  # default -> the missing columns that take it
    for name, value in defaults(spec).items():
        if name not in seen:
            lacking.setdefault(value, []).append(name)
    if lacking:
        said = "; ".join(f"{', '.join(names)} = {value}" for value, names in lacking.items())
        found.append(Diagnostic(table.path, table.header_line, end, NOTE, "columns the header lacks take the "
                                f"frame's default in every row: {said}"))
    return found


def resolve(table: Table, operator: str | None = None) -> tuple[str | None, list[Diagnostic]]:
    """(the table's operator, its header's diagnostics). The operator is None where it cannot be told (an error
    says why); an operator this harness does not implement is returned without a header check."""
    op = operator or op_for_table(table)
    if op is not None:
        spec = ops.get(op)
        return op, ([] if spec is None else check(table, spec) + _belongs_elsewhere(table, op))
    fitting = [name for name in ops.names() if fits(table.header, ops.get(name))]
    if len(fitting) == 1:
        return fitting[0], check(table, ops.get(fitting[0]))
    def error(message: str) -> Diagnostic:
        return Diagnostic(table.path, table.header_line, 1, ERROR, message)

    if fitting:
        return None, [error(f"which operator? the header fits {' and '.join(fitting)}: name the file "
                            "<op>_test.csv or pass --operator NAME")]
    errors = {name: [d for d in check(table, ops.get(name)) if d.severity == ERROR] for name in ops.names()}
    closest = min(errors, key=lambda name: len(errors[name]))
    return None, [error(f"which operator? the header fits none this harness implements ({', '.join(ops.names())}); "
                        f"read as the closest, {closest}:"), *errors[closest]]


def _belongs_elsewhere(table: Table, op: str) -> list[Diagnostic]:
    """An error where the header does not fit the operator the table was given but fits others (a csymm_test.csv
    with the ssymm header): the header is then most likely right and the name wrong."""
    if fits(table.header, ops.get(op)):
        return []
    others = [name for name in ops.names() if name != op and fits(table.header, ops.get(name))]
    if not others:
        return []
    return [Diagnostic(table.path, table.header_line, 1, ERROR, f"the header is {' and '.join(others)}'s, not "
                       f"{op}'s: rename the file or pass --operator {others[0]}")]

