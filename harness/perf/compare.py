"""Row-by-row performance comparison of two runs (benchstat-style, plus what it lacks), with the evidence each
comparison can honestly claim.

Separate runs: the unit of evidence is the round (harness.run.runner times each perf row in several rounds, each in a
fresh process). Samples within one round share that process's state (placement, clocks, neighbours), so they are
not independent of each other the way two runs are; pooled, they give CIs of +-0.1 % for run-to-run differences of
+-30 % (issue 12). Each round contributes one number, its p10 (contention only ever adds time, so the fast end of
a round moves with the code and far less with the machine than its mean), and the two runs' rounds are compared:
Mann-Whitney U (exact for small counts), the Hodges-Lehmann shift of log(p10) with its distribution-free CI, and
Benjamini-Hochberg across rows. That CI only knows how rounds scatter around their run's level; two runs' levels
differ as well when the load changes between them, so for separate runs the CI is widened (in quadrature) by a
run-to-run term: NOISE_K times the typical difference between two rounds of the noisier run (run_noise). Rounds the
scheduler disturbed (harness.perf.timing.round_summary: most samples waited on a run queue) are left out and counted.
Runs whose rounds ran at loads too far apart (LOAD_MATCH; each round records its load average) shift every round
alike, which no spread shows: they are at most SAME, with a warning. With fewer than RANK_MIN_ROUNDS rounds on a side (the cpu
default is 3) ranks cannot decide, so the rounds' means are compared instead (few_rounds_test: Student-t over the
rounds' pooled spread, never below what each round's own samples say its p10 scatters by, at 1 - alpha /
FEW_ROUNDS_STRICTNESS), then widened by the same run-to-run term. Rows with fewer than MIN_ROUNDS usable rounds
on a side fall back to the pooled samples, and since that evidence is only within-run they can be SAME or
INCONCLUSIVE, never REGRESSION (with a warning).

Interleaved A/B (`harness ab`): both sides share one process and alternate sample by sample, so machine state hits
both alike and the samples themselves are the evidence; the same tests run on them (HL shift of log time, U test,
BH): the most sensitive mode. With rounds (each in a fresh process) the evidence is "paired rounds": round i's
difference of log medians, B - A, for every round, with a Student-t CI and test over the rounds; the process's
placement of libraries and buffers is then part of what the rounds vary over, so the noise floor is
PAIRED_MIN_EFFECT instead of min_effect. The verdict rule:
  REGRESSION    significant after BH, and the whole CI is above +min_effect (slower by more than the noise floor)
  IMPROVEMENT   significant after BH, and the whole CI is below -min_effect
  SAME          the whole CI lies inside +-threshold (proven equivalent within what matters)
  INCONCLUSIVE  none of these: too noisy, too few rounds, or only within-run evidence of a change
A provable change wins over SAME: a real 4% slowdown is reported even under a 5% threshold. The floor (2% by
default) keeps the small systematic effects that identical code shows between two builds or buffer placements
(measured on the CPU twin: up to 1.2% with tight CIs) from failing CI.
"""
from __future__ import annotations

import json
import math
import re
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from harness.model.meta import REFERENCE_KINDS, RunMeta
from harness.perf.stats import hodges_lehmann
from harness.store.stored import read_history, read_path
from harness.model.settings import MIN_EFFECT, MIN_ROUNDS, PAIRED_MIN_EFFECT
#: The per-round figure separate runs are compared by (see the module docstring).
ROUND_STAT = "p10_us"

#: Separate runs: the run-to-run term added to the CI is NOISE_K times the typical difference between two rounds of
#: the noisier run (see run_noise); chosen with benchmarks/compare_calibration.py at load 8-35: no false verdict in
#: 210 row comparisons from 0.5 up, 1 REGRESSION and 3 IMPROVEMENT at 0 (figures in the commit log).
NOISE_K = 1.5

#: Separate runs whose rounds of a row ran at loads further apart than this factor (in load per CPU + 1, so that two
#: light loads are alike) are not compared for a change: at load 21 vs 36 on 2 CPUs every round of an unchanged
#: row read 31 % apart, 4 % apart inside each run, an offset no spread of rounds shows.
LOAD_MATCH = 1.5

