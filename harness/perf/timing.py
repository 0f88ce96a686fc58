"""Timing of one perf row: warm-up, at least `min_samples` timed samples, extended until the 95% CI of the mean
is narrow enough or the row's time cap runs out (NVBench-style stopping, with a visible `converged`).

What a sample measures is its scope, recorded as `timing.scope` with the timer's `method`:
  device  the operator's device work only: on `npu` the stream is held until the whole call is enqueued, then
          released (the blocking-kernel idea of NVBench), so the host's enqueue latency is outside the sample.
  call    host wall time of one call through stream synchronisation (how the public per-call figures are taken).
  steady  `steady_batch` back-to-back calls per sample, one synchronisation, reported per call.
  msprof  kernel Task Duration read from msprof's CSV (harness.flows.msprof), summed per call.
Several scopes may run on one row; the first is the row's figure, each other one goes to `timing.scopes`.
Only the operator call sits between timer.start() and timer.stop(); the sync happens in timer.elapsed_s(), after
the stop event, so host bookkeeping never lands in a device sample.
"""
from __future__ import annotations

import math
import os
import resource
import time
from typing import Any, Callable

import numpy as np

from harness.backends import CallTimer, ScopeUnavailable, Timer
from harness.model.settings import MIN_ROUNDS, TimingConfig


def calls_per_sample(config: TimingConfig, scope: str) -> int:
    return config.steady_batch if scope == "steady" else 1


def timer_factory(backend: object, scope: str) -> Callable[[], Timer]:
    """The timers of `scope` on `backend`: its own `scope_timer(scope)` where it has one (npu), else the generic
    call timer for `call` and its `timer()` (device events, or the host clock of a synchronous backend) for
    `device` and `steady`."""
    own = getattr(backend, "scope_timer", None)
    if own is not None:
        return lambda: own(scope)
    if scope == "call":
        return lambda: CallTimer(backend.synchronize)
    if scope == "msprof":
        raise ScopeUnavailable(f"timing scope msprof: the {getattr(backend, 'name', '?')} backend has no msprof "
                               "(requires CANN + NPU)")
    return backend.timer


class Sampler:
    """Takes one sample at a time from one call and one timer; `ab` interleaves two of these. `before` runs before
    each sample, outside the timed region (the sandbox puts back a C the call reads); `statuses` holds what each
    call of the last sample returned (the sandbox's judge reads every call's status)."""

    def __init__(self, call: Callable[[], object], timer: Timer, config: TimingConfig, scope: str | None = None,
                 before: Callable[[], None] | None = None):
        self.call = call
        self.timer = timer
        self.calls_per_sample = calls_per_sample(config, scope or config.scopes[0])
        self.before = before
        self.statuses: list = []

    def sample(self) -> float:
        """Seconds per call for one sample."""
        call, timer = self.call, self.timer
        if self.before is not None:
            self.before()
        if self.calls_per_sample == 1:  # no loop bookkeeping inside the timed region of a per-call sample
            timer.start()
            status = call()
            timer.stop()
            self.statuses = [status]
        else:
            calls = range(self.calls_per_sample)
            timer.start()
            statuses = [call() for _ in calls]
            timer.stop()
            self.statuses = statuses
        return timer.elapsed_s() / self.calls_per_sample

    def warm(self, count: int, cap_s: float, clock: Callable[[], float] = time.monotonic,
             after: Callable[[str, list], None] | None = None) -> int:
        """Run up to `count` untimed samples (through the timer, so each one is synchronised), `after` told of
        each ("warm-up", its calls' statuses); returns how many."""
        deadline = clock() + cap_s
        done = 0
        while done < count and clock() < deadline:
            self.sample()
            done += 1
            if after is not None:
                after("warm-up", self.statuses)
        return done


#: A sample is disturbed when, during it, the timing thread waited this long on a run queue (schedstat) or any
#: thread of the process was preempted (an involuntary context switch).
DISTURBED_NS = 5_000
#: A round whose undisturbed samples are fewer than this share of its samples (or fewer than two) is rejected:
#: its figure would be the scheduler's, and `compare` leaves it out and says so.
MIN_CLEAN_SHARE = 0.5


