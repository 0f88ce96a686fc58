"""`harness report RUN`: rebuild every report of a run (report.json, results.csv, report.md, report.html).

RUN is a run directory holding results.jsonl (reports/<run_id>/; its meta comes from run.json, written when the
run started, so a run that crashed or was killed can still be reported), a results.jsonl or report.json path, or a
run id in the history (`harness runs` lists them; reports are written to reports/<run_id>/ beside the history).
Useful after a crash, after a report template changed, or to report a run recorded on another machine. Exit codes
are the run's own by the rule `harness run` applies (0, 1, 2: harness.model.record.outcome); 3 when RUN is no run or its
files are damaged (one `file:line: what` line, harness.store.stored).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.model.exitcodes import Exit
from harness.options import add_history_option


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="rebuild a run's reports from its results.jsonl or the history",
                       description=__doc__)
    p.add_argument("run", metavar="RUN", help="run directory (with results.jsonl), results.jsonl path, or run id")
    add_history_option(p)
    p.add_argument("--out", metavar="DIR", help="write the reports here instead (default: the run's own directory)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness import reports
    from harness.store.history import History
    from harness.model.record import outcome, summarize
    from harness.reports.overview import outcome_line
    from harness.flows.session import why
    from harness.store.stored import BadRun, ordered, read

    history = History(args.history)
    try:
        meta, records, out = read(args.run, history)
    except BadRun as exc:
        print(f"harness report: {exc}", file=sys.stderr)
        return Exit.ENV
    finally:
        history.close()
    records = ordered(meta, records)
    out = Path(args.out) if args.out else out
    try:
        out.mkdir(parents=True, exist_ok=True)
        paths = reports.write_all(out, meta, records)
    except OSError as exc:
        print(f"harness report: cannot write {out}: {why(exc)}", file=sys.stderr)
        return Exit.ENV
    print(f"run {meta['run_id']}{' (interrupted)' if meta['interrupted'] else ''}: "
          f"{outcome_line(summarize(records), meta['settings']['accept_disputed'])}")
    for kind, path in paths.items():
        print(f"{kind:>4}: {path}")
    code, why_insufficient = outcome(records, meta)
    if why_insufficient:
        print(why_insufficient)
    return code
