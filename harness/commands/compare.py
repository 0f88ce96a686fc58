"""`harness compare BASE HEAD`: per-row performance comparison of two runs (run ids, report.json paths or git
revisions). Exit 1 on any REGRESSION, 3 when it refuses (incompatible runs without --force) or cannot find a
run, 2 when every row is INCONCLUSIVE, else 0."""
from __future__ import annotations

import argparse
import sys

from harness.cli import EXIT_ENV
from harness.compare import MIN_EFFECT


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare the performance of two runs", description=__doc__)
    p.add_argument("base", help="run id, report.json path or git revision")
    p.add_argument("head", help="run id, report.json path or git revision")
    p.add_argument("--threshold", type=float, default=0.05,
                   help="SAME needs the whole CI of the change inside +-threshold (default 0.05)")
    p.add_argument("--alpha", type=float, default=0.05, help="false-discovery rate across rows (default 0.05)")
    p.add_argument("--min-effect", type=float, default=MIN_EFFECT,
                   help=f"noise floor: REGRESSION needs the whole CI of the change above it (default {MIN_EFFECT})")
    p.add_argument("--force", action="store_true", help="compare even when tables, backends or timing modes differ")
    p.add_argument("--history", default="reports/history.sqlite", help="SQLite run history")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.compare import compare_runs, compatibility_problems, exit_code, format_table, resolve_run
    from harness.history import History

    history = History(args.history)
    try:
        base_meta, base = resolve_run(args.base, history)
        head_meta, head = resolve_run(args.head, history)
    except LookupError as exc:
        print(f"harness compare: {exc.args[0]}", file=sys.stderr)
        return EXIT_ENV
    problems = compatibility_problems(base_meta, head_meta)
    for problem in problems:
        print(f"harness compare: {problem}", file=sys.stderr)
    if problems and not args.force:
        print("harness compare: refusing to compare (use --force to compare anyway)", file=sys.stderr)
        return EXIT_ENV
    df = compare_runs(base, head, args.threshold, args.alpha, args.min_effect)
    print(f"base: {base_meta.get('run_id')} ({str(base_meta.get('commit', '?'))[:12]})   "
          f"head: {head_meta.get('run_id')} ({str(head_meta.get('commit', '?'))[:12]})   "
          f"threshold {args.threshold:.1%}, BH alpha {args.alpha}")
    print(format_table(df))
    return exit_code(df)
