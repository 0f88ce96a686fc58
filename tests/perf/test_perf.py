"""Perf and memory verdicts at their exact boundaries."""
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.perf.verdict import baseline_verdicts, memory_verdict, same_hardware

HW = "Ascend 950PR"


def baseline(kind, value_us, hardware=HW, ratio_rule=0.4):
    """Stands in for harness.perf.baselines.Baseline: perf reads only these attributes."""
    return SimpleNamespace(kind=kind, op="csymm", case_name="TC_PF_001", key="", value_us=value_us,
                           hardware=hardware, source="task book", method="ACL events", ratio_rule=ratio_rule)


def timing(mean, lo, hi):
    return {"n": 50, "mean_us": mean, "ci95_us": [lo, hi]}


def verdict(t, b, hw=HW):
    [v] = baseline_verdicts(t, [b], hw)
    return v


@pytest.mark.parametrize("mean, lo, hi, expected", [
    (7.53, 7.0, 8.0, "PASS"),            # mean exactly at the limit passes
    (7.52, 7.0, 9.0, "PASS"),            # under the limit passes even when the CI reaches over it
    (7.54, 7.0, 8.0, "INCONCLUSIVE"),    # over the limit, CI straddles
    (7.60, 7.53, 7.7, "INCONCLUSIVE"),   # CI touching the limit is not "whole CI above"
    (7.60, 7.5301, 7.7, "FAIL"),         # whole CI above
])
def test_taskbook_boundaries(mean, lo, hi, expected):
    v = verdict(timing(mean, lo, hi), baseline("taskbook", 7.53))
    assert v["verdict"] == expected
    assert v["measured_mean_us"] == mean and v["value_us"] == 7.53
    assert v["ratio"] == pytest.approx(7.53 / mean)
    assert v["implied_factor"] == pytest.approx(mean / 7.53)
    assert (v["implied_factor"] <= 1) == (expected == "PASS")


@pytest.mark.parametrize("mean, lo, expected", [
    (25.0, 20.0, "PASS"),          # 10/25 = 0.4 exactly
    (25.01, 20.0, "INCONCLUSIVE"), # ratio just under, but the fast end of the CI would pass
    (30.0, 25.0, "INCONCLUSIVE"),  # favourable end 10/25 = 0.4: not provably failing
    (30.0, 25.01, "FAIL"),         # even the favourable end is under the rule
])
def test_gpu_ratio_boundaries(mean, lo, expected):
    v = verdict(timing(mean, lo, mean + 1), baseline("gpu", 10.0))
    assert v["verdict"] == expected
    assert v["ratio"] == pytest.approx(10.0 / mean)
    assert v["ratio_rule"] == 0.4
    assert v["implied_factor"] == pytest.approx(0.4 * mean / 10.0)


def test_both_baselines_reported_separately():
    out = baseline_verdicts(timing(20.0, 19.0, 21.0), [baseline("taskbook", 7.53), baseline("gpu", 10.0)], HW)
    assert [(v["kind"], v["verdict"]) for v in out] == [("taskbook", "FAIL"), ("gpu", "PASS")]
    assert {"kind", "verdict", "value_us", "measured_mean_us", "ratio", "implied_factor", "hardware", "source",
            "method"} <= set(out[0])


def test_other_hardware_shows_ratio_but_no_verdict():
    v = verdict(timing(5.0, 4.0, 6.0), baseline("taskbook", 7.53), hw="cpu-twin (x86_64)")
    assert v["verdict"] == "NO_REF"
    assert "Ascend 950PR" in v["reason"] and "cpu-twin" in v["reason"]
    assert v["ratio"] == pytest.approx(7.53 / 5.0)


def test_hardware_names_compare_loosely_but_not_empty():
    assert same_hardware("Ascend 950PR", "ascend950pr")
    assert not same_hardware("Ascend 950PR", "Ascend 910B")
    assert not same_hardware("", "")
    assert verdict(timing(5.0, 4.0, 6.0), baseline("taskbook", 7.53, hardware=""), hw="")["verdict"] == "NO_REF"


def test_no_baselines_and_untimed_rows():
    assert baseline_verdicts(timing(5.0, 4.0, 6.0), [], HW) == [{"kind": "none", "verdict": "NO_REF"}]
    v = verdict(None, baseline("taskbook", 7.53))
    assert v["verdict"] == "NO_REF" and v["reason"]


def test_single_sample_without_ci_never_fails():
    t = {"n": 1, "mean_us": 100.0, "ci95_us": None}
    assert verdict(t, baseline("taskbook", 7.53))["verdict"] == "INCONCLUSIVE"
    assert verdict({"n": 1, "mean_us": 5.0, "ci95_us": None}, baseline("taskbook", 7.53))["verdict"] == "PASS"


def test_memory_verdict():
    m = {"workspace_bytes": 4096, "peak_bytes": 10_000}
    assert memory_verdict(4096, m)["verdict"] == "PASS"
    bad = memory_verdict(4097, m)
    assert bad["verdict"] == "FAIL" and "4096" in bad["reason"]
    assert memory_verdict(None, m)["verdict"] == "NO_REF"
    assert memory_verdict(4096, {"workspace_bytes": None, "peak_bytes": None})["verdict"] == "NO_REF"
    assert memory_verdict(0, {"workspace_bytes": 0, "peak_bytes": 0})["verdict"] == "PASS"
    good = memory_verdict(4096, m)
    assert good["expected_workspace_bytes"] == 4096 and good["peak_bytes"] == 10_000 and good["workspace_bytes"] == 4096


