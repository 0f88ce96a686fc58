"""`harness history [--case NAME] [--op OP]`: per-commit trend of one case (timing and precision figures), or
without --case each commit's totals per operator, from the run history.

A commit's figures are each row's newest result over all the commit's runs (`runs` counts them), so a small -k run
after a full one hides nothing. A case name such as TC_PF_0001 is a row in several operators' tables: each gets a
trend of its own, under a heading naming the operator and table (--op keeps one operator).
"""
from __future__ import annotations

import argparse
import math
import sqlite3
import sys

from harness.model import operators as ops
from harness.model.exitcodes import Exit
from harness.options import add_history_option


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("history", help="per-commit trend from the run history", description=__doc__)
    p.add_argument("--case", help="case name (e.g. TC_PF_0001); without it, totals per commit and operator")
    p.add_argument("--op", help=f"only this operator's rows ({', '.join(ops.names())}; default: every operator, "
                                "each apart)")
    add_history_option(p)
    p.set_defaults(func=run)


def _cell(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return value


def _table(df) -> str:
    from tabulate import tabulate

    rows = [[_cell(v) for v in row] for row in df.itertuples(index=False)]
    return tabulate(rows, headers=list(df.columns), tablefmt="github", floatfmt=".4g")


def run(args: argparse.Namespace) -> int:
    from harness.store.history import History

    history = History(args.history)
    try:
        if not history.exists():
            print(f"harness history: no history database at {history.path}", file=sys.stderr)
            return Exit.ENV
        df = history.trend(args.case, args.op)
    except sqlite3.Error as exc:
        print(f"harness history: --history {history.path}: {exc}", file=sys.stderr)
        return Exit.ENV
    if df.empty:
        what = " ".join(x for x in (f"for case {args.case}" if args.case else "",
                                    f"of operator {args.op}" if args.op else "") if x)
        print(f"no recorded rows{' ' + what if what else ''} in {history.path}")
        return Exit.INSUFFICIENT
    if not args.case:
        print(_table(df))
        return Exit.OK
    df["change_vs_prev"] = [f"{c:+.2%}" if isinstance(c, float) and math.isfinite(c) else ""
                            for c in df["change_vs_prev"]]
    groups = list(df.groupby(["op", "table"], sort=False))
    for i, ((op, table), part) in enumerate(groups):  # each headed by what it is a trend of
        print(("\n" if i else "") + f"{args.case} of {op} ({table}):")
        print(_table(part.drop(columns=["op", "table", "case_name"])))
    return Exit.OK
