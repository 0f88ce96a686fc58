"""Row-by-row performance comparison of two runs, on the raw samples (benchstat-style, plus what it lacks).

Per row: Mann-Whitney U (no normality assumed: timing tails are long), the Hodges-Lehmann shift with its
distribution-free CI expressed relative to the base median, and Benjamini-Hochberg across rows so a 400-row table
does not produce ~20 false alarms at alpha = 0.05. Verdicts, in order:
  REGRESSION    significant after BH, and the whole CI is above +min_effect (slower by more than the noise floor)
  IMPROVEMENT   significant after BH, and the whole CI is below -min_effect
  SAME          the whole CI lies inside +-threshold (proven equivalent within what matters)
  INCONCLUSIVE  none of these: too noisy or too few samples to tell
A provable change wins over SAME: a real 4% slowdown is reported even under a 5% threshold. The floor (2% by
default) keeps the small systematic effects that identical code shows between two builds or buffer placements
(measured on the CPU twin: up to 1.2% with tight CIs) from failing CI.
"""
from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from harness.stats import hodges_lehmann

MIN_EFFECT = 0.02

COLUMNS = ["case_name", "op", "n_base", "n_head", "base_median_us", "head_median_us", "change", "ci_lo", "ci_hi",
           "p_value", "q_value", "verdict"]


def _samples(record: dict) -> list[float] | None:
    timing = record.get("timing") or {}
    samples = timing.get("samples_us")
    return samples if samples and len(samples) >= 2 else None


def _key(record: dict) -> tuple[str, str]:
    # op + case name, not the table path: the same table read from another checkout or worktree still matches
    return str(record.get("op")), str(record["case_name"])


def compare_runs(base_records: list[dict], head_records: list[dict], threshold: float = 0.05,
                 alpha: float = 0.05, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """One row per perf row with samples on both sides (base order); change = HL shift / base median."""
    head = {_key(r): s for r in head_records if (s := _samples(r)) is not None}
    rows: list[dict[str, Any]] = []
    for rec in base_records:
        base_s = _samples(rec)
        head_s = head.get(_key(rec))
        if base_s is None or head_s is None:
            continue
        base_median = float(np.median(base_s))
        shift, lo, hi = hodges_lehmann(base_s, head_s, 1.0 - alpha)
        p = float(sps.mannwhitneyu(head_s, base_s, alternative="two-sided").pvalue)
        scale = base_median if base_median > 0 else math.nan
        rows.append({"case_name": rec["case_name"], "op": rec.get("op"), "n_base": len(base_s),
                     "n_head": len(head_s), "base_median_us": base_median,
                     "head_median_us": float(np.median(head_s)), "change": shift / scale, "ci_lo": lo / scale,
                     "ci_hi": hi / scale, "p_value": p})
    df = pd.DataFrame(rows, columns=COLUMNS)
    if df.empty:
        return df
    p_values = df["p_value"].fillna(1.0).to_numpy()  # all-identical samples give p = nan: no evidence of change
    df["q_value"] = sps.false_discovery_control(p_values, method="bh")
    df["verdict"] = [_verdict(r, threshold, alpha, min_effect) for r in df.itertuples()]
    return df


def _verdict(row: Any, threshold: float, alpha: float, min_effect: float) -> str:
    if row.q_value < alpha and row.ci_lo > min_effect:
        return "REGRESSION"
    if row.q_value < alpha and row.ci_hi < -min_effect:
        return "IMPROVEMENT"
    if -threshold < row.ci_lo and row.ci_hi < threshold:
        return "SAME"
    return "INCONCLUSIVE"


def _timing_mode(meta: dict) -> str | None:
    settings = meta.get("settings") or {}
    timing = settings.get("timing")
    return settings.get("timing_mode") or (timing.get("mode") if isinstance(timing, dict) else None)


def compatibility_problems(base_meta: dict, head_meta: dict) -> list[str]:
    """Why the two runs' numbers are not comparable: different tables (CSV sha256), backends or timing modes."""
    problems = []

    def tables(meta: dict) -> list[str]:
        return sorted(i.get("sha256", "") for i in meta.get("inputs") or [])
    if tables(base_meta) != tables(head_meta):
        problems.append("the case tables differ (CSV sha256s do not match)")
    if base_meta.get("backend") != head_meta.get("backend"):
        problems.append(f"backends differ: {base_meta.get('backend')} vs {head_meta.get('backend')}")
    if _timing_mode(base_meta) != _timing_mode(head_meta):
        problems.append(f"timing modes differ: {_timing_mode(base_meta)} vs {_timing_mode(head_meta)}")
    return problems


def exit_code(df: pd.DataFrame) -> int:
    """1 on any REGRESSION; 2 when nothing could be judged (no rows, or every row INCONCLUSIVE); else 0."""
    if df.empty:
        return 2
    if (df["verdict"] == "REGRESSION").any():
        return 1
    return 2 if (df["verdict"] == "INCONCLUSIVE").all() else 0


def format_table(df: pd.DataFrame) -> str:
    """The tabulate table both `compare` and `ab` print."""
    from tabulate import tabulate

    if df.empty:
        return "no perf rows with samples on both sides"

    def pct(x: float) -> str:
        return f"{x:+.2%}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")
    body = [[r.case_name, r.op, f"{r.base_median_us:.2f}", f"{r.head_median_us:.2f}", pct(r.change),
             f"[{pct(r.ci_lo)}, {pct(r.ci_hi)}]", f"{r.q_value:.3g}", f"{r.n_base}/{r.n_head}", r.verdict]
            for r in df.itertuples()]
    counts = df["verdict"].value_counts()
    footer = ", ".join(f"{v}: {counts.get(v, 0)}" for v in ("REGRESSION", "IMPROVEMENT", "SAME", "INCONCLUSIVE"))
    return tabulate(body, headers=["case", "op", "base med us", "head med us", "change", "CI", "q (BH)", "n",
                                   "verdict"], tablefmt="github") + f"\n{len(df)} rows: {footer}"


def load_report(path: Path) -> tuple[dict, list[dict]]:
    """(meta, records) from a report.json (or the run directory holding one)."""
    if path.is_dir():
        path = path / "report.json"
    report = json.loads(path.read_text())
    records = report.get("cases", [])
    return {k: v for k, v in report.items() if k != "cases"}, records


def git_commit(rev: str, cwd: str | Path | None = None) -> str | None:
    """Full sha of a git revision, or None when it is not one (or there is no git repository)."""
    try:
        out = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=cwd,
                             capture_output=True, text=True, check=False)
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def resolve_run(ref: str, history: Any) -> tuple[dict, list[dict]]:
    """A run named by a report.json path (or its directory), a run id in the history, or a git revision (the
    newest run of that commit). Raises LookupError saying what was tried."""
    path = Path(ref)
    if path.is_file() or (path.is_dir() and (path / "report.json").is_file()):
        return load_report(path)
    if history.path.exists():
        if history.has_run(ref):
            return history.load_run(ref)
        commit = git_commit(ref)
        if commit:
            run_id = history.latest_run_of_commit(commit)
            if run_id:
                return history.load_run(run_id)
            raise LookupError(f"{ref} is commit {commit[:12]}, but {history.path} holds no run of it")
    raise LookupError(f"{ref!r} is neither a report.json path, a run id in {history.path}, nor a git revision "
                      "with a recorded run")
