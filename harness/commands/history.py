"""`harness history [--case NAME]`: per-commit trend of one case (timing and precision figures), or without
--case each commit's totals, from the SQLite run history."""
from __future__ import annotations

import argparse
import math
import sqlite3
import sys

from harness.exitcodes import Exit
from harness.options import add_history_option


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("history", help="per-commit trend from the run history", description=__doc__)
    p.add_argument("--case", help="case name (e.g. TC_PF_001); without it, totals per commit")
    add_history_option(p)
    p.set_defaults(func=run)


def _cell(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return value


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from harness.history import History

    history = History(args.history)
    try:
        if not history.exists():
            print(f"harness history: no history database at {history.path}", file=sys.stderr)
            return Exit.ENV
        df = history.trend(args.case)
    except sqlite3.Error as exc:
        print(f"harness history: --history {history.path}: {exc}", file=sys.stderr)
        return Exit.ENV
    if df.empty:
        print(f"no recorded rows{f' for case {args.case}' if args.case else ''} in {history.path}")
        return Exit.INSUFFICIENT
    if "change_vs_prev" in df:
        df["change_vs_prev"] = [f"{c:+.2%}" if isinstance(c, float) and math.isfinite(c) else ""
                                for c in df["change_vs_prev"]]
    rows = [[_cell(v) for v in row] for row in df.itertuples(index=False)]
    print(tabulate(rows, headers=list(df.columns), tablefmt="github", floatfmt=".4g"))
    return Exit.OK
