"""`harness merge DIR...`: one run from the report directories of `harness run --shard i/N` runs (any order): one
report and one history run, as if a single run had run every row. Refuses shards of different inputs, commits or
shard counts, and a row present twice (exit 3); missing shards are named in a warning and in the report's meta
(`missing_shards`); a damaged shard file is one `file:line: what` line, exit 3. Exit code by `harness run`'s
rule for the merged run (harness.model.record.outcome)."""
from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from harness.model.exitcodes import Exit
from harness.options import add_history_option


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("merge", help="merge the reports of sharded runs into one run", description=__doc__)
    p.add_argument("shards", nargs="+", type=Path, help="report directories of the shards (REPORT_DIR/<run_id>/)")
    p.add_argument("--report-dir", default="reports", help="the merged report lands in REPORT_DIR/<run_id>/")
    add_history_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.store.history import History
    from harness.model.record import outcome
    from harness.flows.session import Session
    from harness.run.shard import MergeError, load_shard, merge
    from harness.store.stored import BadRun

    try:
        meta, records = merge([load_shard(d) for d in args.shards])
    except (MergeError, BadRun) as exc:
        print(f"harness merge: {exc}", file=sys.stderr)
        return Exit.ENV
    if meta["missing_shards"]:
        print(f"harness merge: warning: shards {', '.join(meta['missing_shards'])} not given: the merged run lacks "
              "their rows", file=sys.stderr)
    session = Session(History(args.history), Path(args.report_dir) / meta["run_id"], meta)
    try:
        session.start()
        for rec in records:
            session.record(rec)
        paths = session.finish()  # the meta says whether a shard was interrupted; no signal stopped this merge
    except (OSError, sqlite3.Error) as exc:
        return session.fail(exc)
    print(f"merged {len(args.shards)} shard(s), {len(records)} rows into run {meta['run_id']}")
    print(f"report: {paths['md']}")
    code, why_insufficient = outcome(records, meta)
    if why_insufficient:
        print(why_insufficient)
    return code
