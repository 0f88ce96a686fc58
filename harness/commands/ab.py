"""`harness ab REV_A REV_B [CSV ...]`: build the CPU twin at two revisions, time every perf row with A and B
samples interleaved, record both runs in the history and print the comparison. `--define-b NAME=VALUE` passes
build defines to side B only (`harness ab HEAD HEAD --define-b TWIN_SLOWDOWN_PCT=5` injects a 5% slowdown).
Exit 1 on any REGRESSION, 2 when every row is INCONCLUSIVE (or none was timed), 3 when it cannot run."""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from harness.exitcodes import Exit
from harness.options import (add_history_option, add_select_option, add_timeout_option, default_tables,
                             non_negative_int, number, positive_float, positive_int, probability)
from harness.perf.compare import MIN_EFFECT, PAIRED_MIN_EFFECT
from harness.perf.timing import MIN_ROUNDS
from harness.settings import from_options

#: `harness ab`'s rounds per row (harness.perf.ab): chosen with benchmarks/compare_calibration.py --ab-runs.
AB_ROUNDS = 10
#: Samples per side and row over all rounds: a round of a 60 us row takes its 400 pairs in ~50 ms, well within
#: its share of the time cap; more pairs per round is what narrows each round's shift (docs/comparing.md).
AB_MAX_SAMPLES = 4000


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ab", help="interleaved A/B timing of the operators at two revisions", description=__doc__)
    p.add_argument("rev_a", help="git revision of side A (the base)")
    p.add_argument("rev_b", help="git revision of side B (the head)")
    p.add_argument("csv", nargs="*", help="case tables (default: every *_test.csv in cases/)")
    add_select_option(p)
    p.add_argument("--define-a", action="append", default=[], metavar="NAME=VALUE", help="build define, side A")
    p.add_argument("--define-b", action="append", default=[], metavar="NAME=VALUE", help="build define, side B")
    p.add_argument("--threshold", type=positive_float, default=0.05,
                   help="relative change that matters (default 0.05)")
    p.add_argument("--alpha", type=probability, default=0.05, help="false-discovery rate across rows (default 0.05)")
    p.add_argument("--min-effect", type=number(float, 0), default=None,
                   help=f"noise floor: REGRESSION needs the whole CI of the change above it (default "
                        f"{PAIRED_MIN_EFFECT} with {MIN_ROUNDS} or more rounds, where placement is in the rounds' "
                        f"spread, else {MIN_EFFECT})")
    add_history_option(p)
    p.add_argument("--report-dir", default="reports", help="each side's reports land in REPORT_DIR/<run_id>/")
    p.add_argument("--timing-mode", default="sync", choices=("sync", "steady"),
                   help="sync: one synchronised call per sample (task-book Avg time); steady: back-to-back calls")
    p.add_argument("--warmup", type=non_negative_int, default=10, help="untimed calls per side before the samples")
    p.add_argument("--min-samples", type=number(int, 2), default=None,
                   help="samples per side at least (default: --max-samples, so every round takes its share of "
                        "samples or of the time cap: its paired differences, not its own CI, are the evidence)")
    p.add_argument("--max-samples", type=positive_int, default=AB_MAX_SAMPLES,
                   help=f"samples per side at most, all rounds together (default {AB_MAX_SAMPLES})")
    p.add_argument("--max-time", type=positive_float, default=2.0, help="time cap in seconds per row, both sides together")
    p.add_argument("--rounds", type=positive_int, default=AB_ROUNDS,
                   help=f"rounds per row, each in a fresh worker process, sharing the samples and the time cap "
                        f"(default {AB_ROUNDS}; below {MIN_ROUNDS} the evidence is one process's samples)")
    add_timeout_option(p)
    p.set_defaults(func=run)


def parse_defines(items: list[str]) -> dict[str, str]:
    """NAME=VALUE (or bare NAME, meaning 1) as a dict; raises ValueError on a malformed item."""
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        if not name.isidentifier():
            raise ValueError(f"bad define {item!r}: expected NAME=VALUE")
        out[name] = value or "1"
    return out


def run(args: argparse.Namespace) -> int:
    from harness.perf.ab import AbError, run_ab
    from harness.perf.compare import compare_runs, exit_code, format_table
    from harness.store.history import History
    from harness.perf.timing import TimingConfig

    try:
        defines_a, defines_b = parse_defines(args.define_a), parse_defines(args.define_b)
        config = TimingConfig(mode=args.timing_mode, warmup=args.warmup,
                              min_samples=args.max_samples if args.min_samples is None else args.min_samples,
                              max_samples=args.max_samples, max_time_s=args.max_time,
                              warmup_max_time_s=args.max_time / 2, rounds=args.rounds)
    except ValueError as exc:
        print(f"harness ab: {exc}", file=sys.stderr)
        return Exit.ENV

    tables = args.csv or default_tables()
    missing = [t for t in tables if not Path(t).is_file()]
    if not tables or missing:
        print(f"harness ab: no such case table: {', '.join(missing) or 'cases/*_test.csv'}", file=sys.stderr)
        return Exit.ENV
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False)
    if top.returncode != 0:
        print("harness ab: not inside a git repository", file=sys.stderr)
        return Exit.ENV
    try:
        a, b = run_ab(args.rev_a, args.rev_b, tables, args.select, defines_a, defines_b, config,
                      History(args.history), Path(top.stdout.strip()), Path(args.report_dir),
                      progress=lambda line: print(line, flush=True), settings=from_options(args, timed=False))
    except AbError as exc:
        print(f"harness ab: {exc}", file=sys.stderr)
        return Exit.ENV
    floors = ((MIN_EFFECT, PAIRED_MIN_EFFECT) if args.min_effect is None else (args.min_effect, args.min_effect))
    df = compare_runs(a.records, b.records, args.threshold, args.alpha, floors[0], interleaved=True,
                      paired_min_effect=floors[1])
    print(f"A: {a.rev} ({a.commit[:12]}) {a.defines or ''} run {a.run_id}")
    print(f"B: {b.rev} ({b.commit[:12]}) {b.defines or ''} run {b.run_id}")
    print(format_table(df))
    return exit_code(df)