class SchedProbe:
    """How much the scheduler got in the way of the calling thread so far: its run-queue wait (field 2 of
    /proc/thread-self/schedstat, read with pread on a kept descriptor: a few microseconds) and the process's
    involuntary context switches over all its threads (getrusage), so a pool thread preempted mid-call counts too.
    Where the kernel keeps no schedstat only the context switches are read."""

    def __init__(self) -> None:
        try:
            self._fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            self._fd = -1

    def read(self) -> tuple[int, int]:
        wait = 0
        if self._fd >= 0:
            try:
                wait = int(os.pread(self._fd, 128, 0).split()[1])
            except (OSError, ValueError, IndexError):
                wait = 0
        return wait, resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw

    @staticmethod
    def disturbed(before: tuple[int, int], after: tuple[int, int]) -> bool:
        return after[0] - before[0] > DISTURBED_NS or after[1] > before[1]

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class RunningCI:
    """Running mean/variance (Welford), so the stopping rule is O(1) per sample."""

    def __init__(self) -> None:
        self.n, self.mean, self._m2 = 0, 0.0, 0.0

    def add(self, x: float) -> None:
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self._m2 += delta * (x - self.mean)

    def rel_half_width(self) -> float:
        """95% CI half-width / mean; inf below two samples."""
        if self.n < 2:
            return math.inf
        from harness.perf.stats import t_quantile  # scipy.stats: imported where used, not by every worker

        half = t_quantile(self.n - 1) * math.sqrt(max(self._m2, 0.0) / (self.n - 1) / self.n)
        if self.mean > 0:
            return half / self.mean
        return 0.0 if half == 0 else math.inf


def not_converged_because(summary: dict, config: TimingConfig, stop_reason: str, ci_rel: float) -> str:
    """Why a row's numbers are not converged ('' when they are): the sample target missed at the cap, a CI still
    too wide (noise), several modes, or drift. A row is converged only when none of these holds."""
    reasons = []
    n = summary["n"]
    if n < config.min_samples:
        reasons.append(f"cap: {n} of {config.min_samples} samples within the {config.max_time_s:g} s time cap")
    elif ci_rel > config.ci_rel_target:
        where = {"time_cap": f"the {config.max_time_s:g} s time cap", "max_samples": f"{n} samples (the maximum)"}
        reasons.append(f"noise: CI of the mean +-{ci_rel:.1%} at {where.get(stop_reason, stop_reason)}, "
                       f"target +-{config.ci_rel_target:.1%}")
    if len(summary.get("modes_us") or []) > 1:
        reasons.append("multimodal: modes at " + ", ".join(f"{m:.4g}" for m in summary["modes_us"]) + " us")
    if summary.get("drift") is not None:
        reasons.append(f"drift: {summary['drift']:+.1%} from the first to the last third of the samples")
    return "; ".join(reasons)


def _ci_rel(summary: dict) -> float:
    ci, mean = summary.get("ci95_us"), summary["mean_us"]
    return (ci[1] - mean) / mean if ci and mean > 0 else math.inf


def timing_record(samples_s: list[float], config: TimingConfig, warmup_done: int, converged: bool,
                  stop_reason: str, scope: str | None = None, method: str = "",
                  disturbed_at: list[int] | None = None) -> dict:
    """The record's `timing` dict from raw per-call samples in seconds; `converged` is the stopping rule's word,
    and is withdrawn when the distribution is multimodal or drifts. `scope` (default: the config's first) and
    the timer's `method` say what was timed; `disturbed_at` (when the scheduler was watched) lists the indices of
    the samples it disturbed."""
    from harness.perf.stats import summarize

    scope = scope or config.scopes[0]
    summary = summarize(samples_s)
    why = not_converged_because(summary, config, stop_reason, _ci_rel(summary))
    return {
        "mode": "steady" if scope == "steady" else "sync", "scope": scope, "method": method,
        "warmup": warmup_done,
        **summary,
        "samples_us": [s * 1e6 for s in samples_s],
        "calls_per_sample": calls_per_sample(config, scope),
        "converged": converged and not why, "stop_reason": stop_reason, "not_converged": why,
        **({} if disturbed_at is None else {"disturbed_at": disturbed_at, "disturbed": len(disturbed_at)}),
    }


#: The most samples a timing record from a worker may hold (a row's max_samples is far below).
MAX_RECORD_SAMPLES = 1 << 20
_FIGURES = ("mean_us", "median_us", "min_us")
_OPTIONAL_FIGURES = ("max_us", "p90_us", "stdev_us", "load")
_COUNTS = ("warmup", "calls_per_sample", "disturbed", "cpus")
_WORDS = ("mode", "scope", "method", "stop_reason", "not_converged")
_PAIRS = ("ci95_us", "median_ci95_us")