COLUMNS = ["case_name", "op", "evidence", "n_base", "n_head", "rejected", "base_load", "head_load", "comparable",
           "base_median_us", "head_median_us", "change", "ci_lo", "ci_hi", "noise", "p_value", "q_value", "verdict"]
#: What base_median_us / head_median_us are medians of, per evidence: the figure the change and its CI are of.
FIGURE = {"rounds": "each round's p10", "interleaved": "the samples", "within-run": "the samples",
          "paired rounds": "each round's median"}


def _samples(record: dict) -> list[float] | None:
    timing = record.get("timing") or {}
    samples = timing.get("samples_us")
    return samples if samples and len(samples) >= 2 else None


def _rounds(record: dict) -> tuple[list[float], int]:
    """The figures of a record's rounds the scheduler left usable, and how many rounds it rejected as disturbed
    (harness.perf.timing.round_summary)."""
    rounds = (record.get("timing") or {}).get("rounds") or []
    kept = [r[ROUND_STAT] for r in rounds if not r.get("rejected") and r.get(ROUND_STAT) and r[ROUND_STAT] > 0]
    return kept, sum(bool(r.get("rejected")) for r in rounds)


#: Share of a round's sample-pair log ratios cut from each end before averaging them (the interquartile mean):
#: a pair the scheduler split (one side preempted, or the two in different machine states) is an outlier either
#: way. Chosen on 12 ab runs at load 4.3 (figures in the commit log): the spread of unchanged rows' shifts 0.19 %
#: against 0.32 % for the difference of the round medians and 0.44 % for the median of the pair ratios; on the
#: 30 runs of the calibration after (load 4-7): 0.11 % against 0.19 %, the 2 % mutant caught on 41 against 36 of 50.
PAIR_TRIM = 0.25


def round_samples(record: dict) -> list[np.ndarray] | None:
    """A merged record's samples split into its rounds (harness.perf.timing.merge_rounds pools them in round
    order and keeps each round's `n`); None when the sizes do not account for the samples."""
    timing = record.get("timing") or {}
    samples, sizes = timing.get("samples_us") or [], [r.get("n") for r in timing.get("rounds") or []]
    if not sizes or not all(isinstance(n, int) and n > 0 for n in sizes) or sum(sizes) != len(samples):
        return None
    return np.split(np.maximum(np.asarray(samples, dtype=float), 1e-9), np.cumsum(sizes)[:-1])


def round_shift(base: np.ndarray, head: np.ndarray) -> float:
    """One round's shift of log time head - base. Interleaved samples of equal count came in pairs, a few
    microseconds apart (harness.flows.ab.interleave): the interquartile mean of the pairs' log ratios, where the
    machine state each pair ran in cancels. Otherwise the log ratio of the medians."""
    if base.size == head.size and base.size >= 4:
        return float(sps.trim_mean(np.log(head) - np.log(base), PAIR_TRIM))
    return float(np.log(np.median(head)) - np.log(np.median(base)))


