"""harness.perf.timing with a fake device: calls advance a virtual clock, so nothing real is timed."""
import itertools

import numpy as np
import pytest

from harness.perf import timing
from harness.perf.timing import RunningCI, measure
from harness.model.settings import TimingConfig


@pytest.fixture(autouse=True)
def quiet_scheduler(monkeypatch):
    """The fake device's samples are virtual: the real scheduler must not mark them disturbed (a loaded machine
    would, at random, and change their rounds' p10)."""
    class Quiet(timing.SchedProbe):
        def read(self):
            return 0, 0
    monkeypatch.setattr(timing, "SchedProbe", Quiet)


class FakeDevice:
    """A virtual clock; each call costs the next duration from `durations` (seconds)."""

    def __init__(self, durations):
        self.now = 0.0
        self.durations = iter(durations)
        self.calls = 0
        self.events = []          # what happened, in order, to check the timed region holds only calls

    def call(self):
        self.calls += 1
        self.events.append("call")
        self.now += next(self.durations)
        return 0

    def clock(self):
        return self.now

    def timer(self):
        device = self

        class Timer:
            def start(self):
                device.events.append("start")
                self.t0 = device.now

            def stop(self):
                device.events.append("stop")
                self.t1 = device.now

            def elapsed_s(self):
                device.events.append("sync")
                return self.t1 - self.t0

        return Timer()


def constant(us):
    return itertools.repeat(us * 1e-6)


def test_steady_samples_stop_at_min_samples_when_converged():
    dev = FakeDevice(constant(5.0))
    cfg = TimingConfig(mode="sync", warmup=10, min_samples=50)
    t = measure(dev.call, dev.timer, cfg, clock=dev.clock)
    assert t["n"] == 50 and t["warmup"] == 10 and dev.calls == 60
    assert t["converged"] is True and t["stop_reason"] == "ci_target"
    assert t["mean_us"] == pytest.approx(5.0) and len(t["samples_us"]) == 50
    for key in ("mode", "n", "warmup", "mean_us", "median_us", "min_us", "p90_us", "stdev_us", "ci95_us",
                "samples_us", "converged", "outliers", "stop_reason"):
        assert key in t


def test_timed_region_holds_only_the_call():
    dev = FakeDevice(constant(1.0))
    measure(dev.call, dev.timer, TimingConfig(warmup=2, min_samples=3, max_samples=3), clock=dev.clock)
    assert dev.events == ["start", "call", "stop", "sync"] * 5


def test_steady_mode_batches_calls_and_reports_per_call():
    dev = FakeDevice(constant(2.0))
    cfg = TimingConfig(mode="steady", warmup=1, min_samples=4, max_samples=4, steady_batch=8)
    t = measure(dev.call, dev.timer, cfg, clock=dev.clock)
    assert dev.events[:10] == ["start"] + ["call"] * 8 + ["stop"]
    assert t["mode"] == "steady" and t["n"] == 4 and dev.calls == 5 * 8
    assert t["mean_us"] == pytest.approx(2.0) and t["calls_per_sample"] == 8


def test_noisy_row_extends_past_min_samples_until_max():
    rng = np.random.default_rng(0)
    dev = FakeDevice(iter(rng.uniform(1e-6, 3e-6, 10_000)))
    cfg = TimingConfig(warmup=0, min_samples=50, max_samples=200, ci_rel_target=0.001, max_time_s=1e9)
    t = measure(dev.call, dev.timer, cfg, clock=dev.clock)
    assert t["n"] == 200 and t["converged"] is False and t["stop_reason"] == "max_samples"


def test_noisy_row_converges_once_ci_is_narrow_enough():
    rng = np.random.default_rng(0)
    dev = FakeDevice(iter(rng.uniform(1e-6, 3e-6, 10_000)))
    cfg = TimingConfig(warmup=0, min_samples=50, max_samples=5000, ci_rel_target=0.02, max_time_s=1e9)
    t = measure(dev.call, dev.timer, cfg, clock=dev.clock)
    assert 50 < t["n"] < 5000 and t["converged"] is True
    lo, hi = t["ci95_us"]
    assert (hi - lo) / 2 / t["mean_us"] <= 0.02
    # one sample fewer would not have met the target: the rule stops at the first n that does
    prev = np.array(t["samples_us"][:-1])
    from scipy import stats as sps
    half = sps.t.ppf(0.975, prev.size - 1) * sps.sem(prev)
    assert half / prev.mean() > 0.02


