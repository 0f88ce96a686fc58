"""`harness publish [--out DIR]`: a static site of every perf row's trend across commits from the run history (per
backend and hardware), the steps found in them with the commit that made each and its confidence, the task-book
limit where a row has one, and links between runs. One folder, no network: open DIR/index.html.

`harness publish --find GOOD..BAD [CSV ...] -k ROWS`: bisect the commits after GOOD up to BAD (first parents) for
the first one that made the selected perf rows slower, each step an interleaved `harness ab` of the last good
commit against the middle one (a REGRESSION in any row counts as slower); like asv find.
Exit 0 on success (publish), 0 when --find names a commit a comparison found slower, 2 when none was (the end of
the range is named unchecked), 3 when the history, range or build cannot be used."""
from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
from pathlib import Path

from harness.model.exitcodes import Exit
from harness.options import add_history_option, add_select_option, default_tables, positive_float, probability
from harness.model.settings import MIN_EFFECT, STEP_ALPHA, STEP_THRESHOLD, from_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("publish", help="static site of performance across commits; --find bisects a regression",
                       description=__doc__)
    p.add_argument("csv", nargs="*", help="--find only: case tables (default: every *_test.csv in cases/)")
    add_select_option(p)
    add_history_option(p)
    p.add_argument("--out", default="reports/site", help="the site's folder, replaced (default: reports/site)")
    p.add_argument("--threshold", type=positive_float, default=STEP_THRESHOLD,
                   help=f"smallest relative change a step may have (default {STEP_THRESHOLD})")
    p.add_argument("--alpha", type=probability, default=STEP_ALPHA,
                   help=f"false-discovery rate over the splits tested (default {STEP_ALPHA})")
    p.add_argument("--min-effect", type=positive_float, default=MIN_EFFECT,
                   help=f"noise floor: a step's whole CI must lie beyond it (default {MIN_EFFECT})")
    p.add_argument("--find", metavar="GOOD..BAD", help="bisect this commit range with harness ab instead")
    p.add_argument("--report-dir", default="reports", help="--find: each ab's reports land in REPORT_DIR/<run_id>/")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.store.history import History

    history = History(args.history)
    if args.find:
        return _find(args, history)
    from harness.reports.publish_site import NotASite, build_site, confidence_text

    try:
        if not history.exists():
            print(f"harness publish: no history database at {history.path}", file=sys.stderr)
            return Exit.ENV
        done = build_site(history, Path(args.out), args.select, args.threshold, args.alpha, args.min_effect)
    except sqlite3.Error as exc:
        print(f"harness publish: --history {history.path}: {exc}", file=sys.stderr)
        return Exit.ENV
    except NotASite as exc:
        print(f"harness publish: {exc}", file=sys.stderr)
        return Exit.ENV
    except OSError as exc:
        print(f"harness publish: --out {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return Exit.ENV
    for step in done["steps"]:
        print(f"step: {step['series']} ({step['backend']} on {step['hardware']}) {step['change']:+.1%} at "
              f"{step['label']} (after {step['before']}), confidence {confidence_text(step['confidence'])}")
    print(f"published {done['series']} series from {done['runs']} runs, {len(done['steps'])} steps: "
          f"{Path(args.out) / 'index.html'}")
    return Exit.OK


def _git(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *argv], capture_output=True, text=True, check=False)


def _find(args: argparse.Namespace, history) -> int:
    from harness.flows.ab import AbError, run_ab
    from harness.perf.compare import compare_runs
    from harness.reports.publish import bisect
    from harness.model.settings import TimingConfig

    good, sep, bad = args.find.partition("..")
    if not sep or not good or not bad:
        print(f"harness publish: --find {args.find!r}: expected GOOD..BAD (two revisions)", file=sys.stderr)
        return Exit.ENV
    top, listed = _git("rev-parse", "--show-toplevel"), _git("rev-list", "--reverse", "--first-parent", args.find)
    if top.returncode != 0 or listed.returncode != 0 or _git("rev-parse", "--verify", f"{good}^{{commit}}").returncode:
        print(f"harness publish: --find {args.find}: not a commit range of this git repository", file=sys.stderr)
        return Exit.ENV
    commits = [_git("rev-parse", good).stdout.strip()] + listed.stdout.split()
    if len(commits) < 2:
        print(f"harness publish: --find {args.find}: no commit after {good}", file=sys.stderr)
        return Exit.ENV
    tables = args.csv or default_tables()

    def regressed(base: str, head: str) -> bool:
        a, b = run_ab(base, head, tables, args.select, {}, {}, TimingConfig(), history, Path(top.stdout.strip()),
                      Path(args.report_dir), settings=from_options(args, timed=False))
        df = compare_runs(a.records, b.records, args.threshold, args.alpha, args.min_effect, interleaved=True)
        worse = bool((df["verdict"] == "REGRESSION").any()) if not df.empty else False
        print(f"ab {base[:12]} -> {head[:12]}: {'REGRESSION' if worse else 'not slower'} "
              f"(runs {a.run_id}, {b.run_id})", flush=True)
        return worse

    try:
        first_bad, trail = bisect(commits, regressed)
    except AbError as exc:
        print(f"harness publish: {exc}", file=sys.stderr)
        return Exit.ENV
    subject = _git("log", "-1", "--format=%h %s", first_bad).stdout.strip()
    assumed = "" if any(worse for *_, worse in trail) else " (no comparison was slower: BAD taken as slower unchecked)"
    print(f"first slower commit: {first_bad} ({subject}){assumed}")
    return Exit.INSUFFICIENT if assumed else Exit.OK