def paired_rounds(base: dict, head: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(base round medians, head round medians, round shifts) of the rounds two interleaved records timed
    together (round i of A beside round i of B, round_shift), or None unless both have the same MIN_ROUNDS or
    more rounds."""
    rounds = [(r.get("timing") or {}).get("rounds") or [] for r in (base, head)]
    if len(rounds[0]) != len(rounds[1]) or len(rounds[0]) < MIN_ROUNDS:
        return None
    x, y = (np.array([float(r.get("median_us") or 0.0) for r in side]) for side in rounds)
    if not (np.all(x > 0) and np.all(y > 0)):
        return None
    split = [round_samples(base), round_samples(head)]
    if split[0] is None or split[1] is None:
        return x, y, np.log(y) - np.log(x)
    return x, y, np.array([round_shift(a, b) for a, b in zip(*split)])


def paired_test(diffs: np.ndarray, confidence: float) -> tuple[float, float, float, float]:
    """(shift, ci_lo, ci_hi, p) of the mean of paired differences: Student-t over the pairs."""
    from harness.perf.stats import mean_ci

    mean, sd = float(diffs.mean()), float(diffs.std(ddof=1))
    if sd == 0.0:
        return mean, mean, mean, (1.0 if mean == 0.0 else 0.0)
    lo, hi = mean_ci(mean, sd, diffs.size, confidence)
    return mean, lo, hi, float(sps.ttest_1samp(diffs, 0.0).pvalue)


def run_noise(base_rounds: np.ndarray, head_rounds: np.ndarray, k: float = NOISE_K) -> float:
    """The run-to-run term of a shift of log figure between separate runs: k times the median difference between
    two rounds of the same run, on the side whose rounds differ more (0 below two rounds on both sides). The shift
    test sees only how rounds scatter around their run's level, but two runs' levels differ too whenever the
    machine's load changes between them: measured on the twin, 53-61 us p10 in three processes at one load with
    89-99 % of their samples undisturbed by the scheduler, and at load 8-35 one run's rounds of a row all within
    50.0-50.9 us while the next run's spread over 51.5-66.9 us. The noisier run's own rounds are the only measure
    of that noise the pair carries (a quiet run's tight rounds would hide it if pooled): a shift smaller than what
    those rounds differ by is not evidence of a change."""
    spreads = [float(np.median([abs(a - b) for i, a in enumerate(side) for b in side[i + 1:]]))
               for side in (base_rounds, head_rounds) if len(side) > 1]
    return k * max(spreads) if spreads else 0.0


def round_load(record: dict) -> float | None:
    """The median 1-minute load average per CPU the record's rounds ended at (None for records from before it was
    kept)."""
    loads = [r["load"] / r["cpus"] for r in (record.get("timing") or {}).get("rounds") or []
             if r.get("load") is not None and r.get("cpus")]
    return float(np.median(loads)) if loads else None


def loads_alike(base: float | None, head: float | None) -> bool:
    """Whether two runs' loads per CPU are close enough for their rounds to be compared (unknown loads are taken
    as alike: the run-to-run term is then all there is)."""
    if base is None or head is None:
        return True
    return max(base, head) + 1.0 <= LOAD_MATCH * (min(base, head) + 1.0)


def _key(record: dict) -> tuple[str, str]:
    # op + case name, not the table path: the same table read from another checkout or worktree still matches
    return str(record.get("op")), str(record["case_name"])


def widen(shift: float, lo: float, hi: float, noise: float) -> tuple[float, float]:
    """The CI of a shift with an independent error term of half-width `noise` added (in quadrature)."""
    return shift - math.hypot(shift - lo, noise), shift + math.hypot(hi - shift, noise)


@lru_cache(maxsize=256)
def _u_cdf(n: int, m: int) -> np.ndarray:
    """P(U <= u) for u = 0..n*m under the null (no shift), by counting: exact where the normal approximation of
    hodges_lehmann is too coarse (a few rounds per side)."""
    # counts[i][j] = number of orderings of i x's and j y's per U value, built up one element at a time
    counts = [[np.zeros(1)] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 or j == 0:
                counts[i][j] = np.ones(1)
                continue
            with_x = np.concatenate([np.zeros(j), counts[i - 1][j]])  # the largest is an x: beats all j y's
            without = counts[i][j - 1]
            size = max(with_x.size, without.size)
            counts[i][j] = np.pad(with_x, (0, size - with_x.size)) + np.pad(without, (0, size - without.size))
    freq = counts[n][m]
    return np.cumsum(freq) / freq.sum()


def shift_test(base: np.ndarray, head: np.ndarray, confidence: float) -> tuple[float, float, float, float]:
    """(shift, ci_lo, ci_hi, p): Hodges-Lehmann shift head - base with its CI, and the two-sided Mann-Whitney p.
    Exact for small samples (both sides <= 25), else hodges_lehmann's normal approximation."""
    n, m = base.size, head.size
    p = float(sps.mannwhitneyu(head, base, alternative="two-sided").pvalue)
    if max(n, m) > 25:
        shift, lo, hi = hodges_lehmann(base, head, confidence)
        return shift, lo, hi, p
    diffs = np.sort((head[None, :] - base[:, None]).ravel())
    cdf = _u_cdf(n, m)
    # largest k with P(U <= k - 1) <= alpha/2: the k-th smallest and k-th largest differences bound the CI
    k = int(np.searchsorted(cdf, (1 - confidence) / 2 + 1e-12, side="right"))
    if k < 1:
        return float(np.median(diffs)), -math.inf, math.inf, p
    return float(np.median(diffs)), float(diffs[k - 1]), float(diffs[n * m - k]), p


