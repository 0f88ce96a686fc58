"""`harness lint CSV...`: check case tables the way the C++ frame reads them; compiler-style diagnostics."""
from __future__ import annotations

import argparse
import sys

from harness import ops
from harness.tables.cases import ERROR, TableError, op_for_table, read_table
from harness.exitcodes import Exit
from harness.tables.lint import lint_rows, unimplemented


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("lint", help="check case tables; file:line:column diagnostics",
                              description=__doc__.splitlines()[0])
    p.add_argument("csv", nargs="+", metavar="CSV", help="case tables (*_test.csv)")
    p.set_defaults(func=run)


def known_columns_for(op: str | None) -> set[str] | None:
    """The header an operator this harness implements reads; None (no unknown-column check) for other tables."""
    module = ops.get(op)
    return set(module.COLUMNS) if module is not None and hasattr(module, "COLUMNS") else None


def run(args: argparse.Namespace) -> int:
    errors = warnings = files = 0
    missing = False
    for path in args.csv:
        try:
            table = read_table(path)
        except OSError as exc:
            print(f"harness lint: {path}: {exc.strerror or exc}", file=sys.stderr)
            missing = True
            continue
        except TableError as exc:  # not a table at all (empty, binary...): named, and the other files still checked
            print(exc, file=sys.stderr)
            missing = True
            continue
        files += 1
        found = lint_rows(table, known_columns_for(op_for_table(table)))
        for diag in filter(None, [unimplemented(table), *found]):
            print(diag)
            errors += diag.severity == ERROR
            warnings += diag.severity != ERROR
    print(f"{files} file(s) checked: {errors} error(s), {warnings} warning(s)")
    if missing:
        return Exit.ENV
    return Exit.FAIL if errors or warnings else Exit.OK
