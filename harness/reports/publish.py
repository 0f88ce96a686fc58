"""`harness publish`: performance across commits, from the run history, as a static site (asv publish's idea) and a
bisect helper (asv find's).

Evidence, as `harness compare` takes it between separate runs: a perf row's figure in one run is each round's p10
(a round is a fresh process; contention only adds time, so the fast end moves with the code), and a commit's figure
is the median over its runs. A series is one perf row (table, operator, case) on one backend and hardware; the cpu
backend's hardware is the host (its "device" is the library under test, which every commit rebuilds).

Steps: binary segmentation of a series' commit figures (log time): the split that leaves the least squared
deviation in the two parts, tested on the rounds of every run on either side with compare's shift test (Hodges-
Lehmann shift of log time with its CI, Mann-Whitney p), recursing into both parts while a split holds. A step is
kept when its change is at least the threshold (asv's 5 % regressions_threshold), its whole CI lies beyond the noise
floor (compare's min_effect), and its Benjamini-Hochberg q over every split tested in the site is below alpha; its
confidence is 1 - q. The commit that made it is the first commit after the split.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
from scipy import stats as sps

from harness.perf.compare import ROUND_STAT, shift_test
from harness.tables.keywords import matches
from harness.model.meta import REFERENCE_KINDS
from harness.model.settings import MIN_EFFECT, STEP_ALPHA, STEP_THRESHOLD


def hardware_label(meta: dict) -> str:
    """The hardware a run's times come from; on the cpu backend the host, since its device name is the library
    (the twin, or the path of --operator-lib, which every build changes) and the library is what commits change."""
    if meta.get("backend") == "cpu":
        host = meta.get("host") if isinstance(meta.get("host"), dict) else {}
        return f"host {host.get('hostname', '?')}, {host.get('cpus', '?')} CPUs"
    hardware = meta.get("hardware")
    return str((hardware.get("name") if isinstance(hardware, dict) else hardware) or meta.get("device") or "?")


def run_units(timing: dict) -> list[float]:
    """The figures one run gives a perf row: each round's p10, else the p10 of its samples, else its median."""
    rounds = [r[ROUND_STAT] for r in timing.get("rounds") or [] if r.get(ROUND_STAT) and r[ROUND_STAT] > 0]
    if rounds:
        return rounds
    samples = timing.get("samples_us") or []
    if samples:
        return [float(np.percentile(samples, 10))]
    return [timing["median_us"]] if timing.get("median_us") else []


def _taskbook_limit(record: dict) -> tuple[float | None, str]:
    for entry in record.get("baseline") or []:
        if entry.get("kind") == "taskbook" and entry.get("value_us"):
            return float(entry["value_us"]), str(entry.get("hardware") or "")
    return None, ""


def points(history: Any, select: str | None = None) -> pd.DataFrame:
    """One row per (run, timed perf row) of the reference kinds of run, oldest run first."""
    rows = []
    for run in reversed(history.run_list()):
        if run["kind"] not in REFERENCE_KINDS:
            continue  # ab sides, mutants and baselines are reached by run id, never a trend's point
        meta, records = history.load_run(run["run_id"])
        hardware = hardware_label(meta)
        for rec in records:
            timing = rec.get("timing") or {}
            units = run_units(timing) if rec.get("is_perf") else []
            if not units or not matches(select, rec["case_name"]):
                continue
            limit, limit_hw = _taskbook_limit(rec)
            rows.append({"backend": meta.get("backend") or "?", "hardware": hardware,
                         "table": Path(str(rec.get("table", ""))).name, "op": rec.get("op"),
                         "case_name": rec["case_name"], "operator_rev": run.get("operator_rev") or "",
                         "commit": run["commit"] or "?", "dirty": run["dirty"],
                         "started": run["started"], "run_id": run["run_id"], "figure_us": float(np.median(units)),
                         "units": units, "verdict": rec.get("verdict"), "limit_us": limit,
                         "limit_hardware": limit_hw})
    return pd.DataFrame(rows)


SERIES_KEY = ["backend", "hardware", "table", "op", "case_name"]


def commit_label(commit: str, dirty: bool) -> str:
    return commit[:12] + ("+dirty" if dirty else "")


def by_commit(series: pd.DataFrame) -> pd.DataFrame:
    """A series' commits in order of their first run: figure (median of the runs'), runs, and every run's units.
    A point is named by the operator's revision where the run recorded one, else by the harness commit."""
    series = series.assign(label=[rev or commit_label(c, d) for rev, c, d in
                                  zip(series["operator_rev"], series["commit"], series["dirty"])])
    out = []
    for label, g in series.groupby("label", sort=False):
        out.append({"label": label, "commit": g["commit"].iloc[0], "figure_us": float(g["figure_us"].median()),
                    "run_figures_us": g["figure_us"].tolist(), "runs": g["run_id"].tolist(),
                    "units": [u for units in g["units"] for u in units]})
    return pd.DataFrame(out)