#: Below this many usable rounds on a side the ranks of the rounds cannot decide (3 against 3, the cpu default:
#: the exact Mann-Whitney p is at least 0.1 and its CI unbounded), so few_rounds_test judges them instead.
RANK_MIN_ROUNDS = 5
#: A round's p10 of log time is known to about this many median absolute deviations of its log samples over
#: sqrt(samples) (the standard error of a low quantile of a roughly normal spread, ~1.7 sigma / sqrt(n), with
#: sigma = 1.4826 MAD): the floor of the round-to-round spread few_rounds_test assumes, whatever the rounds show.
P10_SE_MADS = 2.5
#: few_rounds_test's interval is at 1 - alpha / FEW_ROUNDS_STRICTNESS (99 % for the default alpha): the spread of 3
#: rounds is itself a guess. Chosen on synthetic runs (tests/perf/test_compare_few_rounds.py: rounds 2 % apart, run
#: levels 1 % apart, 250 unchanged row pairs): 2 false verdicts at 95 %, none at 99 %, and a 10 % slowdown near idle
#: still caught on 100 of 100 rows (a 5 % one on 42). On the twin (benchmarks/compare_calibration.py, 7 runs of the
#: ten smallest csymm perf rows at load 12-63 on 2 CPUs): no REGRESSION over 210 unchanged row comparisons; at load
#: 7-9, 2 runs against 2 of the twin built 10 % slower: REGRESSION on 39 of 40 rows (the ranks alone: none).
FEW_ROUNDS_STRICTNESS = 5.0


def round_floor(record: dict) -> float:
    """The spread one round's p10 of log time has from its own samples alone (P10_SE_MADS; the median over the
    record's rounds); 0 when the samples do not split into rounds."""
    split = round_samples(record)
    if not split:
        return 0.0
    errors = [P10_SE_MADS * float(np.median(np.abs(np.log(r) - np.median(np.log(r))))) / math.sqrt(r.size)
              for r in split if r.size >= 2]
    return float(np.median(errors)) if errors else 0.0


def few_rounds_test(base: np.ndarray, head: np.ndarray, floor: float,
                    confidence: float) -> tuple[float, float, float, float]:
    """(shift, ci_lo, ci_hi, p) of log figures of a few rounds per side: the difference of the two runs' mean round
    with a Student-t interval over the rounds' pooled spread, that spread never taken below `floor` (what the
    samples say one round's figure scatters by: three rounds that happen to agree do not make a run exact)."""
    from harness.perf.stats import t_quantile

    n, m = base.size, head.size
    shift = float(head.mean() - base.mean())
    pooled = ((n - 1) * base.var(ddof=1) + (m - 1) * head.var(ddof=1)) / (n + m - 2)
    se = math.sqrt(max(pooled, floor ** 2) * (1.0 / n + 1.0 / m))
    if se == 0.0:
        return shift, shift, shift, (1.0 if shift == 0.0 else 0.0)
    half = t_quantile(n + m - 2, confidence) * se
    return shift, shift - half, shift + half, float(2.0 * sps.t.sf(abs(shift) / se, n + m - 2))