def checked_record(value: Any, where: str = "timing", scopes: bool = True) -> dict:
    """A timing record from a worker (untrusted: the operator shares its process), checked before any figure of
    it is used: each field of timing_record's its type, every number finite (anywhere in it), the figures and
    samples not negative, n the number of samples, disturbed_at indices into them, `scopes` records of their own
    (one level). ValueError naming the first field that is not so."""
    if not isinstance(value, dict):
        raise ValueError(f"{where} is a {type(value).__name__}, not a timing record")
    _all_finite(value, where)
    samples = value.get("samples_us")
    if not isinstance(samples, list) or len(samples) > MAX_RECORD_SAMPLES:
        raise ValueError(f"{where}.samples_us is not a list of at most {MAX_RECORD_SAMPLES} samples")
    for i, x in enumerate(samples):
        _number(x, f"{where}.samples_us[{i}]")
    if not _count(value.get("n")) or value["n"] != len(samples):
        raise ValueError(f"{where}.n is not the number of samples ({len(samples)})")
    for key in _FIGURES:
        _number(value.get(key), f"{where}.{key}")
    for key in _OPTIONAL_FIGURES:
        if value.get(key) is not None:
            _number(value[key], f"{where}.{key}")
    for key in _COUNTS:
        if value.get(key) is not None and not _count(value[key]):
            raise ValueError(f"{where}.{key} is not a count")
    for key in _WORDS:
        if not isinstance(value.get(key, ""), str) or len(value.get(key, "")) > 1000:
            raise ValueError(f"{where}.{key} is not a string")
    for key in _PAIRS:
        pair = value.get(key)
        if pair is not None and (not isinstance(pair, list) or len(pair) != 2):
            raise ValueError(f"{where}.{key} is not a pair of numbers")
        for i, x in enumerate(pair or []):
            _number(x, f"{where}.{key}[{i}]", signed=True)
    if not isinstance(value.get("converged", False), bool):
        raise ValueError(f"{where}.converged is not true or false")
    disturbed = value.get("disturbed_at", [])
    if not isinstance(disturbed, list) or not all(_count(i) and i < len(samples) for i in disturbed):
        raise ValueError(f"{where}.disturbed_at is not a list of sample indices")
    if "scopes" in value:
        if not scopes or not isinstance(value["scopes"], dict):
            raise ValueError(f"{where}.scopes is not a dict of timing records")
        for name, record in value["scopes"].items():
            checked_record(record, f"{where}.scopes.{name}", scopes=False)
    return value


def _count(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _number(x: Any, where: str, signed: bool = False) -> None:
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x) or (x < 0 and not signed):
        raise ValueError(f"{where} is {x!r:.40}, not a finite{'' if signed else ' non-negative'} number")


