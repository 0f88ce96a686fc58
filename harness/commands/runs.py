"""`harness runs`: the runs in the history, newest first (the operator's revision and library sha256 first, then
id, kind, time, the harness's commit, backend, hardware, summary), so `harness compare` can be given an operator
revision, a library, an id, a harness commit, `latest` or `previous` (all but an id name runs of kind `run` or
`pytest` only: ab, baseline and mutants runs are named by their id)."""
from __future__ import annotations

import argparse
import json
import sqlite3
import sys

from harness.model.exitcodes import Exit
from harness.options import add_history_option


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list the runs in the history", description=__doc__)
    add_history_option(p)
    p.add_argument("--limit", type=int, default=20, help="newest N runs (default 20; 0 for all)")
    p.add_argument("--json", action="store_true", help="one JSON list instead of the table")
    p.set_defaults(func=run)


def summary_text(summary: dict | None) -> str:
    if not summary:
        return "unfinished"
    parts = [f"{summary.get('total', 0)} rows", f"{summary.get('passed', 0)} passed"]
    parts += [f"{summary[k]} {k}" for k in ("failed", "errors", "crashed", "timeouts", "skipped") if summary.get(k)]
    return ", ".join(parts)


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from harness.store.history import History

    history = History(args.history)
    try:
        if not history.exists():
            print(f"harness runs: no history database at {history.path}", file=sys.stderr)
            return Exit.ENV
        runs = history.run_list(args.limit or None)
    except sqlite3.Error as exc:
        print(f"harness runs: --history {history.path}: {exc}", file=sys.stderr)
        return Exit.ENV
    if args.json:
        print(json.dumps(runs, indent=1))
    elif runs:
        print(tabulate([[r["operator_rev"] or "?", r["operator_sha256"][:12], r["run_id"], r["kind"], r["started"],
                         (r["commit"] or "")[:12] + ("+dirty" if r["dirty"] else ""), r["backend"], r["hardware"],
                         summary_text(r["summary"])] for r in runs],
                       headers=["operator rev", "library sha256", "run", "kind", "started", "harness commit",
                                "backend", "hardware", "summary"], tablefmt="github"))
    else:
        print(f"no runs in {history.path}")
    return Exit.OK if runs else Exit.INSUFFICIENT
