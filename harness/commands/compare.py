"""`harness compare BASE HEAD`: per-row performance comparison of two runs, each named by an operator revision as
the history recorded it (`harness runs` shows them first: --operator-rev, `git describe` or commit of the operator's
checkout, library sha256 prefix), an operator library's path (the newest run of that file's sha256), a run id,
`latest` / `previous`, a run directory, results.jsonl or report.json path, or a git revision of this harness. A name
that matches runs of two operator revisions is refused with the candidates (exit 3). A change of the harness between
the two runs is said on one line. Separate runs
are compared by their rounds; rows with only within-run evidence are at most SAME (see harness.perf.compare). Runs of
different row sets (a full run and a -k subset, one table and two) compare the rows both timed and name the rest.
Exit 1 on a REGRESSION (at least --fail-on), 3 when it refuses (the same run twice, incompatible runs without
--force, a damaged or no report: one `file:line: what` line) or cannot find a run, 2 when every row is
INCONCLUSIVE, else 0."""
from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from harness.model.exitcodes import Exit
from harness.options import add_history_option
from harness.model.settings import MIN_EFFECT


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare the performance of two runs", description=__doc__)
    p.add_argument("base", help="operator revision, operator library path, run id, latest/previous, run directory or "
                                "report.json path, or git revision of the harness")
    p.add_argument("head", help="the same kinds of name as BASE")
    p.add_argument("--threshold", type=float, default=0.05,
                   help="SAME needs the whole CI of the change inside +-threshold (default 0.05)")
    p.add_argument("--alpha", type=float, default=0.05, help="false-discovery rate across rows (default 0.05)")
    p.add_argument("--min-effect", type=float, default=MIN_EFFECT,
                   help=f"noise floor: REGRESSION needs the whole CI of the change above it (default {MIN_EFFECT})")
    p.add_argument("--fail-on", default=None, metavar="CHANGE",
                   help="exit 1 only for a REGRESSION whose estimated change is at least this (5%%, 0.05 or "
                        "change:5%%); default: any REGRESSION")
    p.add_argument("--force", action="store_true", help="compare even when tables, backends or timing modes differ")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON instead of the table")
    p.add_argument("--report-dir", help="also write compare.html, compare.md (+ compare.png) and compare.json here")
    add_history_option(p)
    p.set_defaults(func=run)


def ab_pair(base_meta: dict, head_meta: dict) -> bool:
    """The two sides of one `harness ab` run: their samples were interleaved in one process, so they are evidence."""
    ab = (base_meta.get("settings") or {}).get("ab") or {}
    return bool(ab) and ab.get("pair") == head_meta.get("run_id")


def run(args: argparse.Namespace) -> int:
    from harness.perf.compare import (PAIRED_MIN_EFFECT, compare_runs, compatibility_problems, exit_code,
                                      format_table, harness_change, parse_fail_on, resolve_run, row_differences,
                                      run_line, to_json, warnings)
    from harness.store.history import History

    def refuse(message: str) -> int:
        print(f"harness compare: {message}", file=sys.stderr)
        return Exit.ENV
    try:
        fail_on = parse_fail_on(args.fail_on) if args.fail_on is not None else 0.0
    except ValueError as exc:
        return refuse(str(exc))
    history = History(args.history)
    try:
        base_meta, base = resolve_run(args.base, history)
        head_meta, head = resolve_run(args.head, history)
    except LookupError as exc:  # harness.store.stored.BadRun too: a damaged run, one line
        return refuse(exc.args[0])
    except sqlite3.Error as exc:
        return refuse(f"{history.path}: {exc}")
    if base_meta.get("run_id") == head_meta.get("run_id"):
        return refuse(f"{args.base} and {args.head} are the same run ({base_meta.get('run_id')}); "
                      "compare two different runs (`harness runs` lists them)")
    if changed := harness_change(base_meta, head_meta):
        print(f"harness compare: {changed}", file=sys.stderr)
    problems = compatibility_problems(base_meta, head_meta)
    for problem in problems:
        print(f"harness compare: {problem}", file=sys.stderr)
    if problems and not args.force:
        return refuse("refusing to compare (use --force to compare anyway)")
    df = compare_runs(base, head, args.threshold, args.alpha, args.min_effect,
                      interleaved=ab_pair(base_meta, head_meta))
    differences = row_differences(base, head)
    if differences:
        print(f"harness compare: {differences}", file=sys.stderr)
    settings = {"threshold": args.threshold, "alpha": args.alpha, "min_effect": args.min_effect,
                "paired_min_effect": PAIRED_MIN_EFFECT, "fail_on": fail_on}
    if args.report_dir:
        from harness.reports.compare_report import write_compare

        paths = write_compare(Path(args.report_dir), df, base_meta, head_meta, settings)
        print(f"harness compare: wrote {', '.join(str(p) for p in paths.values())}", file=sys.stderr)
    if args.json:
        print(to_json(df, base_meta, head_meta, settings))
    else:
        print(run_line("base", base_meta))
        print(run_line("head", head_meta))
        print(f"threshold {args.threshold:.1%}, BH alpha {args.alpha}")
        print(format_table(df))
    for warning in warnings(df):
        print(f"harness compare: warning: {warning}", file=sys.stderr)
    return exit_code(df, fail_on)
