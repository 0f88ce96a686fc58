"""Sensitivity and specificity of `harness ab` on the CPU twin (a script, not a test: it takes minutes).

  1. sensitivity: ab HEAD HEAD with TWIN_SLOWDOWN_PCT=5 on side B -> fraction of rows reported REGRESSION
     (target >= 90%)
  2. specificity: ab HEAD HEAD, identical builds              -> fraction of rows reported REGRESSION
     (target <= 1%)

Both use the same perf rows: the `TC_PF_*` rows of the tables up to --max-mflop, or an evenly spaced subset of them
with --rows. Exit 0 when both targets are met, 1 otherwise.

    python3 benchmarks/ab_sensitivity.py --rows 40 --max-time 3
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.model import operators as ops
from harness.flows.ab import run_ab
from harness.perf.compare import MIN_EFFECT, compare_runs
from harness.tables.load import load_cases
from harness.store.history import History
from harness.model.settings import TimingConfig

SENSITIVITY_TARGET, SPECIFICITY_TARGET = 0.90, 0.01


def pick_rows(table: str, rows: int | None, max_mflop: float | None) -> str:
    """A -k expression naming an evenly spaced subset of one table's perf rows (all of them without --rows), leaving
    out rows over max_mflop: on the twin those take up to a second per call and get too few samples per row."""
    names = sorted(c.name for c in load_cases([table]) if c.is_perf and not c.skip and not c.errors
                   and (max_mflop is None or ops.get(c.op).flops(c.args) <= max_mflop * 1e6))
    if rows and rows < len(names):
        step = len(names) / rows
        names = [names[int(i * step)] for i in range(rows)]
    return " or ".join(names)


def experiment(label: str, defines_b: dict[str, str], args: argparse.Namespace, selects: dict[str, str],
               repo: Path, history: History, config: TimingConfig) -> dict:
    """One ab run per table (row names repeat across tables), then one comparison over all rows (BH across all)."""
    started = time.monotonic()
    base, head = [], []
    for table, select in selects.items():
        a, b = run_ab(args.rev, args.rev, [table], select, {}, defines_b, config, history, repo)
        base += a.records
        head += b.records
    df = compare_runs(base, head, args.threshold, args.alpha, args.min_effect, interleaved=True)
    counts = df["verdict"].value_counts().to_dict()
    fraction = counts.get("REGRESSION", 0) / len(df) if len(df) else float("nan")
    print(f"{label}: {len(df)} rows, REGRESSION {counts.get('REGRESSION', 0)} ({fraction:.1%}); {counts}; "
          f"median change {df['change'].median():+.2%}; {time.monotonic() - started:.0f} s", flush=True)
    missed = df[df["verdict"] != "REGRESSION"] if defines_b else df[df["verdict"] == "REGRESSION"]
    for r in missed.itertuples():
        print(f"    {r.op}:{r.case_name} {r.verdict} change {r.change:+.2%} CI [{r.ci_lo:+.2%}, {r.ci_hi:+.2%}]"
              f" base {r.base_median_us:.1f} us n {r.n_base}")
    return {"rows": len(df), "regression_fraction": fraction, "verdicts": counts}


def main() -> int:
    repo_default = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repo", type=Path, default=repo_default, help="git repository whose revision is built")
    p.add_argument("--rev", default="HEAD")
    p.add_argument("--tables", nargs="*", default=None, help="case tables (default: cases/*_test.csv of --repo)")
    p.add_argument("--rows", type=int, default=None, help="evenly spaced subset of this many perf rows per table")
    p.add_argument("--max-mflop", type=float, default=200.0,
                   help="only rows of at most this many MFLOP (default 200; 0 for no limit)")
    p.add_argument("--slowdown-pct", type=int, default=5)
    p.add_argument("--threshold", type=float, default=0.05)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--min-effect", type=float, default=MIN_EFFECT)
    p.add_argument("--max-time", type=float, default=2.0, help="time cap per row, both sides together")
    p.add_argument("--min-samples", type=int, default=50)
    args = p.parse_args()
    args.tables = args.tables or [str(t) for t in sorted((args.repo / "cases").glob("*_test.csv"))]
    repo = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=args.repo, capture_output=True,
                               text=True, check=True).stdout.strip())
    config = TimingConfig(min_samples=args.min_samples, max_time_s=args.max_time, warmup_max_time_s=args.max_time / 2)
    selects = {t: sel for t in args.tables if (sel := pick_rows(t, args.rows, args.max_mflop or None))}
    with tempfile.TemporaryDirectory(prefix="ab-sensitivity-") as tmp:
        history = History(Path(tmp) / "history.sqlite")
        sens = experiment(f"sensitivity (B: TWIN_SLOWDOWN_PCT={args.slowdown_pct})",
                          {"TWIN_SLOWDOWN_PCT": str(args.slowdown_pct)}, args, selects, repo, history, config)
        spec = experiment("specificity (identical builds)", {}, args, selects, repo, history, config)
    ok = sens["regression_fraction"] >= SENSITIVITY_TARGET and spec["regression_fraction"] <= SPECIFICITY_TARGET
    print(f"sensitivity {sens['regression_fraction']:.1%} (target >= {SENSITIVITY_TARGET:.0%}), "
          f"specificity: false REGRESSION {spec['regression_fraction']:.1%} (target <= {SPECIFICITY_TARGET:.0%}): "
          f"{'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