def _all_finite(value: Any, where: str) -> None:
    """No NaN or infinity anywhere in `value` (JSON data)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where} is {value!r}, not a finite number")
    if isinstance(value, dict):
        for key, item in value.items():
            _all_finite(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _all_finite(item, f"{where}[{i}]")


def in_scope(timing: dict | None, scope: str) -> dict | None:
    """A row's timing in `scope`: the row's figure or one of `timing.scopes`; None when that scope did not run.
    A record from before scopes (no `scope`) stands for whichever scope is asked."""
    if not timing:
        return None
    if timing.get("scope", scope) == scope:
        return timing
    return (timing.get("scopes") or {}).get(scope)


def round_summary(timing: dict) -> dict:
    """What `compare` keeps of one round: its size, centre and fast end (p10) of the samples the scheduler did not
    disturb, how many it did (`disturbed`), the load, and `rejected` (why) when too few were left undisturbed.
    Contention on a shared machine only ever adds time, so a round's fast end moves with the code and much less
    with the neighbours than its mean."""
    samples = np.asarray(timing["samples_us"], dtype=float)
    disturbed = [i for i in timing.get("disturbed_at") or [] if 0 <= i < samples.size]
    clean = np.delete(samples, disturbed)
    summary = {"n": timing["n"], "mean_us": timing["mean_us"], "median_us": timing["median_us"],
               "min_us": timing["min_us"], "stop_reason": timing["stop_reason"], "disturbed": len(disturbed),
               "load": timing.get("load"), "cpus": timing.get("cpus")}
    if clean.size < max(2, MIN_CLEAN_SHARE * samples.size):
        return {**summary, "p10_us": None, "rejected": f"disturbed: {len(disturbed)} of {samples.size} samples "
                f"waited on a run queue or were preempted (at most {1 - MIN_CLEAN_SHARE:.0%} may)"}
    return {**summary, "p10_us": float(np.percentile(clean, 10))}


#: A row's rounds stop (past MIN_ROUNDS) once they have taken this many times its time cap, set-up included.
ROUND_BUDGET = 2.5


def calls_fill_round(timing: dict, config: TimingConfig) -> bool:
    """Whether a round's calls alone used up its share of the cap: its samples ran into the time cap short of the
    round's minimum. Decided on the samples, not on the round's wall time: a tiny row's set-up (worker start,
    golden, a busy judge) can exceed the cap under load, and must not cost the row the rounds `compare` needs."""
    return timing.get("stop_reason") == "time_cap" and timing.get("n", 0) < config.per_round().min_samples


def more_rounds(done: int, spent_s: float, config: TimingConfig, slow_calls: bool) -> bool:
    """Whether a row that has run `done` rounds in `spent_s` seconds (whole rows: fill, checks, warm-up, samples)
    gets another round: up to MIN_ROUNDS unless its first round's calls filled the round (`slow_calls`,
    calls_fill_round: decided once, so a row never ends with two rounds, whose t(1) interval says nothing), then
    while within ROUND_BUDGET x its cap. A row whose calls take that long keeps its one round (its samples miss
    the target anyway, and three rounds would triple the run); `compare` then says its evidence is within-run."""
    if done >= config.rounds:
        return False
    if done < MIN_ROUNDS:
        return done > 1 or not slow_calls
    return spent_s < ROUND_BUDGET * config.max_time_s


def between_rounds_ci(mean: float, round_means: list[float]) -> list[float] | None:
    """95 % CI of a row's mean from the spread of its round means, taken multiplicatively: machine states move a
    whole process by a factor (a round at 2x the level of another), so the spread is that of log(round mean),
    Student-t with rounds - 1 degrees of freedom, applied around the pooled mean. None below two rounds."""
    logs = np.log(np.asarray(round_means, dtype=float))
    if logs.size < 2 or not np.all(np.isfinite(logs)):
        return None
    from harness.perf.stats import t_quantile

    half = t_quantile(logs.size - 1) * float(logs.std(ddof=1)) / math.sqrt(logs.size)
    return [mean * math.exp(-half), mean * math.exp(half)]


def merge_rounds(timings: list[dict], config: TimingConfig) -> dict:
    """One row's timing from its rounds (each a timing_record from a fresh process): the pooled samples for the
    distribution, and `rounds` with each round's summary. With several rounds the CI of the mean comes from the
    spread between rounds (between_rounds_ci): the spread between processes is part of what a figure from one
    run is uncertain by, and the pooled samples' CI (kept as ci95_within_us) would hide it. Converged is judged
    on the row as a whole: enough samples, that CI within the target, one mode, no drift. Each other scope of
    `timing.scopes` is merged the same way."""
    samples = [s / 1e6 for t in timings for s in t["samples_us"]]
    first = timings[0]
    merged = timing_record(samples, config, sum(t["warmup"] for t in timings), False, "", first.get("scope"),
                           first.get("method", ""))
    merged["rounds"] = [round_summary(t) for t in timings]
    merged["disturbed"] = sum(r["disturbed"] for r in merged["rounds"])
    merged["rejected_rounds"] = sum("rejected" in r for r in merged["rounds"])
    if len(timings) > 1:
        merged["ci95_within_us"] = merged["ci95_us"]
        merged["ci95_us"] = between_rounds_ci(merged["mean_us"], [t["mean_us"] for t in timings])
    stops = sorted({t["stop_reason"] for t in timings})
    merged["stop_reason"] = stops[0] if len(stops) == 1 else ",".join(stops)
    why = not_converged_because(merged, config, merged["stop_reason"], _ci_rel(merged))
    merged.update(converged=not why, not_converged=why)
    if first.get("scopes"):
        merged["scopes"] = {s: merge_rounds([t["scopes"][s] for t in timings], config) for s in first["scopes"]}
    if first.get("scope_fallback"):  # the scope asked for could not be timed (measure): every round says the same
        merged["scope_fallback"] = first["scope_fallback"]
    return merged


#: A checked call at least this long leaves the process as warm as a warm-up call would (benchmarks/
#: first_sample_warmth.py, twin, 5 fresh processes per row, the first sample after the checked call and the judge's
#: work on its output over the median of the next three: 1.13-1.23 at 5 ms, 1.08-1.18 at 19 ms, 1.01-1.02 at 38 ms,
#: 0.99-1.02 at 85-330 ms).
WARM_CALL_S = 0.1


def measure(call: Callable[[], object], timer_factory: Callable[[], Timer], config: TimingConfig, *,
            clock: Callable[[], float] = time.monotonic, scope: str | None = None,
            after_sample: Callable[[str, list], None] | None = None, probe: SchedProbe | None = None,
            warmed_s: float = 0.0, before_sample: Callable[[], None] | None = None,
            on_sampling: Callable[[], None] | None = None) -> dict:
    """Warm up, then sample until the CI target (converged), `max_samples` or the time cap; `scope` (default
    the config's first) is what `timer_factory`'s timers measure. `after_sample(phase, statuses)` runs after each
    warm-up ("warm-up") and timed ("timed") sample, outside the timed region, with what its calls returned (the
    sandbox's digest of the buffers and the statuses, checked by the judge); `before_sample` before each one;
    `on_sampling` once between the warm-up and the first timed sample (the judge's clock opens). `probe` (a
    SchedProbe by default) tells which samples the scheduler disturbed (`disturbed_at`); they stay in the samples.
    `warmed_s`: seconds this process just spent in one call of the operator on these buffers (the sandbox's
    checked call): a call of at least WARM_CALL_S that also outlasts the warm-up cap is the warm-up (the twin's
    largest rows made three calls, checked, warm-up and sample, each of seconds).

    A row that hits the cap before `min_samples` keeps what it took and reports converged False; convergence is
    only ever declared at or above `min_samples`. stop_reason: "ci_target" | "max_samples" | "time_cap".
    """
    asked = scope or config.scopes[0]
    timer = timer_factory()
    # a backend that cannot time the scope asked for may hand a timer of another scope, saying why (`fallback`)
    scope = getattr(timer, "scope", None) or asked
    sampler = Sampler(call, timer, config, scope, before=before_sample)
    warmed = warmed_s >= max(WARM_CALL_S, config.warmup_max_time_s)
    warmup_done = sampler.warm(config.warmup, 0.0 if warmed else config.warmup_max_time_s, clock, after_sample)
    if on_sampling is not None:
        on_sampling()
    running = RunningCI()
    samples: list[float] = []
    disturbed_at: list[int] = []
    deadline = clock() + config.max_time_s
    stop_reason = "max_samples"
    converged = False
    probe = probe or SchedProbe()
    try:
        while len(samples) < config.max_samples:
            before = probe.read()
            s = sampler.sample()
            if probe.disturbed(before, probe.read()):
                disturbed_at.append(len(samples))
            if after_sample is not None:
                after_sample("timed", sampler.statuses)
            samples.append(s)
            running.add(s)
            if len(samples) >= config.min_samples and running.rel_half_width() <= config.ci_rel_target:
                converged, stop_reason = True, "ci_target"
                break
            if clock() >= deadline:
                stop_reason = "time_cap"
                break
    finally:
        probe.close()
    record = timing_record(samples, config, warmup_done, converged, stop_reason, scope,
                           getattr(timer, "method", type(timer).__name__), disturbed_at)
    if scope != asked:
        record["scope_fallback"] = {"asked": asked, "reason": getattr(timer, "fallback", "")}
    record["load"] = os.getloadavg()[0]  # the 1-minute load average as the samples ended: the round's neighbours
    record["cpus"] = os.cpu_count()
    return record


def measure_scopes(call: Callable[[], object], backend: object, config: TimingConfig, *,
                   clock: Callable[[], float] = time.monotonic,
                   after_sample: Callable[[str, list], None] | None = None, warmed_s: float = 0.0,
                   before_sample: Callable[[], None] | None = None,
                   on_sampling: Callable[[], None] | None = None) -> dict:
    """Each of the config's scopes on `backend`, one after the other, each with its own warm-up, samples and
    time cap: the first is the row's timing, the others go to its `scopes`; `warmed_s` (see measure) counts
    towards the first one's warm-up, `on_sampling` runs before the first one's first timed sample."""
    records = [measure(call, timer_factory(backend, s), config, clock=clock, scope=s, after_sample=after_sample,
                       warmed_s=warmed_s if i == 0 else 0.0, before_sample=before_sample,
                       on_sampling=on_sampling if i == 0 else None)
               for i, s in enumerate(config.scopes)]
    if len(records) > 1:
        records[0]["scopes"] = {r["scope"]: r for r in records[1:]}
    return records[0]
