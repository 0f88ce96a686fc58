"""`harness lint CSV...`: check case tables the way the C++ frame reads them; compiler-style diagnostics."""
from __future__ import annotations

import argparse
import sys

from harness.options import add_operator_option
from harness.model.exitcodes import Exit


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("lint", help="check case tables; file:line:column diagnostics",
                              description=__doc__.splitlines()[0])
    p.add_argument("csv", nargs="+", metavar="CSV", help="case tables (*_test.csv)")
    add_operator_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.tables import header
    from harness.tables.lint import lint_rows, unimplemented
    from harness.tables.reader import ERROR, NOTE, TableError, read_table

    errors = warnings = notes = files = 0
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
        op = header.resolve(table, args.operator)[0]
        for diag in filter(None, [unimplemented(table, op), *lint_rows(table, op)]):
            print(diag)
            errors += diag.severity == ERROR
            notes += diag.severity == NOTE
            warnings += diag.severity not in (ERROR, NOTE)
    print(f"{files} file(s) checked: {errors} error(s), {warnings} warning(s)" + (f", {notes} note(s)" if notes
                                                                                  else ""))
    if missing:
        return Exit.ENV
    return Exit.FAIL if errors or warnings else Exit.OK