@pytest.mark.parametrize("checked_s, cap_s, warmups", [
    (0.25, 0.2, 0),    # the checked call outlasts the cap and WARM_CALL_S: it was the warm-up
    (0.25, 1.0, 4),    # within the cap: warmed up as ever (calls started at 0, .25, .5, .75 s)
    (0.05, 0.01, 1),   # over a small cap but short: its first sample ran ~10 % slow (WARM_CALL_S), so warmed up
])
def test_a_long_checked_call_is_the_warm_up(checked_s, cap_s, warmups):
    dev = FakeDevice(itertools.repeat(0.25))
    cfg = TimingConfig(warmup=10, min_samples=4, max_samples=4, max_time_s=10.0, warmup_max_time_s=cap_s)
    t = measure(dev.call, dev.timer, cfg, clock=dev.clock, warmed_s=checked_s)
    assert (t["warmup"], t["n"], dev.calls) == (warmups, 4, warmups + 4)


def test_slow_row_stops_at_time_cap_below_min_samples_and_is_not_converged():
    dev = FakeDevice(itertools.repeat(0.25))   # 0.25 s per call, identical: CI width zero
    cfg = TimingConfig(warmup=10, min_samples=50, max_time_s=3.0, warmup_max_time_s=1.0)
    t = measure(dev.call, dev.timer, cfg, clock=dev.clock)
    assert t["warmup"] == 4                    # warm-up cap: started at 0, .25, .5, .75 s; 1.0 s stops it
    assert t["n"] == 12 and t["stop_reason"] == "time_cap"
    assert t["converged"] is False             # never converged below min_samples, even with zero spread


def test_a_single_sample_longer_than_the_cap_is_still_reported():
    dev = FakeDevice(itertools.repeat(5.0))
    t = measure(dev.call, dev.timer, TimingConfig(warmup=0, max_time_s=1.0), clock=dev.clock)
    assert t["n"] == 1 and t["ci95_us"] is None and t["converged"] is False


def test_bad_config_is_rejected():
    with pytest.raises(ValueError):
        TimingConfig(mode="async")
    with pytest.raises(ValueError):
        TimingConfig(min_samples=100, max_samples=50)


def test_running_ci_matches_batch_formula():
    from scipy import stats as sps
    xs = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]
    r = RunningCI()
    for x in xs:
        r.add(x)
    lo, hi = sps.t.interval(0.95, len(xs) - 1, loc=np.mean(xs), scale=sps.sem(xs))
    assert r.rel_half_width() == pytest.approx((hi - lo) / 2 / np.mean(xs))


def test_not_converged_says_why_cap():
    dev = FakeDevice(itertools.repeat(0.25))
    t = measure(dev.call, dev.timer, TimingConfig(warmup=0, min_samples=50, max_time_s=3.0), clock=dev.clock)
    assert t["not_converged"].startswith("cap: 12 of 50 samples within the 3 s time cap")


def test_not_converged_says_why_noise_and_modes():
    rng = np.random.default_rng(1)
    durations = iter(np.where(rng.random(5000) < 0.5, 480e-6, 830e-6) * (1 + rng.normal(0, 0.01, 5000)))
    dev = FakeDevice(durations)
    t = measure(dev.call, dev.timer, TimingConfig(warmup=0, max_samples=200), clock=dev.clock)
    assert t["converged"] is False and t["stop_reason"] == "max_samples"
    assert "noise: CI of the mean" in t["not_converged"] and "multimodal: modes at" in t["not_converged"]


def test_a_bimodal_row_is_never_converged_even_when_its_ci_is_narrow():
    rng = np.random.default_rng(1)
    durations = np.where(rng.random(5000) < 0.5, 100e-6, 104e-6) * (1 + rng.normal(0, 0.001, 5000))
    dev = FakeDevice(iter(durations))
    t = measure(dev.call, dev.timer, TimingConfig(warmup=0, min_samples=400, max_samples=1000), clock=dev.clock)
    assert t["stop_reason"] == "ci_target" and len(t["modes_us"]) == 2
    assert t["converged"] is False and t["not_converged"].startswith("multimodal")


def test_per_round_shares_samples_and_caps():
    cfg = TimingConfig(min_samples=50, max_samples=1000, max_time_s=0.4, warmup_max_time_s=0.1, rounds=5)
    r = cfg.per_round()
    assert (r.rounds, r.min_samples, r.max_samples) == (1, 10, 200)
    assert r.max_time_s == pytest.approx(0.08) and r.warmup_max_time_s == pytest.approx(0.02)
    assert TimingConfig(rounds=1).per_round() == TimingConfig()
    with pytest.raises(ValueError):
        TimingConfig(rounds=0)


