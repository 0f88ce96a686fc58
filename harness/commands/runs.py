"""`harness runs`: the runs in the history, newest first (id, time, commit, dirty, backend, hardware, summary),
so `harness compare` can be given an id, a commit, `latest` or `previous`."""
from __future__ import annotations

import argparse
import json
import sqlite3
import sys

from harness.cli import EXIT_ENV, EXIT_INSUFFICIENT, EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list the runs in the history", description=__doc__)
    p.add_argument("--history", default="reports/history.sqlite",
                   help="run history: an SQLite file, or a postgresql://user@host/db URL shared by every host")
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

    from harness.history import History

    history = History(args.history)
    try:
        if not history.exists():
            print(f"harness runs: no history database at {history.path}", file=sys.stderr)
            return EXIT_ENV
        runs = history.run_list(args.limit or None)
    except sqlite3.Error as exc:
        print(f"harness runs: --history {history.path}: {exc}", file=sys.stderr)
        return EXIT_ENV
    if args.json:
        print(json.dumps(runs, indent=1))
    elif runs:
        print(tabulate([[r["run_id"], r["started"], (r["commit"] or "")[:12], "dirty" if r["dirty"] else "",
                         r["backend"], r["hardware"], summary_text(r["summary"])] for r in runs],
                       headers=["run", "started", "commit", "dirty", "backend", "hardware", "summary"],
                       tablefmt="github"))
    else:
        print(f"no runs in {history.path}")
    return EXIT_OK if runs else EXIT_INSUFFICIENT