def compare_runs(base_records: list[dict], head_records: list[dict], threshold: float = 0.05,
                 alpha: float = 0.05, min_effect: float = MIN_EFFECT, interleaved: bool = False,
                 noise_k: float = NOISE_K, paired_min_effect: float = PAIRED_MIN_EFFECT) -> pd.DataFrame:
    """One row per perf row with samples on both sides (base order). The compared figure is each round's p10 for
    separate runs, the samples when `interleaved` or when rounds are missing; `evidence` says which: "rounds",
    "interleaved" or "within-run" (never REGRESSION/IMPROVEMENT). base/head_median_us are the medians of that
    figure and change is their ratio - 1, so the change printed beside them is theirs; the CI is the
    Hodges-Lehmann interval of the same figure's shift, for rounds widened by `noise` (run_noise with `noise_k`).
    Interleaved records with rounds on both sides are "paired rounds" (paired_test; floor `paired_min_effect`)."""
    head = {_key(r): r for r in head_records if _samples(r) is not None}
    rows: list[dict[str, Any]] = []
    for rec in base_records:
        base_s = _samples(rec)
        other = head.get(_key(rec))
        if base_s is None or other is None:
            continue
        head_s = _samples(other)
        (base_r, base_out), (head_r, head_out) = _rounds(rec), _rounds(other)
        paired = paired_rounds(rec, other) if interleaved else None
        if paired is not None:
            evidence, (x, y, diffs) = "paired rounds", paired
        elif interleaved:
            evidence, x, y = "interleaved", base_s, head_s
        elif min(len(base_r), len(head_r)) >= MIN_ROUNDS:
            evidence, x, y = "rounds", base_r, head_r
        else:
            evidence, x, y = "within-run", base_s, head_s
        x, y = np.maximum(x, 1e-9), np.maximum(y, 1e-9)
        if evidence == "paired rounds":
            shift, lo, hi, p = paired_test(diffs, 1.0 - alpha)
        elif evidence == "rounds" and min(x.size, y.size) < RANK_MIN_ROUNDS:
            floor = max(round_floor(rec), round_floor(other))
            shift, lo, hi, p = few_rounds_test(np.log(x), np.log(y), floor, 1.0 - alpha / FEW_ROUNDS_STRICTNESS)
        else:
            shift, lo, hi, p = shift_test(np.log(x), np.log(y), 1.0 - alpha)  # shifts of log time: ratios
        noise = run_noise(np.log(x), np.log(y), noise_k) if evidence == "rounds" else 0.0
        loads = (round_load(rec), round_load(other)) if evidence == "rounds" else (None, None)
        lo, hi = widen(shift, lo, hi, noise)
        base_median, head_median = float(np.median(x)), float(np.median(y))
        rows.append({"case_name": rec["case_name"], "op": rec.get("op"), "evidence": evidence, "n_base": x.size,
                     "n_head": y.size, "rejected": base_out + head_out, "base_load": loads[0],
                     "head_load": loads[1], "comparable": loads_alike(*loads), "base_median_us": base_median,
                     "head_median_us": head_median, "change": head_median / base_median - 1.0,
                     "ci_lo": math.expm1(lo) if math.isfinite(lo) else -math.inf,
                     "ci_hi": math.expm1(hi) if math.isfinite(hi) else math.inf, "noise": math.expm1(noise),
                     "p_value": p})
    df = pd.DataFrame(rows, columns=COLUMNS)
    if df.empty:
        return df
    p_values = df["p_value"].fillna(1.0).to_numpy()  # all-identical samples give p = nan: no evidence of change
    df["q_value"] = sps.false_discovery_control(p_values, method="bh")
    df["verdict"] = [_verdict(r, threshold, alpha, paired_min_effect if r.evidence == "paired rounds" else min_effect)
                     for r in df.itertuples()]
    return df


def _verdict(row: Any, threshold: float, alpha: float, min_effect: float) -> str:
    changed = getattr(row, "evidence", "interleaved") != "within-run" and getattr(row, "comparable", True)
    if changed and row.q_value < alpha and row.ci_lo > min_effect:
        return "REGRESSION"
    if changed and row.q_value < alpha and row.ci_hi < -min_effect:
        return "IMPROVEMENT"
    if -threshold < row.ci_lo and row.ci_hi < threshold:
        return "SAME"
    return "INCONCLUSIVE"