def test_merge_rounds_takes_the_ci_between_rounds():
    from harness.perf.timing import merge_rounds
    cfg = TimingConfig(warmup=0, min_samples=20, max_samples=20, rounds=4)
    rng = np.random.default_rng(3)
    rounds = []
    for level in (100e-6, 110e-6, 95e-6, 105e-6):   # each process at its own level, tight inside
        dev = FakeDevice(iter(level * (1 + rng.normal(0, 0.001, 100))))
        rounds.append(measure(dev.call, dev.timer, cfg.per_round(), clock=dev.clock))
    merged = merge_rounds(rounds, cfg)
    assert merged["n"] == 20 and len(merged["rounds"]) == 4
    assert [r["n"] for r in merged["rounds"]] == [5, 5, 5, 5]
    logs = np.log([r["mean_us"] for r in rounds])
    lo, hi = merged["ci95_us"]
    assert merged["mean_us"] == pytest.approx(np.mean([r["mean_us"] for r in rounds]))
    assert np.log(hi / merged["mean_us"]) == pytest.approx(3.182 * logs.std(ddof=1) / 2, rel=1e-3)  # t(3), 4 rounds
    assert np.log(merged["mean_us"] / lo) == pytest.approx(np.log(hi / merged["mean_us"]))
    within = merged["ci95_within_us"]
    assert (within[1] - within[0]) * 3 < hi - lo                           # pooled samples claim far less
    assert merged["converged"] is False and merged["not_converged"].startswith("noise")
    assert merged["rounds"][0]["p10_us"] == pytest.approx(np.percentile(rounds[0]["samples_us"], 10))


def test_more_rounds_until_min_rounds_then_within_budget():
    from harness.perf.timing import more_rounds
    cfg = TimingConfig(max_time_s=0.4, rounds=20)
    assert more_rounds(1, 0.4, cfg, False) and more_rounds(2, 0.8, cfg, False)  # at least 3 rounds
    assert more_rounds(1, 1.5, cfg, False)             # a slow set-up (a loaded machine) does not cost the rounds
    assert not more_rounds(1, 15.0, cfg, True)         # a row whose calls filled its first round keeps it alone
    assert more_rounds(2, 1.5, cfg, False)             # committed after the first round: never 2
    assert more_rounds(2, 0.1, TimingConfig(max_time_s=0.4, rounds=3), False) and not more_rounds(
        3, 0.1, TimingConfig(max_time_s=0.4, rounds=3), False)
    assert not more_rounds(3, 1.1, cfg, False)         # past 3 rounds, no more once over 2.5 x its 0.4 s cap
    assert more_rounds(3, 0.9, cfg, False) and more_rounds(19, 0.9, cfg, False)
    assert not more_rounds(20, 0.1, cfg, False)
    assert not more_rounds(1, 0.0, TimingConfig(rounds=1), False)


def test_calls_fill_round_reads_the_samples_not_the_wall_time():
    """A round's calls fill it when its samples met the cap short of the round's minimum (50 over 3 rounds: 17);
    a cheap row that stopped on its sample count or CI target never does, however long its set-up took."""
    from harness.perf.timing import calls_fill_round
    cfg = TimingConfig(max_time_s=0.4, min_samples=50, rounds=3)
    assert calls_fill_round({"stop_reason": "time_cap", "n": 16}, cfg)
    assert not calls_fill_round({"stop_reason": "time_cap", "n": 17}, cfg)
    assert not calls_fill_round({"stop_reason": "max_samples", "n": 334}, cfg)
    assert not calls_fill_round({"stop_reason": "ci_target", "n": 3}, cfg)


class FakeBackend:
    """A backend surface for timer_factory: the FakeDevice's timer, and a synchronize that is logged."""

    name = "fake"

    def __init__(self, device):
        self.device = device
        self.timer = device.timer

    def synchronize(self):
        self.device.events.append("sync")


def test_scopes_run_one_after_the_other_and_are_recorded():
    from harness.perf.timing import measure_scopes
    dev = FakeDevice(constant(3.0))
    cfg = TimingConfig(scopes=("device", "call", "steady"), warmup=0, min_samples=3, max_samples=3, steady_batch=2)
    t = measure_scopes(dev.call, FakeBackend(dev), cfg, clock=dev.clock)
    assert (t["scope"], t["mode"], t["calls_per_sample"], t["method"]) == ("device", "sync", 1, "Timer")
    assert set(t["scopes"]) == {"call", "steady"}
    assert t["scopes"]["call"]["method"] == "host clock through stream synchronisation"
    assert t["scopes"]["steady"]["calls_per_sample"] == 2 and t["scopes"]["steady"]["mode"] == "steady"
    assert dev.calls == 3 + 3 + 3 * 2


def test_call_timer_stops_after_the_synchronisation():
    from harness.backends import CallTimer
    clock = iter([100, 250])
    events = []
    timer = CallTimer(lambda: events.append("sync"), clock=lambda: next(clock))
    timer.start()
    timer.stop()
    assert events == ["sync"] and timer.elapsed_s() == pytest.approx(150e-9)


