"""Calibration of `harness compare` between separate runs on the CPU twin (a script, not a test: minutes).

Runs `harness run` with its default settings, each run a separate process, on the ten smallest csymm perf rows
(up to ~7 MFLOP each): RUNS runs of the default twin (clean) and SLOW_RUNS each of the twin built with
TWIN_SLOWDOWN_PCT=5 and =2 (through --operator-lib), in rotation so machine load drifts over all builds alike. Then
compares, row by row, every pair of clean runs (false REGRESSION: the target is none over >= 200 row comparisons)
and every clean run against every slow5 / slow2 run (share of rows REGRESSION; target >= 90 % at 5 %, >= 50 % at
2 %). The false alarms and the 5 % share are also given for other NOISE_K values (harness.perf.compare.run_noise), which
is how NOISE_K was chosen. With --ab-runs N, `harness ab` (both builds interleaved in one process per round, the
sensitive mode) is run N times with the same code built twice (its false REGRESSIONs) and N/4 times, at least 2,
per slowdown, on the same rows, against the same targets (--external: on the twin built into files outside the
repository, `harness ab --lib-a --lib-b`, as a user compares two builds); --skip-compare runs only those. With --load, the load
CI sees is made beside it (issue 26): one busy loop and a `harness run -n 2` of csymm precision rows in a loop,
both ended when the script ends. Exit 0 when the targets of what ran are met.

    python3 benchmarks/compare_calibration.py --runs 7 --slow-runs 2 --ab-runs 20 --load --keep /tmp/cal
"""
from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from harness.model import operators as ops
from harness.backends.build import build_twin
from harness.perf.compare import NOISE_K, compare_runs
from harness.tables.load import load_cases
from harness.store.stored import read_path

DETECTION_TARGETS = {"slow5": 0.90, "slow2": 0.50}
MIN_COMPARISONS = 200
REPO = Path(__file__).resolve().parents[1]
VERDICTS = ("REGRESSION", "IMPROVEMENT", "SAME", "INCONCLUSIVE")


def smallest_cases(table: Path, count: int) -> list:
    """The `count` perf rows of `table` with the fewest FLOPs (ties by name)."""
    cases = [c for c in load_cases([table]) if c.is_perf and not c.skip and not c.errors]
    cases.sort(key=lambda c: (ops.get(c.op).flops(c.args), c.name))
    return cases[:count]


def harness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, cwd=REPO)


def one_run(table: Path, select: str, lib: str | None, out: Path, extra: list[str]) -> Path:
    """One `harness run` in its own process; returns its report.json."""
    before = set(out.glob("*/report.json"))
    proc = harness("run", str(table), "-k", select, "--report-dir", str(out), "--history", str(out / "history.sqlite"),
                   *extra, *(["--operator-lib", lib] if lib else []))
    made = set(out.glob("*/report.json")) - before
    if proc.returncode not in (0, 2) or len(made) != 1:
        raise RuntimeError(f"harness run failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return made.pop()


def tally(df: pd.DataFrame, pairs: int) -> dict:
    counts = df["verdict"].value_counts().to_dict()
    return {"comparisons": len(df), "pairs": pairs, **{v: counts.get(v, 0) for v in VERDICTS},
            "share": counts.get("REGRESSION", 0) / len(df) if len(df) else float("nan")}


def compared(pairs: list[tuple[Path, Path]], reports: dict[Path, list[dict]], noise_k: float) -> pd.DataFrame:
    return pd.concat([compare_runs(reports[a], reports[b], noise_k=noise_k) for a, b in pairs], ignore_index=True)


@contextlib.contextmanager
def load_beside(table: Path, out: Path):
    """The issue's load: a busy loop and `harness run -n 2` of precision rows in a loop, each in its own process
    group (ended by its id when the calibration ends)."""
    loop = (f"while true; do {sys.executable} -m harness.cli run {table} -k 'not TC_PF' -n 2 --report-dir {out} "
            f"--history {out / 'history.sqlite'} >/dev/null 2>&1 || sleep 1; done")
    procs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"], start_new_session=True),
             subprocess.Popen(["bash", "-c", loop], cwd=REPO, start_new_session=True)]
    try:
        yield
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


AB_SLOWDOWNS = {"unchanged": 0, "slow5": 5, "slow2": 2}


