"""`harness ab`: time two operator libraries with samples interleaved on the same perf rows, record both runs in
the history (each with its operator's identity) and print the comparison. Three ways to name the two libraries,
one mechanism (harness.flows.ab):

  harness ab --lib-a OLD.so --lib-b NEW.so [CSV ...]           two builds of your operator, as files
  harness ab --src DIR --build 'CMD' --lib PATH REV_A REV_B [CSV ...]
                                                              your checkout DIR at two revisions, each checked out
                                                              in a temporary git worktree and built there by CMD
                                                              (bash), the library taken from PATH inside it
  harness ab REV_A REV_B [CSV ...]                            this repository's CPU twin at two revisions

`--define-b NAME=VALUE` passes build defines to the twin's side B only (`harness ab HEAD HEAD --define-b
TWIN_SLOWDOWN_PCT=5` injects a 5% slowdown). Exit 1 on any REGRESSION, 2 when every row is INCONCLUSIVE (or none
was timed), 3 when it cannot run."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.model.exitcodes import Exit
from harness.options import (add_history_option, add_select_option, add_timeout_option, default_tables,
                             non_negative_int, number, positive_float, positive_int, probability)
from harness.model.settings import MIN_EFFECT, MIN_ROUNDS, PAIRED_MIN_EFFECT, from_options

#: `harness ab`'s rounds per row (harness.flows.ab): chosen with benchmarks/compare_calibration.py --ab-runs.
AB_ROUNDS = 10
#: Samples per side and row over all rounds: a round of a 60 us row takes its 400 pairs in ~50 ms, well within
#: its share of the time cap; more pairs per round is what narrows each round's shift (docs/comparing.md).
AB_MAX_SAMPLES = 4000


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ab", help="interleaved A/B timing of two operator libraries (files, builds of two revisions "
                                  "of your checkout, or the twin at two revisions)", description=__doc__)
    p.add_argument("items", nargs="*", metavar="REV_A REV_B CSV",
                   help="the two revisions (side A, the base, then B; not with --lib-a/--lib-b), then the case tables "
                        "(default: every *_test.csv in cases/)")
    p.add_argument("--lib-a", metavar="PATH", help="side A's operator library file (with --lib-b)")
    p.add_argument("--lib-b", metavar="PATH", help="side B's operator library file (with --lib-a)")
    p.add_argument("--src", metavar="DIR", help="your operator's git checkout: REV_A and REV_B are its revisions, "
                                                "built with --build, the library taken from --lib")
    p.add_argument("--build", metavar="CMD", help="with --src: the shell command that builds a checkout (run in "
                                                  "the worktree's top directory), e.g. 'bash build.sh'")
    p.add_argument("--lib", metavar="PATH_IN_BUILD", help="with --src: the built library, relative to the worktree")
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
    from harness.flows.ab import AbError, run_sides
    from harness.perf.compare import compare_runs, exit_code, format_table
    from harness.store.history import History
    from harness.model.settings import TimingConfig

    try:
        defines_a, defines_b = parse_defines(args.define_a), parse_defines(args.define_b)
        config = TimingConfig(mode=args.timing_mode, warmup=args.warmup,
                              min_samples=args.max_samples if args.min_samples is None else args.min_samples,
                              max_samples=args.max_samples, max_time_s=args.max_time,
                              warmup_max_time_s=args.max_time / 2, rounds=args.rounds)
    except ValueError as exc:
        print(f"harness ab: {exc}", file=sys.stderr)
        return Exit.ENV

    try:
        a, b, csv = sides(args, defines_a, defines_b)
    except ValueError as exc:
        print(f"harness ab: {exc}", file=sys.stderr)
        return Exit.ENV
    tables = csv or default_tables()
    missing = [t for t in tables if not Path(t).is_file()]
    if not tables or missing:
        print(f"harness ab: no such case table: {', '.join(missing) or 'cases/*_test.csv'}", file=sys.stderr)
        return Exit.ENV
    try:
        a, b = run_sides(a, b, tables, args.select, config, History(args.history), Path(args.report_dir),
                         progress=lambda line: print(line, flush=True), settings=from_options(args, timed=False))
    except AbError as exc:
        print(f"harness ab: {exc}", file=sys.stderr)
        return Exit.ENV
    floors = ((MIN_EFFECT, PAIRED_MIN_EFFECT) if args.min_effect is None else (args.min_effect, args.min_effect))
    df = compare_runs(a.records, b.records, args.threshold, args.alpha, floors[0], interleaved=True,
                      paired_min_effect=floors[1])
    for side in (a, b):
        print(f"{side.label}: {side.what()}, run {side.run_id}")
    print(format_table(df))
    return exit_code(df)


def sides(args: argparse.Namespace, defines_a: dict[str, str], defines_b: dict[str, str]) -> tuple[Any, Any, list]:
    """(side A, side B, the case tables named) from the options: two files, two revisions of --src, or two
    revisions of the twin. ValueError (one line) for options that do not go together."""
    from harness.flows.ab import library_side, source_side, twin_side

    items = list(args.items)
    if args.lib_a or args.lib_b:
        if not (args.lib_a and args.lib_b) or args.src or args.build or args.lib:
            raise ValueError("--lib-a and --lib-b go together, without --src/--build/--lib")
        if defines_a or defines_b:
            raise ValueError("--define-a/--define-b build the twin; with --lib-a/--lib-b the libraries are built")
        return library_side("A", args.lib_a), library_side("B", args.lib_b), items
    if len(items) < 2:
        raise ValueError("name the two sides: REV_A REV_B (the twin, or with --src your checkout), or --lib-a/--lib-b")
    rev_a, rev_b, csv = items[0], items[1], items[2:]
    if args.src or args.build or args.lib:
        if not (args.src and args.build and args.lib):
            raise ValueError("--src, --build and --lib go together")
        if defines_a or defines_b:
            raise ValueError("--define-a/--define-b build the twin; with --src your --build command builds")
        top = _toplevel(args.src)
        if top is None:
            raise ValueError(f"--src {args.src}: not a directory inside a git checkout")
        return (source_side("A", rev_a, top, args.build, args.lib), source_side("B", rev_b, top, args.build, args.lib),
                csv)
    top = _toplevel(".")
    if top is None:
        raise ValueError("not inside a git repository (the twin is built from this repository's revisions)")
    return twin_side("A", rev_a, defines_a, top), twin_side("B", rev_b, defines_b, top), csv


def _toplevel(where: str) -> Path | None:
    from harness.store.operator_identity import checkout_of

    return checkout_of(where) if Path(where).is_dir() else None
