"""`harness merge DIR...`: one run from the report directories of `harness run --shard i/N` runs (any order): one
report and one history run, as if a single run had run every row. Refuses shards of different inputs, commits or
shard counts, and a row present twice (exit 3); missing shards are named in a warning and in the report's meta
(`missing_shards`). Exit code as `harness run`'s for the merged rows."""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from pathlib import Path

from harness.cli import EXIT_ENV


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("merge", help="merge the reports of sharded runs into one run", description=__doc__)
    p.add_argument("shards", nargs="+", type=Path, help="report directories of the shards (REPORT_DIR/<run_id>/)")
    p.add_argument("--report-dir", default="reports", help="the merged report lands in REPORT_DIR/<run_id>/")
    p.add_argument("--history", default="reports/history.sqlite",
                   help="run history: an SQLite file, or a postgresql://user@host/db URL shared by every "
                        "host")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness import reports
    from harness.commands.run import append_line
    from harness.history import History
    from harness.record import summarize
    from harness.reports.json_csv import strict
    from harness.shard import MergeError, load_shard, merge

    try:
        meta, records = merge([load_shard(d) for d in args.shards])
    except MergeError as exc:
        print(f"harness merge: {exc}", file=sys.stderr)
        return EXIT_ENV
    if meta["missing_shards"]:
        print(f"harness merge: warning: shards {', '.join(meta['missing_shards'])} not given: the merged run lacks "
              "their rows", file=sys.stderr)
    out_dir = Path(args.report_dir) / meta["run_id"]
    history = History(args.history)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        stream = os.open(out_dir / "results.jsonl", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            for rec in records:
                append_line(stream, json.dumps(strict(rec), allow_nan=False, ensure_ascii=False))
        finally:
            os.close(stream)
        history.start_run(meta)
        for rec in records:
            history.record(meta["run_id"], rec)
        history.finish_run(meta["run_id"], {**summarize(records), "interrupted": meta["interrupted"]})
        paths = reports.write_all(out_dir, meta, records)
    except (OSError, sqlite3.Error) as exc:
        print(f"harness merge: cannot write the merged run ({history.path}, {out_dir}): {exc}", file=sys.stderr)
        return EXIT_ENV
    print(f"merged {len(args.shards)} shard(s), {len(records)} rows into run {meta['run_id']}")
    print(f"report: {paths['md']}")
    return reports.exit_code(records)
