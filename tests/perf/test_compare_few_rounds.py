"""compare between separate runs with the cpu default of 3 rounds per row (harness.perf.compare.few_rounds_test):
ranks of 3 against 3 rounds can never decide (negative control), the rounds' means with the samples' floor can, and
unchanged pairs whose runs sit at different levels are not called a REGRESSION. The rounds here are synthetic, made
like the twin's (a run's level, each round's p10 scattered around it, 30 samples per round above the p10); the
measured false-alarm rate on real runs is benchmarks/compare_calibration.py's."""
from __future__ import annotations

import numpy as np

from harness.perf import compare
from harness.perf.compare import compare_runs, few_rounds_test, round_floor
from harness.model.record import new_record

ROUNDS = 3


def run_of(rng: np.random.Generator, name: str, level: float, round_spread: float, run_spread: float) -> dict:
    """One run of a row: its level moved by the run's own state (`run_spread`, the load it met), each round's p10
    scattered by `round_spread`, each round's 30 samples at or above its p10 (contention only adds time)."""
    run_level = level * np.exp(rng.normal(0, run_spread))
    p10s = run_level * np.exp(rng.normal(0, round_spread, ROUNDS))
    rounds = [p * (1 + np.abs(rng.normal(0, 0.04, 30))) for p in p10s]
    samples = np.concatenate(rounds)
    r = new_record(name, "csymm", "cases/csymm_test.csv", 2, 0, is_perf=True)
    r["timing"] = {"mode": "sync", "n": samples.size, "mean_us": float(samples.mean()), "samples_us": samples.tolist(),
                   "rounds": [{"n": 30, "p10_us": float(np.percentile(x, 10))} for x in rounds]}
    return r


def pairs(rng, rows: int, slowdown: float, round_spread: float, run_spread: float) -> tuple[list, list]:
    base = [run_of(rng, f"TC_PF_{i:04d}", 50.0 + 7 * i, round_spread, run_spread) for i in range(rows)]
    head = [run_of(rng, f"TC_PF_{i:04d}", (50.0 + 7 * i) * (1 + slowdown), round_spread, run_spread)
            for i in range(rows)]
    return base, head


def test_a_10_percent_slowdown_near_idle_is_caught_with_three_rounds(monkeypatch):
    rng = np.random.default_rng(36)
    base, head = pairs(rng, 10, 0.10, round_spread=0.005, run_spread=0.003)  # near idle: rounds +-0.5 %
    got = compare_runs(base, head)
    assert set(got["evidence"]) == {"rounds"} and set(got["n_base"]) == {ROUNDS}
    assert (got["verdict"] == "REGRESSION").sum() >= 9, got[["case_name", "change", "ci_lo", "ci_hi", "verdict"]]
    with monkeypatch.context() as m:  # negative control: the ranks of 3 rounds against 3 never decide
        m.setattr(compare, "RANK_MIN_ROUNDS", 0)
        ranks = compare_runs(base, head)
    assert set(ranks["verdict"]) == {"INCONCLUSIVE"} and np.isinf(ranks["ci_lo"]).all()


def test_unchanged_runs_under_load_give_no_regression_over_250_pairs(monkeypatch):
    """Loaded: rounds 2 % apart and each run's level off by 1 % (the load it met), 25 run pairs of 10 rows. (Runs
    whose levels differ by more than their rounds do, a steady load change, are LOAD_MATCH's: test_compare_noise.)"""
    rng = np.random.default_rng(7)
    runs = [pairs(rng, 10, 0.0, round_spread=0.02, run_spread=0.01) for _ in range(25)]
    got = [compare_runs(b, h) for b, h in runs]
    verdicts = np.concatenate([g["verdict"].to_numpy() for g in got])
    assert verdicts.size == 250 and (verdicts == "REGRESSION").sum() == 0 and (verdicts == "IMPROVEMENT").sum() == 0
    # negative control: the same pairs at 95 % without the floor and the run-to-run term: three rounds that happen
    # to agree read as exact, and level offsets between runs become verdicts
    with monkeypatch.context() as m:
        m.setattr(compare, "P10_SE_MADS", 0.0)
        m.setattr(compare, "FEW_ROUNDS_STRICTNESS", 1.0)
        naive = np.concatenate([compare_runs(b, h, noise_k=0.0)["verdict"].to_numpy() for b, h in runs])
    assert (naive == "REGRESSION").sum() + (naive == "IMPROVEMENT").sum() > 0


def test_the_floor_comes_from_the_rounds_samples():
    rng = np.random.default_rng(1)
    quiet = run_of(rng, "TC_PF_0001", 50.0, 0.0, 0.0)
    floor = round_floor(quiet)
    assert 0.001 < floor < 0.05  # 30 samples spread ~3 % above the p10: about a percent
    shift, lo, hi, p = few_rounds_test(np.log([50.0, 50.0, 50.0]), np.log([55.0, 55.0, 55.0]), floor, 0.95)
    assert lo < shift < hi and hi - lo > 2 * floor and p < 0.05  # identical rounds are not exact
    assert few_rounds_test(np.log([50.0, 50.0, 50.0]), np.log([50.0, 50.0, 50.0]), 0.0, 0.95)[3] == 1.0