def _best_split(logs: np.ndarray) -> int:
    """k in 1..n-1 that leaves the least squared deviation in logs[:k] and logs[k:]."""
    def sse(part: np.ndarray) -> float:
        return float(((part - part.mean()) ** 2).sum())
    return min(range(1, logs.size), key=lambda k: sse(logs[:k]) + sse(logs[k:]))


def split_tests(commits: pd.DataFrame, threshold: float = STEP_THRESHOLD, alpha: float = STEP_ALPHA,
                min_effect: float = MIN_EFFECT) -> list[dict]:
    """Every split binary segmentation tried on one series, each with its change, CI and p; `holds` marks the
    splits it recursed on (q, and so the final say, comes from mark_steps over the whole site)."""
    logs = np.log(np.maximum(commits["figure_us"].to_numpy(float), 1e-9))
    units = [np.log(np.maximum(np.asarray(u, float), 1e-9)) for u in commits["units"]]
    tried: list[dict] = []

    def segment(lo: int, hi: int) -> None:
        if hi - lo < 2:
            return
        k = lo + _best_split(logs[lo:hi])
        before, after = np.concatenate(units[lo:k]), np.concatenate(units[k:hi])
        shift, ci_lo, ci_hi, p = shift_test(before, after, 1.0 - alpha)
        change = math.expm1(shift)
        holds = (p < alpha and abs(change) >= threshold
                 and (math.expm1(ci_lo) > min_effect or math.expm1(ci_hi) < -min_effect))
        tried.append({"index": k, "commit": commits["commit"].iloc[k], "label": commits["label"].iloc[k],
                      "before": commits["label"].iloc[k - 1], "change": change,
                      "ci_lo": math.expm1(ci_lo) if math.isfinite(ci_lo) else -math.inf,
                      "ci_hi": math.expm1(ci_hi) if math.isfinite(ci_hi) else math.inf,
                      "p_value": p if math.isfinite(p) else 1.0, "holds": holds})
        if holds:
            segment(lo, k)
            segment(k, hi)

    segment(0, len(commits))
    return tried


def mark_steps(tests: list[list[dict]], alpha: float = STEP_ALPHA) -> list[list[dict]]:
    """Per series, its steps: the splits that held and whose BH q over all the splits tested is below alpha."""
    flat = [t for series in tests for t in series]
    if not flat:
        return [[] for _ in tests]
    q = sps.false_discovery_control(np.array([t["p_value"] for t in flat]), method="bh")
    for t, q_value in zip(flat, q):
        t["q_value"] = float(q_value)
        t["confidence"] = 1.0 - float(q_value)
    return [sorted((t for t in series if t["holds"] and t["q_value"] < alpha), key=lambda t: t["index"])
            for series in tests]


def series_table(df: pd.DataFrame, threshold: float = STEP_THRESHOLD, alpha: float = STEP_ALPHA,
                 min_effect: float = MIN_EFFECT) -> list[dict]:
    """Every series with its commits and steps, in table then case order."""
    out = []
    for key, g in df.groupby(SERIES_KEY, sort=True):
        commits = by_commit(g)
        limit = g["limit_us"].dropna()
        out.append({**dict(zip(SERIES_KEY, key)), "commits": commits,
                    "tests": split_tests(commits, threshold, alpha, min_effect),
                    "limit_us": float(limit.iloc[-1]) if len(limit) else None,
                    "limit_hardware": g["limit_hardware"].iloc[-1] if len(limit) else ""})
    for series, steps in zip(out, mark_steps([s["tests"] for s in out], alpha)):
        series["steps"] = steps
        series["slug"] = _slug(series)
    return out


def _slug(series: dict) -> str:
    digest = hashlib.sha1(json.dumps([series[k] for k in SERIES_KEY]).encode()).hexdigest()[:10]
    return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', series['case_name'])}-{digest}"


def run_slug(run_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)


def bisect(candidates: list[str], regressed: Callable[[str, str], bool]) -> tuple[str, list[tuple[str, str, bool]]]:
    """The first commit of `candidates` (oldest first; the first is known good, the last known bad) that
    `regressed(good, commit)` says is slower, by bisection; also the trail of comparisons made."""
    if len(candidates) < 2:
        raise ValueError("bisection needs a good and a bad commit")
    lo, hi = 0, len(candidates) - 1
    trail = []
    while hi - lo > 1:
        mid = (lo + hi) // 2
        worse = regressed(candidates[lo], candidates[mid])
        trail.append((candidates[lo], candidates[mid], worse))
        lo, hi = (lo, mid) if worse else (mid, hi)
    return candidates[hi], trail
