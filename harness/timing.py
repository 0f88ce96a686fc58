"""Timing of one perf row: warm-up, at least `min_samples` timed samples, extended until the 95% CI of the mean
is narrow enough or the row's time cap runs out (NVBench-style stopping, with a visible `converged`).

Only the operator call sits between timer.start() and timer.stop(); the sync happens in timer.elapsed_s(), after
the stop event, so host bookkeeping never lands in a sample. Two modes:
  sync    one call per sample, synchronised each time: the task book's per-call "Avg time".
  steady  `steady_batch` back-to-back calls per sample, one sync, reported per call: steady-state throughput
          with launch latency hidden.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Callable

from harness.backends import Timer
from harness.stats import summarize, t_quantile

MODES = ("sync", "steady")


@dataclass(frozen=True)
class TimingConfig:
    mode: str = "sync"
    warmup: int = 10
    min_samples: int = 50
    max_samples: int = 1000
    #: stop once the 95% CI half-width of the mean is at most this fraction of the mean
    ci_rel_target: float = 0.01
    #: time cap for the timed samples of one row (warm-up has its own cap below)
    max_time_s: float = 10.0
    warmup_max_time_s: float = 5.0
    steady_batch: int = 16

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"timing mode {self.mode!r}; choose one of {', '.join(MODES)}")
        if self.min_samples < 2 or self.max_samples < self.min_samples:
            raise ValueError("need 2 <= min_samples <= max_samples")
        if self.steady_batch < 1 or self.warmup < 0:
            raise ValueError("steady_batch must be >= 1 and warmup >= 0")

    def as_dict(self) -> dict:
        return asdict(self)


class Sampler:
    """Takes one sample at a time from one call and one timer; `ab` interleaves two of these."""

    def __init__(self, call: Callable[[], object], timer: Timer, config: TimingConfig):
        self.call = call
        self.timer = timer
        self.calls_per_sample = config.steady_batch if config.mode == "steady" else 1

    def sample(self) -> float:
        """Seconds per call for one sample."""
        call, timer = self.call, self.timer
        if self.calls_per_sample == 1:  # no loop bookkeeping inside the timed region of a per-call sample
            timer.start()
            call()
            timer.stop()
        else:
            timer.start()
            for _ in range(self.calls_per_sample):
                call()
            timer.stop()
        return timer.elapsed_s() / self.calls_per_sample

    def warm(self, count: int, cap_s: float, clock: Callable[[], float] = time.monotonic) -> int:
        """Run up to `count` untimed samples (through the timer, so each one is synchronised); returns how many."""
        deadline = clock() + cap_s
        done = 0
        while done < count and clock() < deadline:
            self.sample()
            done += 1
        return done


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
        half = t_quantile(self.n - 1) * math.sqrt(max(self._m2, 0.0) / (self.n - 1) / self.n)
        if self.mean > 0:
            return half / self.mean
        return 0.0 if half == 0 else math.inf


def timing_record(samples_s: list[float], config: TimingConfig, warmup_done: int, converged: bool,
                  stop_reason: str) -> dict:
    """The record's `timing` dict from raw per-call samples in seconds."""
    summary = summarize(samples_s)
    return {
        "mode": config.mode, "warmup": warmup_done,
        **summary,
        "samples_us": [s * 1e6 for s in samples_s],
        "calls_per_sample": config.steady_batch if config.mode == "steady" else 1,
        "converged": converged, "stop_reason": stop_reason,
    }


def measure(call: Callable[[], object], timer_factory: Callable[[], Timer], config: TimingConfig, *,
            clock: Callable[[], float] = time.monotonic) -> dict:
    """Warm up, then sample until the CI target (converged), `max_samples` or the time cap.

    A row that hits the cap before `min_samples` keeps what it took and reports converged False; convergence is
    only ever declared at or above `min_samples`. stop_reason: "ci_target" | "max_samples" | "time_cap".
    """
    sampler = Sampler(call, timer_factory(), config)
    warmup_done = sampler.warm(config.warmup, config.warmup_max_time_s, clock)
    running = RunningCI()
    samples: list[float] = []
    deadline = clock() + config.max_time_s
    stop_reason = "max_samples"
    converged = False
    while len(samples) < config.max_samples:
        s = sampler.sample()
        samples.append(s)
        running.add(s)
        if len(samples) >= config.min_samples and running.rel_half_width() <= config.ci_rel_target:
            converged, stop_reason = True, "ci_target"
            break
        if clock() >= deadline:
            stop_reason = "time_cap"
            break
    return timing_record(samples, config, warmup_done, converged, stop_reason)
