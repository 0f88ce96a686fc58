"""What `harness run` and the pytest plugin check of every table before its first row runs.

A table is refused (exit 3, nothing run) for its header's errors (harness.tables.header: an unknown, duplicate or
missing required column, an operator that cannot be told) and, unless `lenient`, for every cell the harness would
read otherwise than the ops-blas frame does (`Diagnostic.misread`: a byte order mark, a fill extension the table
does not declare): a run must judge the table its author's frame judges. Everything else `harness lint` says is
printed as the run starts and the run goes on; a row the harness cannot run as written is that row's ERROR.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from typing import TextIO

from harness.tables import header
from harness.tables.reader import ERROR, Diagnostic, Table, read_table
from harness.tables.lint import lint_cells, unimplemented

#: How many findings, and how many refusals, of one table are printed; `harness lint` prints every one.
SHOWN = 10


def check(path: str, operator: str | None = None,
          lenient: bool = False) -> tuple[Table, str | None, list[Diagnostic], list[Diagnostic]]:
    """(table, its operator, refusals, findings), each list in file order. Raises TableError for a file that cannot
    be a table at all and OSError for one that cannot be read."""
    table = read_table(str(path))
    op, head = header.resolve(table, operator)
    cells = lint_cells(table, op)
    refuse = [d.misread and not lenient for d in cells]
    refusals = [d for d in head if d.severity == ERROR] + [replace(d, severity=ERROR)
                                                           for d, no in zip(cells, refuse) if no]
    findings = [d for d in head if d.severity != ERROR] + [d for d, no in zip(cells, refuse) if not no]
    if (skipped := unimplemented(table, op)) is not None:
        findings.append(skipped)
    return table, op, _in_order(refusals), _in_order(findings)


def check_all(paths: list[str], operator: str | None = None, lenient: bool = False, out: TextIO | None = None,
              err: TextIO | None = None) -> list[tuple[Table, str | None]] | None:
    """Every table checked, its findings printed to `out` and its refusals to `err` (at most SHOWN lines of each
    per table); the tables with their operators, or None when any is refused. The streams default to sys.stdout
    and sys.stderr as they are at the call."""
    out, err = out or sys.stdout, err or sys.stderr
    checked, refused, misread = [], 0, 0
    for path in paths:
        table, op, refusals, findings = check(path, operator, lenient)
        _print(findings, path, "finding(s)", out)
        _print(refusals, path, "error(s)", err)
        refused += len(refusals)
        misread += sum(d.misread for d in refusals)
        checked.append((table, op))
    if refused:
        why = (f"; {misread} of them where the harness would read a row otherwise than its ops-blas frame "
               "(--lenient runs them, as warnings)") if misread else ""
        print(f"harness run: {refused} error(s) in the tables{why}; nothing run (exit 3)", file=err)
        return None
    return checked


def _print(found: list[Diagnostic], path: str, what: str, out: TextIO) -> None:
    for diag in found[:SHOWN]:
        print(diag, file=out)
    if len(found) > SHOWN:
        print(f"{path}: ... {len(found) - SHOWN} more {what} (`harness lint {path}` prints them all)", file=out)


def _in_order(found: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(found, key=lambda d: (d.line, d.column))