def warnings(df: pd.DataFrame) -> list[str]:
    """What a reader must know before trusting the verdicts (printed by compare and ab, written to its reports)."""
    if df.empty or "evidence" not in df:
        return []
    out = []
    if "rejected" in df and df["rejected"].sum():
        hit = df[df["rejected"] > 0]
        out.append(f"{int(hit['rejected'].sum())} round(s) of {len(hit)} row(s) were rejected as disturbed by the "
                   f"scheduler (most of their samples waited on a run queue or were preempted) and left out")
    significant = df["q_value"] < 0.05
    beyond = (df["ci_lo"] > MIN_EFFECT) | (df["ci_hi"] < -MIN_EFFECT)
    if "noise" in df:
        held = df[(df["evidence"] == "rounds") & significant & (df["verdict"] == "INCONCLUSIVE")
                  & (df["change"].abs() > MIN_EFFECT)]
        if len(held):
            out.append(f"{len(held)} of {len(df)} rows differ significantly between the runs' rounds, but not by "
                       f"more than the runs' own rounds differ (run-to-run noise ±{held['noise'].min():.1%}"
                       f"-{held['noise'].max():.1%} in their CI): INCONCLUSIVE; `harness ab` interleaves both "
                       f"sides in one process and can tell")
    if "comparable" in df and not df["comparable"].all():
        apart = df[~df["comparable"].astype(bool)]
        out.append(f"{len(apart)} of {len(df)} rows ran at loads too far apart to compare (e.g. "
                   f"{apart['base_load'].iloc[0]:.1f} vs {apart['head_load'].iloc[0]:.1f} per CPU; more than "
                   f"{LOAD_MATCH:g}x in load per CPU + 1): at most SAME; re-run at a like load or use `harness ab`")
    within = df[df["evidence"] == "within-run"]
    if within.empty:
        return out
    changed = within[significant & beyond]
    return out + [f"{len(within)} of {len(df)} rows have fewer than {MIN_ROUNDS} usable rounds on a side: compared "
                  f"on samples within one run, which cannot tell a change from run-to-run variation, so they are "
                  f"at most SAME" + (f" ({len(changed)} would look changed: INCONCLUSIVE)" if len(changed) else "")
                  + "; re-run both with --rounds >= 3"]


def parse_fail_on(text: str) -> float:
    """`--fail-on` as a fraction: '5%', '0.05' or 'change:5%' (pytest-benchmark's `--benchmark-compare-fail`
    spelling). Raises ValueError for anything else."""
    match = re.fullmatch(r"(?:change:)?\s*([0-9]*\.?[0-9]+)\s*(%?)", text.strip())
    if not match:
        raise ValueError(f"--fail-on {text!r}: expected a change such as 5% or change:0.05")
    value = float(match[1]) / (100.0 if match[2] else 1.0)
    if value < 0:
        raise ValueError(f"--fail-on {text!r} must not be negative")
    return value


def compatibility_problems(base_meta: RunMeta, head_meta: RunMeta) -> list[str]:
    """Why the two runs' numbers are not comparable: a case table both ran (by file name) with other contents
    (sha256), no table in common, different backends or timing modes. Runs of different table sets are
    comparable: their shared rows are compared (row_differences says which are not)."""
    def tables(meta: RunMeta) -> dict[str, str]:
        return {Path(i["path"]).name: str(i.get("sha256", "")) for i in meta["inputs"]}
    base_tables, head_tables = tables(base_meta), tables(head_meta)
    shared = sorted(base_tables.keys() & head_tables.keys())
    problems = [f"the case table {name} differs between the runs (sha256 {base_tables[name][:12]} vs "
                f"{head_tables[name][:12]})" for name in shared if base_tables[name] != head_tables[name]]
    if base_tables and head_tables and not shared:
        problems.append(f"the runs share no case table ({', '.join(sorted(base_tables))} vs "
                        f"{', '.join(sorted(head_tables))})")
    if base_meta["backend"] != head_meta["backend"]:
        problems.append(f"backends differ: {base_meta['backend']} vs {head_meta['backend']}")
    modes = [meta["settings"]["timing"].get("mode") for meta in (base_meta, head_meta)]
    if modes[0] != modes[1]:
        problems.append(f"timing modes differ: {modes[0]} vs {modes[1]}")
    return problems


def row_differences(base_records: list[dict], head_records: list[dict], limit: int = 5) -> str:
    """'' when both runs timed the same perf rows, else the line saying which rows only one side has (the first
    `limit` names of each): compare_runs compares the rows both have, as pytest-benchmark compares benchmarks."""
    def timed(records: list[dict]) -> dict[tuple[str, str], None]:
        return dict.fromkeys(_key(r) for r in records if _samples(r) is not None)
    base, head = timed(base_records), timed(head_records)
    only = {"base": [k for k in base if k not in head], "head": [k for k in head if k not in base]}
    if not only["base"] and not only["head"]:
        return ""

    def names(keys: list[tuple[str, str]]) -> str:
        shown = ", ".join(name for _, name in keys[:limit])
        return f"{len(keys)} ({shown}{', ...' if len(keys) > limit else ''})" if keys else "0"
    return (f"compared the {len(base.keys() & head.keys())} timed rows both runs have; only in base: "
            f"{names(only['base'])}; only in head: {names(only['head'])}")


