"""`harness history [--case NAME]`: per-commit trend of one case (timing and precision figures), or without
--case each commit's totals, from the SQLite run history."""
from __future__ import annotations

import argparse
import math
import sqlite3
import sys
from pathlib import Path

from harness.exitcodes import Exit


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("history", help="per-commit trend from the run history", description=__doc__)
    p.add_argument("--case", help="case name (e.g. TC_PF_001); without it, totals per commit")
    p.add_argument("--history", default="reports/history.sqlite", help="SQLite run history")
    p.set_defaults(func=run)


def _cell(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return value


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from harness.history import History

    if not Path(args.history).is_file():
        print(f"harness history: no history database at {args.history}", file=sys.stderr)
        return Exit.ENV
    try:
        df = History(args.history).trend(args.case)
    except sqlite3.Error as exc:
        print(f"harness history: --history {args.history}: {exc}", file=sys.stderr)
        return Exit.ENV
    if df.empty:
        print(f"no recorded rows{f' for case {args.case}' if args.case else ''} in {args.history}")
        return Exit.INSUFFICIENT
    if "change_vs_prev" in df:
        df["change_vs_prev"] = [f"{c:+.2%}" if isinstance(c, float) and math.isfinite(c) else ""
                                for c in df["change_vs_prev"]]
    rows = [[_cell(v) for v in row] for row in df.itertuples(index=False)]
    print(tabulate(rows, headers=list(df.columns), tablefmt="github", floatfmt=".4g"))
    return Exit.OK