def external_twins(out: Path) -> dict[int, Path]:
    """The twin built outside the repository for each slowdown (0: as written), as a user's libraries would be:
    `harness ab --lib-a` / `--lib-b` then time these files (--external)."""
    libs = {}
    for pct in AB_SLOWDOWNS.values():
        built = build_twin({"TWIN_SLOWDOWN_PCT": str(pct)} if pct else {}, cache_dir=out / f"external-{pct}")
        libs[pct] = out / f"libops_slow{pct}.so"
        libs[pct].write_bytes(built.read_bytes())
    libs[-1] = out / "libops_again.so"  # the same code built again: side A's twin of the unchanged pair
    libs[-1].write_bytes(libs[0].read_bytes())
    return libs


def ab_once(table: Path, select: str, out: Path, pct: int, extra: list[str],
            external: dict[int, Path] | None = None) -> dict[str, int]:
    """`harness ab HEAD HEAD --define-b TWIN_SLOWDOWN_PCT=pct` on the rows (pct 0: the same code built twice, two
    library files), or with `external` libraries `harness ab --lib-a --lib-b` on them: its verdict counts, read from
    its summary line."""
    sides = (["--lib-a", str(external[-1]), "--lib-b", str(external[pct])] if external else
             ["HEAD", "HEAD", "--define-b", f"TWIN_SLOWDOWN_PCT={pct}"])
    proc = harness("ab", *sides, str(table), "-k", select,
                   "--report-dir", str(out / "ab"), "--history", str(out / "ab.sqlite"), *extra)
    tail = [line for line in proc.stdout.splitlines() if line.startswith(tuple("0123456789"))]
    if proc.returncode not in (0, 1, 2) or not tail:
        raise RuntimeError(f"harness ab failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return {v: int(n) for v, n in re.findall(r"([A-Z]+): (\d+)", tail[-1])}


def ab_tallies(table: Path, select: str, out: Path, runs: int, extra: list[str],
               external: dict[int, Path] | None = None) -> dict[str, dict[str, int]]:
    """`runs` ab runs unchanged and max(2, runs // 4) per slowdown, in rotation; verdict counts per label."""
    counts = {label: dict.fromkeys(VERDICTS, 0) for label in AB_SLOWDOWNS}
    for i in range(runs):
        for label, pct in AB_SLOWDOWNS.items():
            if label == "unchanged" or i < max(2, runs // 4):
                for verdict, n in ab_once(table, select, out, pct, extra, external).items():
                    counts[label][verdict] = counts[label].get(verdict, 0) + n
        print(f"ab round {i + 1} of {runs} done, load {os.getloadavg()[0]:.2f}", flush=True)
    return counts


def compare_targets(made: dict[str, list[Path]]) -> bool:
    """Every pair of separate runs compared row by row; prints the tallies; whether the targets are met."""
    reports = {path: read_path(path)[1] for paths in made.values() for path in paths}
    clean_pairs = list(itertools.combinations(made["clean"], 2))
    slow_pairs = {label: list(itertools.product(made["clean"], made[label])) for label in DETECTION_TARGETS}
    results = {"unchanged": tally(compared(clean_pairs, reports, NOISE_K), len(clean_pairs))}
    for label, pairs in slow_pairs.items():
        df = compared(pairs, reports, NOISE_K)
        results[label] = {**tally(df, len(pairs)), "median_change": float(df["change"].median())}
    for label, r in results.items():
        print(f"compare {label}: {r['pairs']} run pairs, {r['comparisons']} row comparisons: "
              + ", ".join(f"{v} {r[v]}" for v in VERDICTS) + f" (REGRESSION {r['share']:.1%})"
              + (f"; median estimated change {r['median_change']:+.2%}" if "median_change" in r else ""))
    for k in (0.0, 1.0, 2.0, 3.0):
        shares = {label: tally(compared(pairs, reports, k), len(pairs))
                  for label, pairs in (("unchanged", clean_pairs), *slow_pairs.items())}
        print(f"  NOISE_K {k:g}: " + ", ".join(f"{label} REGRESSION {t['REGRESSION']}/{t['comparisons']}"
                                              for label, t in shares.items()))
    return verdict_line("compare", results["unchanged"]["REGRESSION"], results["unchanged"]["comparisons"],
                        {label: results[label]["share"] for label in DETECTION_TARGETS})


def verdict_line(tool: str, false_alarms: int, comparisons: int, shares: dict[str, float]) -> bool:
    ok = (false_alarms == 0 and comparisons >= MIN_COMPARISONS
          and all(shares[label] >= target for label, target in DETECTION_TARGETS.items()))
    print(f"{tool}: false REGRESSION {false_alarms} of {comparisons} (target 0 of >= {MIN_COMPARISONS}), "
          + ", ".join(f"{label} caught {shares[label]:.1%} (target >= {target:.0%})"
                      for label, target in DETECTION_TARGETS.items()) + f": {'met' if ok else 'NOT met'}")
    return ok


def ab_targets(counts: dict[str, dict[str, int]]) -> bool:
    for label, c in counts.items():
        print(f"ab {label}: {sum(c.values())} row comparisons: " + ", ".join(f"{v} {c.get(v, 0)}" for v in VERDICTS))
    share = {label: counts[label]["REGRESSION"] / max(1, sum(counts[label].values())) for label in DETECTION_TARGETS}
    return verdict_line("ab", counts["unchanged"]["REGRESSION"], sum(counts["unchanged"].values()), share)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=7, help="clean runs (default 7: 21 pairs, 210 row comparisons)")
    p.add_argument("--slow-runs", type=int, default=2, help="runs per slowed build (default 2)")
    p.add_argument("--rows", type=int, default=10, help="smallest csymm perf rows (default 10)")
    p.add_argument("--table", type=Path, default=REPO / "cases" / "csymm_test.csv")
    p.add_argument("--keep", type=Path, help="keep the reports here instead of a temporary directory")
    p.add_argument("--ab-runs", type=int, default=0, metavar="N",
                   help="also run `harness ab` N times unchanged (the same code built twice) and N/4 (at least 2) "
                        "times per slowdown on the rows; its targets are the same")
    p.add_argument("--ab-args", default="", help="extra `harness ab` options, e.g. '--rounds 10'")
    p.add_argument("--skip-compare", action="store_true", help="only the `harness ab` runs")
    p.add_argument("--external", action="store_true",
                   help="ab on the twin built into files outside the repository (`--lib-a`/`--lib-b`), as a user's "
                        "two builds, instead of two revisions of this repository")
    p.add_argument("--load", action="store_true", help="make the issue's load beside the runs")
    p.add_argument("run_args", nargs="*", help="extra `harness run` options after --, e.g. -- --rounds 10")
    args = p.parse_args()
    names = [c.name for c in smallest_cases(args.table, args.rows)]
    select = " or ".join(names)
    libs = {"clean": None, "slow5": str(build_twin({"TWIN_SLOWDOWN_PCT": "5"})),
            "slow2": str(build_twin({"TWIN_SLOWDOWN_PCT": "2"}))}
    made: dict[str, list[Path]] = {k: [] for k in libs}
    with tempfile.TemporaryDirectory(prefix="compare-calibration-") as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        loaded = load_beside(args.table, out / "load") if args.load else contextlib.nullcontext()
        with loaded:
            time.sleep(10 if args.load else 0)  # the loader's own start-up (it builds nothing: the twin is built)
            print(f"rows: {', '.join(names)}; load average at start {os.getloadavg()[0]:.2f} on "
                  f"{os.cpu_count()} CPUs{' (with the issue loader)' if args.load else ''}", flush=True)
            started = time.monotonic()
            for i in range(0 if args.skip_compare else max(args.runs, args.slow_runs)):
                for label, lib in libs.items():
                    if i < (args.runs if label == "clean" else args.slow_runs):
                        made[label].append(one_run(args.table, select, lib, out, args.run_args))
                print(f"round {i + 1} of runs done, {time.monotonic() - started:.0f} s, load "
                      f"{os.getloadavg()[0]:.2f}", flush=True)
            external = external_twins(out) if args.external else None
            ab = (ab_tallies(args.table, select, out, args.ab_runs, args.ab_args.split(), external)
                  if args.ab_runs else {})
            print(f"load average at end {os.getloadavg()[0]:.2f}, {time.monotonic() - started:.0f} s", flush=True)
        ok = True if args.skip_compare else compare_targets(made)
    if ab:
        ok = ab_targets(ab) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