def exit_code(df: pd.DataFrame, fail_on: float = 0.0) -> int:
    """1 on any REGRESSION whose estimated change is at least `fail_on` (every REGRESSION by default); 2 when
    nothing could be judged (no rows, or every row INCONCLUSIVE); else 0."""
    if df.empty:
        return 2
    if ((df["verdict"] == "REGRESSION") & (df["change"] >= fail_on)).any():
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
             f"[{pct(r.ci_lo)}, {pct(r.ci_hi)}]", f"±{r.noise:.1%}", f"{r.q_value:.3g}",
             f"{r.n_base}/{r.n_head} {r.evidence}", r.verdict] for r in df.itertuples()]
    return (tabulate(body, headers=["case", "op", "base med us", "head med us", "change", "CI", "run noise", "q (BH)",
                                    "n (evidence)", "verdict"], tablefmt="github") + "\n" + figure_line(df)
            + "\n" + summary_line(df))


def figure_line(df: pd.DataFrame) -> str:
    """What the medians (and the change between them) are medians of, per evidence present."""
    return "medians of " + "; ".join(f"{FIGURE[e]} ({e})" for e in dict.fromkeys(df["evidence"]))


def summary_line(df: pd.DataFrame) -> str:
    counts = df["verdict"].value_counts()
    return f"{len(df)} rows: " + ", ".join(f"{v}: {counts.get(v, 0)}" for v in VERDICTS)


VERDICTS = ("REGRESSION", "IMPROVEMENT", "SAME", "INCONCLUSIVE")


def to_json(df: pd.DataFrame, base_meta: dict, head_meta: dict, settings: dict) -> str:
    """The comparison for machines (`compare --json`): both runs, the settings, warnings and one object per row
    (non-finite CI ends as null)."""
    rows = [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}
            for row in json.loads(df.to_json(orient="records"))] if not df.empty else []
    counts = df["verdict"].value_counts().to_dict() if not df.empty else {}
    run = ("operator", "run_id", "commit", "dirty", "harness", "backend", "hardware", "started")
    return json.dumps({"base": {k: base_meta.get(k) for k in run}, "head": {k: head_meta.get(k) for k in run},
                       "settings": settings, "warnings": warnings(df),
                       "summary": {v: int(counts.get(v, 0)) for v in VERDICTS}, "rows": rows}, indent=1)


def git_commit(rev: str, cwd: str | Path | None = None) -> str | None:
    """Full sha of a git revision, or None when it is not one (or there is no git repository)."""
    try:
        out = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=cwd,
                             capture_output=True, text=True, check=False)
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


#: Names for runs by their place in the history: the newest, the one before it.
RUN_ALIASES = {"latest": 0, "previous": 1}


def _is_library(path: Path) -> bool:
    """A file that is an ELF object (an operator library), not a run's file."""
    try:
        with open(path, "rb") as f:
            return path.is_file() and f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _run_of_operator(ref: str, history: Any, sha256: str = "") -> str | None:
    """The newest reference run whose operator is `ref` as the history recorded it (its revision label exactly,
    else the start of its commit or sha256), or whose library has `sha256`; None when none is. LookupError when the
    runs it names are of two different operator builds (commits, or libraries where no commit is known), with the
    candidates listed: a dirty and a clean run of one commit are one commit, the newest taken."""
    runs = history.runs_of_operator(ref, sha256, REFERENCE_KINDS)
    runs = [r for r in runs if r["exact"]] or runs
    builds: dict[str, str] = {}
    for r in runs:
        builds.setdefault(r["operator_commit"] or f"sha256:{r['operator_sha256'][:12]}", r["operator_rev"] or "?")
    if len(builds) > 1:
        shown = ", ".join(f"{label} ({build[:19]})" for build, label in list(builds.items())[:5])
        raise LookupError(f"{ref} is ambiguous: it names runs of {len(builds)} operator builds: {shown}"
                          f"{', ...' if len(builds) > 5 else ''}; name one by its commit or a run id "
                          "(`harness runs`)")
    return runs[0]["run_id"] if runs else None


