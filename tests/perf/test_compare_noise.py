"""compare between separate runs on synthetic rounds: the run-to-run term that keeps a load change between two
runs from reading as a regression, and the rounds the scheduler disturbed, left out and counted. Each rule has its
negative control: a real shift is still caught, and without the rule the same records would be a REGRESSION."""
import numpy as np
import pytest

from harness.perf.compare import compare_runs, run_noise, warnings, widen
from harness.model.record import new_record


def run_of(rng, level, rounds=6, spread=0.03, rejected=0):
    """A perf record of one run: `rounds` rounds around `level` us (each round's p10 scattered by `spread`, as
    fresh processes scatter), the first `rejected` of them rejected as disturbed."""
    p10s = level * np.exp(rng.normal(0, spread, rounds))
    samples = np.concatenate([p * (1 + np.abs(rng.normal(0, 0.05, 30))) for p in p10s])
    r = new_record("TC_PF_0010", "csymm", "cases/csymm_test.csv", 2, 0, is_perf=True)
    r["timing"] = {"mode": "sync", "n": samples.size, "mean_us": float(samples.mean()),
                   "samples_us": samples.tolist(),
                   "rounds": [{"p10_us": None, "rejected": "disturbed: 28 of 30 samples"} if i < rejected
                              else {"p10_us": float(p)} for i, p in enumerate(p10s)]}
    return r


def verdicts(base, head, **kw):
    return compare_runs(base, head, **kw)["verdict"].tolist()


def test_run_noise_is_k_times_the_median_difference_between_rounds_of_the_noisier_run():
    base, head = np.log([100.0, 104.0, 102.0]), np.log([110.0, 110.0])
    diffs = [np.log(104 / 100), np.log(102 / 100), np.log(104 / 102)]
    assert run_noise(base, head, 2.0) == pytest.approx(2.0 * np.median(diffs))
    assert run_noise(head, base, 2.0) == run_noise(base, head, 2.0)      # a quiet side does not hide the other's
    assert run_noise(np.log([100.0]), np.log([120.0])) == 0.0
    lo, hi = widen(0.10, 0.06, 0.12, 0.03)                  # quadrature: 0.04 and 0.03 -> 0.05; 0.02 -> 0.036
    assert (lo, hi) == (pytest.approx(0.05), pytest.approx(0.10 + np.hypot(0.02, 0.03)))


#: Measured (benchmarks/compare_calibration.py, load 8-35, unchanged twin, separate default runs): each row's rounds'
#: p10 in us in two runs, the four of 210 row comparisons the rounds' shift test alone called changed. A quiet spell
#: gives one run tight rounds; the other run's neighbours slowed its rounds, each by its own amount.
UNCHANGED_PAIRS = {
    "TC_PF_0012": ([81.3, 63.3, 50.4, 51.1], [47.7, 48.3, 49.7, 49.0, 47.5]),
    "TC_PF_0013": ([74.3, 56.0, 44.2, 45.5], [43.5, 43.1, 43.1, 41.7, 42.2]),
    "TC_PF_0200": ([66.6, 51.9, 63.1, 51.9], [50.2, 50.9, 50.6, 50.7, 50.0, 50.5]),
    "TC_PF_0201": ([50.2, 50.9, 50.6, 50.7, 50.0, 50.5], [57.0, 53.9, 51.5, 56.7, 56.8, 66.9]),
}


def record_of(name, p10s):
    r = new_record(name, "csymm", "cases/csymm_test.csv", 2, 0, is_perf=True)
    samples = [p * f for p in p10s for f in (1.0, 1.1, 1.2)]
    r["timing"] = {"mode": "sync", "n": len(samples), "mean_us": float(np.mean(samples)), "samples_us": samples,
                   "rounds": [{"p10_us": p} for p in p10s]}
    return r


def test_a_load_change_between_unchanged_runs_is_no_regression(monkeypatch):
    from harness.perf import compare

    base = [record_of(name, b) for name, (b, _) in UNCHANGED_PAIRS.items()]
    head = [record_of(name, h) for name, (_, h) in UNCHANGED_PAIRS.items()]
    with monkeypatch.context() as m:  # the rank test on every round count, as these pairs were measured with
        m.setattr(compare, "RANK_MIN_ROUNDS", 0)
        naive = compare_runs(base, head, noise_k=0.0)
    assert set(naive["verdict"]) <= {"REGRESSION", "IMPROVEMENT"}    # the negative control: without the term
    honest = compare_runs(base, head)
    assert set(honest["verdict"]) == {"INCONCLUSIVE"} and (honest["noise"] > 0.02).all()
    assert any("not by more than the runs' own rounds differ" in w for w in warnings(honest))
    assert set(compare_runs(head, base)["verdict"]) == {"INCONCLUSIVE"}