def test_in_scope_and_merged_rounds_keep_each_scope():
    from harness.perf.timing import in_scope, merge_rounds, measure_scopes
    cfg = TimingConfig(scopes=("device", "call"), warmup=0, min_samples=4, max_samples=4, rounds=2)
    rounds = []
    for level in (2.0, 4.0):
        dev = FakeDevice(constant(level))
        rounds.append(measure_scopes(dev.call, FakeBackend(dev), cfg.per_round(), clock=dev.clock))
    merged = merge_rounds(rounds, cfg)
    assert merged["scope"] == "device" and merged["scopes"]["call"]["n"] == 4
    assert len(merged["scopes"]["call"]["rounds"]) == 2
    assert in_scope(merged, "call") is merged["scopes"]["call"] and in_scope(merged, "device") is merged
    assert in_scope(merged, "steady") is None and in_scope(None, "device") is None
    legacy = {"mode": "sync", "n": 3, "mean_us": 1.0}
    assert in_scope(legacy, "call") is legacy       # a record from before scopes stands for any


def test_msprof_scope_needs_a_backend_that_has_it():
    from harness.backends import ScopeUnavailable
    from harness.perf.timing import timer_factory
    dev = FakeDevice(constant(1.0))
    with pytest.raises(ScopeUnavailable, match="no msprof"):
        timer_factory(FakeBackend(dev), "msprof")


class ScriptedProbe(timing.SchedProbe):
    """A SchedProbe whose run-queue wait grows by the next entry of `waits_ns` at each read after a sample."""

    def __init__(self, waits_ns):
        super().__init__()
        self.waits, self.total, self.reads = iter(waits_ns), 0, 0

    def read(self):
        self.reads += 1
        if self.reads % 2 == 0:                      # the read after a sample
            self.total += next(self.waits)
        return self.total, 0


def test_disturbed_samples_are_recorded_and_kept_in_the_distribution():
    cfg = TimingConfig(warmup=0, min_samples=6, max_samples=6)
    dev = FakeDevice(itertools.repeat(50e-6))
    waits = [0, 9_000, 0, 0, 4_000, 20_000]          # 9 and 20 us on a run queue: disturbed; 4 us is not
    t = measure(dev.call, dev.timer, cfg, clock=dev.clock, probe=ScriptedProbe(waits))
    assert t["disturbed_at"] == [1, 5] and t["disturbed"] == 2 and t["n"] == 6
    assert isinstance(t["load"], float)


def test_preemption_of_any_thread_disturbs_a_sample():
    from harness.perf.timing import SchedProbe
    assert SchedProbe.disturbed((100, 7), (100, 8))           # an involuntary switch, no run-queue wait
    assert not SchedProbe.disturbed((100, 7), (4_100, 7))
    assert SchedProbe.disturbed((100, 7), (5_101, 7))
    probe = SchedProbe()                                      # the real one reads numbers (0 without schedstat)
    wait, switches = probe.read()
    probe.close()
    assert wait >= 0 and switches >= 0


def timing_of(samples_us, disturbed_at=()):
    return {"n": len(samples_us), "mean_us": float(np.mean(samples_us)), "median_us": float(np.median(samples_us)),
            "min_us": float(np.min(samples_us)), "stop_reason": "time_cap", "samples_us": list(samples_us),
            "disturbed_at": list(disturbed_at), "load": 3.5}


def test_a_round_mostly_disturbed_is_rejected_and_says_so():
    from harness.perf.timing import round_summary
    samples = [50.0] * 4 + [80.0] * 6
    quiet = round_summary(timing_of(samples, disturbed_at=[4, 5, 6, 7]))      # 4 of 10 disturbed: kept
    assert "rejected" not in quiet and quiet["disturbed"] == 4
    assert quiet["p10_us"] == pytest.approx(np.percentile(np.delete(samples, [4, 5, 6, 7]), 10))
    starved = round_summary(timing_of(samples, disturbed_at=range(1, 10)))       # 9 of 10: rejected
    assert starved["p10_us"] is None and starved["rejected"].startswith("disturbed: 9 of 10 samples")
    old = round_summary({k: v for k, v in timing_of(samples).items() if k != "disturbed_at"})  # before the probe
    assert old["p10_us"] == pytest.approx(np.percentile(samples, 10)) and old["disturbed"] == 0


def test_merge_rounds_counts_disturbed_and_rejected_rounds():
    from harness.perf.timing import merge_rounds
    cfg = TimingConfig(min_samples=10, rounds=3)
    rounds = [timing_of([50.0] * 10, disturbed_at=[2]), timing_of([51.0] * 10, disturbed_at=range(10)),
              timing_of([49.0] * 10)]
    for r in rounds:
        r.update(warmup=0, scope="device", method="fake")
    merged = merge_rounds(rounds, cfg)
    assert merged["disturbed"] == 11 and merged["rejected_rounds"] == 1
    assert [r["p10_us"] is None for r in merged["rounds"]] == [False, True, False]
    assert merged["n"] == 30                                  # every sample stays in the row's distribution