def test_gpu_ratio_judges_ascend_times_against_a_baseline_measured_on_a_gpu():
    gpu = baseline("gpu", 20.0, hardware="NVIDIA H100")  # gpu_us = 20: pass needs npu mean <= 50 us
    assert verdict(timing(40.0, 39.0, 41.0), gpu, hw="Ascend 950PR")["verdict"] == "PASS"
    assert verdict(timing(60.0, 59.0, 61.0), gpu, hw="Ascend 950PR")["verdict"] == "FAIL"
    # the same numbers measured anywhere else (the GPU itself, the CPU twin) are shown but not judged
    for elsewhere in ("NVIDIA H100", "cpu twin (2 emulated cores)"):
        v = verdict(timing(40.0, 39.0, 41.0), gpu, hw=elsewhere)
        assert v["verdict"] == "NO_REF" and v["ratio"] == pytest.approx(0.5)


def test_hardware_identity_prefers_runtime_then_override():
    from harness.perf.verdict import hardware_identity
    npu_info = {"device": "npu 0", "hardware": "Ascend 950PR", "soc_name": "Ascend950PR_9599"}
    assert hardware_identity(npu_info, None) == {"name": HW, "detected": HW, "override": None}
    assert hardware_identity({"device": "cpu twin (2 emulated cores)"}, None)["name"] == "cpu twin (2 emulated cores)"
    assert hardware_identity(npu_info, "Ascend 910B") == {"name": "Ascend 910B", "detected": HW,
                                                          "override": "Ascend 910B"}


def test_a_device_run_with_no_judged_baseline_says_so():
    from harness.model.record import unjudged_device_run
    timed = {"timing": {"n": 50}, "baseline": [{"kind": "taskbook", "verdict": "NO_REF"}]}
    judged = {"timing": {"n": 50}, "baseline": [{"kind": "taskbook", "verdict": "FAIL"}]}
    untimed = {"timing": None, "baseline": [{"kind": "none", "verdict": "NO_REF"}]}
    line = unjudged_device_run([timed, untimed], "npu", "Ascend 910B")
    assert "no perf row got a judged baseline on Ascend 910B" in line and "\n" not in line
    assert unjudged_device_run([timed, judged], "npu", HW) == ""
    assert unjudged_device_run([timed], "cpu", "cpu twin") == ""        # no baseline is for the cpu backend
    assert unjudged_device_run([untimed], "cuda", "H100") == ""          # nothing timed: nothing to judge


@pytest.mark.slow  # 51 s of a bare pytest -n 2 at load ~20
def test_rounds_each_in_a_fresh_process_merged_once_per_row():
    """runner.run's perf phase on the twin: one record per row, each with its rounds, none from the settling pass;
    a round that is cut short by the budget keeps at least the 3 rounds compare needs."""
    from harness.run import runner
    from harness.tables.load import load_cases
    from harness.model.settings import TimingConfig
    table = Path(__file__).resolve().parents[2] / "cases" / "csymm_test.csv"
    cases = load_cases([table], "TC_PF_0010 or TC_PF_0011")
    # a cap of 3 s: the rounds' calls must not fill them (at load 40 a worker start alone took more than 0.5 s, and
    # the samples' deadline is set after it)
    config = TimingConfig(warmup=2, min_samples=10, max_time_s=3.0, warmup_max_time_s=0.01, rounds=4)
    got = []
    runner.run(cases, runner.Settings(timing=config), got.append)
    assert sorted(r["case_name"] for r in got) == ["TC_PF_0010", "TC_PF_0011"]
    for rec in got:
        assert rec["verdict"] == "PASS" and 3 <= len(rec["timing"]["rounds"]) <= 4
        assert rec["timing"]["n"] == sum(r["n"] for r in rec["timing"]["rounds"])
        assert rec["baseline"] == [{"kind": "none", "verdict": "NO_REF"}]


@pytest.mark.slow  # three worker starts
def test_a_slow_set_up_does_not_cost_a_cheap_row_its_rounds(monkeypatch):
    """A cheap row whose planning (here made 0.5 s slower, as on a loaded machine) takes its first round past the cap
    still gets the 3 rounds compare needs: one round is for a row whose calls filled its round. (Before, the round's
    wall time decided, and this row kept one round.)"""
    import time
    from harness.run import runner
    from harness.run.row_judge import RowJudge
    from harness.tables.load import load_cases
    from harness.model.settings import TimingConfig

    prepare = RowJudge._prepare
    monkeypatch.setattr(RowJudge, "_prepare", lambda judge, *a: time.sleep(0.5) or prepare(judge, *a))
    table = Path(__file__).resolve().parents[2] / "cases" / "csymm_test.csv"
    config = TimingConfig(warmup=2, min_samples=10, max_time_s=0.2, warmup_max_time_s=0.01, rounds=3)
    got = []
    runner.run(load_cases([table], "TC_PF_0010"), runner.Settings(timing=config), got.append)
    assert [r["verdict"] for r in got] == ["PASS"] and got[0]["duration_s"] > 3 * 0.5
    assert len(got[0]["timing"]["rounds"]) == 3