def test_a_real_slowdown_is_still_caught():
    rng = np.random.default_rng(5)
    base = [run_of(rng, 60.0) for _ in range(20)]
    slower = [run_of(rng, 60.0 * 1.25) for _ in range(20)]  # 25 % slower, rounds 3 % apart
    assert [v for b, h in zip(base, slower) for v in verdicts([b], [h])].count("REGRESSION") == 20
    tight = [run_of(rng, 60.0, spread=0.004) for _ in range(20)]
    slow5 = [run_of(rng, 63.0, spread=0.004) for _ in range(20)]  # 5 % slower, rounds 0.4 % apart
    assert [v for b, h in zip(tight, slow5) for v in verdicts([b], [h])].count("REGRESSION") == 20
    faster = [run_of(rng, 45.0) for _ in range(20)]
    assert set(v for b, h in zip(base, faster) for v in verdicts([b], [h])) == {"IMPROVEMENT"}


def test_the_ci_printed_includes_the_run_to_run_term():
    rng = np.random.default_rng(7)
    base, head = run_of(rng, 60.0), run_of(rng, 66.0)
    plain = compare_runs([base], [head], noise_k=0.0).iloc[0]
    row = compare_runs([base], [head]).iloc[0]
    assert row["noise"] > 0.02 and plain["noise"] == 0.0
    assert row["ci_lo"] < plain["ci_lo"] and row["ci_hi"] > plain["ci_hi"]


def test_disturbed_rounds_are_left_out_and_counted():
    rng = np.random.default_rng(11)
    base, head = run_of(rng, 60.0, rejected=2), run_of(rng, 90.0, rejected=1)
    row = compare_runs([base], [head]).iloc[0]
    assert row["evidence"] == "rounds" and (row["n_base"], row["n_head"], row["rejected"]) == (4, 5, 3)
    assert row["verdict"] == "REGRESSION"                   # what is left still tells a 50 % slowdown
    assert any(w.startswith("3 round(s) of 1 row(s) were rejected as disturbed") for w in
               warnings(compare_runs([base], [head])))


def test_too_few_undisturbed_rounds_are_within_run_evidence_never_a_regression():
    rng = np.random.default_rng(13)
    base, head = run_of(rng, 60.0, rounds=4, rejected=2), run_of(rng, 90.0, rounds=4)
    df = compare_runs([base], [head])
    assert df.iloc[0]["evidence"] == "within-run" and df.iloc[0]["verdict"] != "REGRESSION"
    assert any("fewer than 3 usable rounds" in w for w in warnings(df))


def test_runs_at_loads_far_apart_are_not_compared_for_a_change():
    """Measured (load 21 vs 36 on 2 CPUs, unchanged code but for a 5 % slower side B): every round of TC_PF_0178
    read ~31 % faster in the quieter run, 4 % apart inside each run, an offset no spread of rounds shows."""
    busy, quiet = [67.8, 64.6, 64.7, 61.9, 65.1], [52.7, 44.4, 44.4, 44.3, 46.3, 44.0, 44.9]

    def at(p10s, load):
        r = record_of("TC_PF_0178", p10s)
        for x in r["timing"]["rounds"]:
            x.update(load=load, cpus=2)
        return r
    alike = compare_runs([at(busy, 36.0)], [at(quiet, 36.0)]).iloc[0]
    assert alike["verdict"] == "IMPROVEMENT" and alike["comparable"]      # the negative control: a like load
    apart = compare_runs([at(busy, 36.0)], [at(quiet, 22.0)])
    assert apart.iloc[0]["verdict"] == "INCONCLUSIVE" and not apart.iloc[0]["comparable"]
    assert (apart.iloc[0]["base_load"], apart.iloc[0]["head_load"]) == (18.0, 11.0)
    assert any("ran at loads too far apart to compare (e.g. 18.0 vs 11.0 per CPU" in w for w in warnings(apart))


def test_loads_alike_per_cpu():
    from harness.perf.compare import loads_alike
    assert loads_alike(0.25, 0.75) and loads_alike(None, 30.0)            # light loads are alike; unknown is
    assert not loads_alike(11.0, 18.0) and not loads_alike(0.0, 0.6)
