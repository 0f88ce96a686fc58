"""Calibration of `harness compare` between separate runs on the CPU twin (a script, not a test: minutes).

Runs `harness run` with its default settings, each run a separate process, on the ten smallest csymm perf rows
(up to ~7 MFLOP each), RUNS times for each of three builds, in rotation (clean, 5 % slower, 2 % slower, clean,
...) so machine load drifts over all three alike:
  clean   the default twin
  slow5   the twin built with TWIN_SLOWDOWN_PCT=5, through --operator-lib
  slow2   the twin built with TWIN_SLOWDOWN_PCT=2, through --operator-lib
then compares, row by row, every pair of clean runs (false REGRESSION rate; target <= 1 % of row comparisons) and
every clean run against every slow5 / slow2 run (share of rows REGRESSION; target >= 90 % at 5 %, 2 % reported).
Exit 0 when both targets are met.

    python3 benchmarks/compare_calibration.py --runs 8
"""
from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from harness import ops
from harness.backends.build import build_twin
from harness.compare import compare_runs, load_report
from harness.engine import load_cases

FALSE_ALARM_TARGET, DETECTION_TARGET = 0.01, 0.90
REPO = Path(__file__).resolve().parents[1]


def smallest_cases(table: Path, count: int) -> list:
    """The `count` perf rows of `table` with the fewest FLOPs (ties by name)."""
    cases = [c for c in load_cases([table]) if c.is_perf and not c.skip and not c.errors]
    cases.sort(key=lambda c: (ops.get(c.op).flops(c.args), c.name))
    return cases[:count]


def smallest_rows(table: Path, count: int) -> list[str]:
    return [c.name for c in smallest_cases(table, count)]


def one_run(table: Path, select: str, lib: str | None, out: Path, extra: list[str]) -> Path:
    """One `harness run` in its own process; returns its report.json."""
    before = set(out.glob("*/report.json"))
    cmd = [sys.executable, "-m", "harness.cli", "run", str(table), "-k", select, "--report-dir", str(out),
           "--history", str(out / "history.sqlite"), *extra] + (["--operator-lib", lib] if lib else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    made = set(out.glob("*/report.json")) - before
    if proc.returncode not in (0, 2) or len(made) != 1:
        raise RuntimeError(f"harness run failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return made.pop()


def rates(pairs: list[tuple[Path, Path]], reports: dict[Path, list[dict]]) -> tuple[pd.DataFrame, dict]:
    frames = [compare_runs(reports[a], reports[b]).assign(pair=i) for i, (a, b) in enumerate(pairs)]
    df = pd.concat(frames, ignore_index=True)
    counts = df["verdict"].value_counts().to_dict()
    return df, {"comparisons": len(df), "pairs": len(pairs), **{v: counts.get(v, 0) for v in
                                                                 ("REGRESSION", "IMPROVEMENT", "SAME",
                                                                  "INCONCLUSIVE")}}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=8, help="runs per build (default 8)")
    p.add_argument("--rows", type=int, default=10, help="smallest csymm perf rows (default 10)")
    p.add_argument("--table", type=Path, default=REPO / "cases" / "csymm_test.csv")
    p.add_argument("--keep", type=Path, help="keep the reports here instead of a temporary directory")
    p.add_argument("run_args", nargs="*", help="extra `harness run` options after --, e.g. -- --rounds 10")
    args = p.parse_args()
    names = smallest_rows(args.table, args.rows)
    select = " or ".join(names)
    libs = {"clean": None, "slow5": str(build_twin({"TWIN_SLOWDOWN_PCT": "5"})),
            "slow2": str(build_twin({"TWIN_SLOWDOWN_PCT": "2"}))}
    print(f"rows: {', '.join(names)}; load average at start {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="compare-calibration-") as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        made: dict[str, list[Path]] = {k: [] for k in libs}
        started = time.monotonic()
        for i in range(args.runs):
            for label, lib in libs.items():
                made[label].append(one_run(args.table, select, lib, out, args.run_args))
            print(f"round {i + 1}/{args.runs} of runs done, {time.monotonic() - started:.0f} s, "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)
        reports = {path: load_report(path)[1] for paths in made.values() for path in paths}
        results = {}
        clean_pairs = list(itertools.combinations(made["clean"], 2))
        _, results["unchanged"] = rates(clean_pairs, reports)
        for label in ("slow5", "slow2"):
            df, results[label] = rates(list(itertools.product(made["clean"], made[label])), reports)
            results[label]["median_change"] = float(df["change"].median())
    for label, r in results.items():
        share = r["REGRESSION"] / r["comparisons"] if r["comparisons"] else float("nan")
        r["regression_share"] = share
        print(f"{label}: {r['pairs']} run pairs, {r['comparisons']} row comparisons: REGRESSION {r['REGRESSION']} "
              f"({share:.1%}), IMPROVEMENT {r['IMPROVEMENT']}, SAME {r['SAME']}, INCONCLUSIVE {r['INCONCLUSIVE']}"
              + (f"; median estimated change {r['median_change']:+.2%}" if "median_change" in r else ""))
    ok = (results["unchanged"]["regression_share"] <= FALSE_ALARM_TARGET
          and results["slow5"]["regression_share"] >= DETECTION_TARGET)
    print(f"false REGRESSION {results['unchanged']['regression_share']:.1%} (target <= {FALSE_ALARM_TARGET:.0%}), "
          f"5 % caught {results['slow5']['regression_share']:.1%} (target >= {DETECTION_TARGET:.0%}), 2 % caught "
          f"{results['slow2']['regression_share']:.1%}: {'met' if ok else 'NOT met'}; load average now "
          f"{os.getloadavg()[0]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