def resolve_run(ref: str, history: Any) -> tuple[RunMeta, list[dict]]:
    """A run named by a path (a run directory, results.jsonl or report.json), an operator library's path (the
    newest run of a library with its sha256), a run id in the history, `latest` / `previous`, an operator revision
    as the history recorded it (`harness runs`: the --operator-rev given, `git describe` or commit of the operator's
    checkout, or a library sha256 prefix), or a git revision of this harness (the newest run of that commit); all
    but a path and a run id choose among the runs of REFERENCE_KINDS only (a mutants run must never become the
    reference by being the newest). Read by the one reader (harness.store.stored); raises LookupError (BadRun for a
    damaged run) saying what was tried, or that `ref` is ambiguous."""
    from harness.store.provenance import sha256

    if Path(ref).exists() and _is_library(Path(ref)):
        digest = sha256(ref)
        run_id = _run_of_operator(ref, history, digest) if history.exists() else None
        if run_id is None:
            raise LookupError(f"{ref}: no recorded run of kind {' or '.join(REFERENCE_KINDS)} judged this library "
                              f"(sha256 {digest[:12]}) in {history.path}; run `harness run --operator-lib {ref}`")
        return read_history(history, run_id)
    if Path(ref).exists():
        meta, records, _ = read_path(Path(ref))
        return meta, records
    if history.exists():
        if history.has_run(ref):
            return read_history(history, ref)
        if ref in RUN_ALIASES:
            ids = history.recent_run_ids(RUN_ALIASES[ref] + 1, REFERENCE_KINDS)
            if len(ids) <= RUN_ALIASES[ref]:
                raise LookupError(f"{ref}: {history.path} holds only {len(ids)} run(s) of kind "
                                  f"{' or '.join(REFERENCE_KINDS)} (others are named by their run id)")
            return read_history(history, ids[RUN_ALIASES[ref]])
        run_id = _run_of_operator(ref, history)
        if run_id is not None:
            return read_history(history, run_id)
        commit = git_commit(ref)
        if commit:
            run_id = history.latest_run_of_commit(commit, REFERENCE_KINDS)
            if run_id:
                return read_history(history, run_id)
            raise LookupError(f"{ref} is commit {commit[:12]}, but {history.path} holds no run of it of kind "
                              f"{' or '.join(REFERENCE_KINDS)}")
    raise LookupError(f"{ref!r} is neither a run directory, results.jsonl, report.json or operator library path, a "
                      f"run id in {history.path}, latest/previous, an operator revision it recorded, nor a git "
                      "revision with a recorded run")


def run_line(label: str, meta: dict) -> str:
    """One side of a comparison, the operator first: its revision and library, then the run, the harness commit,
    the backend and hardware."""
    operator = meta.get("operator") or {}
    hardware = meta.get("hardware")
    name = hardware.get("name") if isinstance(hardware, dict) else meta.get("device", "")
    sha = str(operator.get("sha256") or "")
    return (f"{label}: operator {operator.get('label') or '?'}" + (f" (library sha256 {sha[:12]})" if sha else "")
            + f", run {meta.get('run_id')} (harness commit {str(meta.get('commit') or '?')[:12]}"
            f"{', dirty' if meta.get('dirty') else ''}; {meta.get('backend', '?')} on {name or '?'})")


def harness_change(base_meta: dict, head_meta: dict) -> str:
    """The line saying the judging harness differs between two runs ("" when it does not, or is not known):
    a change of the judge is a change too, so it is said, not hidden."""
    sides = [meta.get("harness") or {} for meta in (base_meta, head_meta)]
    shown = [f"{h.get('version') or '?'} at {str(h.get('commit') or '?')[:12]}{' (dirty)' if h.get('dirty') else ''}"
             for h in sides]
    known = all(h.get("version") and h.get("commit") and h.get("commit") != "unknown" for h in sides)
    if not known or shown[0] == shown[1]:
        return ""
    return f"the harness differs between the runs: {shown[0]} vs {shown[1]} (the judge changed, not only the operator)"
