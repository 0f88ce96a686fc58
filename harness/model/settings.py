"""One run's settings, from the command line (or pytest's options) to the worker.

`harness run`, `ab`, `baseline`, `mutants` and the pytest plugin each parse their own options, but every one of
them turns what was parsed into a `Settings` through `from_options`, the one place that knows the per-backend
defaults (the per-row timeout, the perf rows' time cap), so the same option means the same thing whichever shell
was used. The runner and its workers run on the object as it is (a worker gets a pickled copy), and a session
records a view of it (harness.model.meta.new_settings), so what a report says the run was asked to do is what
the workers were given.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping

from harness.model import devices as device_ids

if TYPE_CHECKING:
    from harness.model.case import Case

#: Rows whose estimated harness footprint (harness.run.memory) exceeds this are refused before anything is
#: allocated. Here, not in the engine, so that the options (every command's parser) need not import the engine.
DEFAULT_MEMORY_CAP = 8 << 30

#: Rounds per perf row: the spread between fresh processes is what `compare` judges separate runs by.
DEFAULT_ROUNDS = 10
#: ... by backend. On the twin no baseline judges a row, `harness ab` (its own 10 paired rounds) is what tells
#: commits apart, and a cheap row's rounds are set-up, not samples: 10 of them took 197 s of row time for 27 s of
#: samples in a 334 s main job (idle). 3 is MIN_ROUNDS, what `compare` needs for a between-round CI (t(2), about
#: twice as wide as 5 rounds' t(4)): the main job ran ~1,100 row-rounds instead of 1,300-1,600 with 5, a third of
#: the cap each, the same samples for rows under 1 ms and more for the rest.
ROUNDS = {"cpu": 3}
#: Rounds `compare` needs on each side before the spread between rounds can stand for the spread between runs.
MIN_ROUNDS = 3
#: `compare`'s noise floor: REGRESSION needs the whole CI of the change above it (harness.perf.compare). Here with
#: the other option defaults, so that the command lines that show it need not import the statistics.
MIN_EFFECT = 0.02
#: The noise floor for paired rounds (harness ab with rounds): the systematic difference one process's placement
#: gives two builds of the same code is in the rounds' spread, not a floor. Chosen with
#: benchmarks/compare_calibration.py --ab-runs 20 at load 2-14 (figures in the commit log): the same code built
#: twice, 200 row comparisons, no REGRESSION at floors 0 to 1 %; the 5 % mutant (measured +3.9 %) caught on
#: 46 / 44 / 40 of 50 rows at 0.25 / 0.5 / 1 %. Kept for round shifts from sample pairs (PAIR_TRIM): 0 of 200 at
#: load 4-7.
PAIRED_MIN_EFFECT = 0.0025
#: `harness publish`'s steps (harness.reports.publish): the smallest relative change a step may have (asv's 5 %
#: regressions_threshold) and the false-discovery rate over the splits tested.
STEP_THRESHOLD, STEP_ALPHA = 0.05, 0.05
#: The backends `--backend` names (harness.backends opens them).
BACKENDS = ("cpu", "npu", "cuda", "ascend-cpu")
#: The option values a shell that lacks an option runs with (argparse shows the same ones: harness.options).
DEFAULTS: dict[str, Any] = {
    "backend": "cpu", "device": "0", "operator_lib": None, "workers": 1, "timeout": None, "no_poison": False,
    "memory_cap": None, "select": None, "accept_disputed": False, "cluster": None, "shard": None, "hardware": None,
    "timing_mode": "sync", "timing_scope": None, "warmup": 10, "min_samples": 50, "max_time": None, "rounds": None,
}
#: The per-row limit, by backend: the emulator takes minutes per 4096^2 call.
TIMEOUT_S = {"ascend-cpu": 3600.0}
DEFAULT_TIMEOUT_S = 600.0
#: A perf row's time cap, by backend: the host backends' calls are short, a device's first calls are not.
MAX_TIME_S = {"cpu": 0.4, "ascend-cpu": 0.4}
DEFAULT_MAX_TIME_S = 10.0


def default_timeout_s(backend: str) -> float:
    """The per-row limit a run on `backend` gets when none is given."""
    return TIMEOUT_S.get(backend, DEFAULT_TIMEOUT_S)


MODES = ("sync", "steady")
SCOPES = ("device", "call", "steady", "msprof")
#: What `harness run` times when --timing-scope is not given: what the task-book limits are judged in.
DEFAULT_SCOPE = "device"


@dataclass(frozen=True)
class TimingConfig:
    mode: str = "sync"
    #: the scopes timed, first is the row's figure; empty: `steady` in steady mode, else DEFAULT_SCOPE
    scopes: tuple[str, ...] = ()
    warmup: int = 10
    min_samples: int = 50
    max_samples: int = 1000
    #: stop once the 95% CI half-width of the mean is at most this fraction of the mean
    ci_rel_target: float = 0.01
    #: time cap for the timed samples of one row (warm-up has its own cap below)
    max_time_s: float = 10.0
    warmup_max_time_s: float = 5.0
    steady_batch: int = 16
    #: rounds per perf row, each in a fresh worker process; the caps and sample counts above are for all rounds
    #: of a row together (see per_round)
    rounds: int = 1

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"timing mode {self.mode!r}; choose one of {', '.join(MODES)}")
        scopes = tuple(self.scopes) or (("steady",) if self.mode == "steady" else (DEFAULT_SCOPE,))
        unknown = [s for s in scopes if s not in SCOPES]
        if unknown or len(set(scopes)) != len(scopes):
            raise ValueError(f"timing scopes {','.join(scopes)}: each one of {', '.join(SCOPES)}, none twice")
        object.__setattr__(self, "scopes", scopes)
        object.__setattr__(self, "mode", "steady" if scopes[0] == "steady" else "sync")
        if self.min_samples < 2 or self.max_samples < self.min_samples:
            raise ValueError("need 2 <= min_samples <= max_samples")
        if self.steady_batch < 1 or self.warmup < 0:
            raise ValueError("steady_batch must be >= 1 and warmup >= 0")
        if self.rounds < 1:
            raise ValueError("rounds must be >= 1")

    def per_round(self) -> "TimingConfig":
        """The config one round runs with: the row's sample counts and time caps shared out over the rounds (each
        round still warms up fully, since each starts in a fresh process)."""
        r = self.rounds
        return replace(self, rounds=1, min_samples=max(2, math.ceil(self.min_samples / r)),
                       max_samples=max(2, math.ceil(self.max_samples / r)), max_time_s=self.max_time_s / r,
                       warmup_max_time_s=self.warmup_max_time_s / r)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Settings:
    """What a run needs, from the worker's backend to what its meta records (frozen: a change is a copy, so the
    settings a session recorded are the ones its workers ran with)."""

    backend: str = "cpu"
    backend_options: dict[str, Any] = field(default_factory=dict)  # open_backend's keywords: device, operator_lib
    workers: int = 1
    timeout_s: float = DEFAULT_TIMEOUT_S
    poison: bool = True
    memory_cap: int = DEFAULT_MEMORY_CAP
    timing: TimingConfig | None = None  # for perf rows; None skips timing
    baselines: Callable[[Case], list] | None = None
    hardware: str = ""  # what perf verdicts judge against baselines: the runtime's name, or --hardware
    devices: list[int] = field(default_factory=list)  # one worker per device; empty: backend_options["device"]
    service: Any = None  # what a worker does with each case (harness.run.worker.Rows when None); picklable
    cpus: list[int] = field(default_factory=list)  # the cores workers are pinned to (timed rows beside); empty: any
    timed_rows: bool = False  # the perf phase's: each worker times one row (it imports the timing code at start-up)
    # what only the run's record uses: the rows chosen, and how the run was spread and judged
    select: str | None = None
    accept_disputed: bool = False
    cluster: str | None = None
    shard: str | None = None  # "i/N"

    @property
    def operator_lib(self) -> str | None:
        return self.backend_options.get("operator_lib")

    def with_library(self, operator_lib: str) -> Settings:
        """The same settings on another operator library (ab's sides, mutants' builds)."""
        return replace(self, backend_options={**self.backend_options, "operator_lib": operator_lib})


def from_options(options: argparse.Namespace | Mapping[str, Any], *, timed: bool, **given: Any) -> Settings:
    """The settings of a run from parsed options (an argparse namespace, or a mapping of the same names for the
    pytest plugin); an option a shell lacks takes DEFAULTS, a timeout or time cap left unset the backend's.
    `timed`: perf rows are timed (timing options read); `given`: fields a shell sets itself (ab's worker service).
    Raises ValueError for values that pass one by one but not together (a device the backend lacks)."""
    values = dict(options) if isinstance(options, Mapping) else vars(options)
    opt = {key: values[key] if values.get(key) is not None else default for key, default in DEFAULTS.items()}
    backend = opt["backend"]
    ids = device_ids.resolve(opt["device"], backend)
    backend_options: dict[str, Any] = {"device": ids[0]}
    if opt["operator_lib"]:
        backend_options["operator_lib"] = opt["operator_lib"]
    built = Settings(
        backend=backend, backend_options=backend_options, workers=opt["workers"],
        timeout_s=opt["timeout"] if opt["timeout"] is not None else default_timeout_s(backend),
        poison=not opt["no_poison"],
        memory_cap=int(opt["memory_cap"] * 2**30) if opt["memory_cap"] is not None else DEFAULT_MEMORY_CAP,
        timing=timing_config(opt) if timed else None, hardware=opt["hardware"] or "",
        devices=ids if values.get("device") is not None else [], select=opt["select"],
        accept_disputed=bool(opt["accept_disputed"]), cluster=opt["cluster"],
        shard=f"{opt['shard'][0]}/{opt['shard'][1]}" if opt["shard"] else None)
    return replace(built, **given)


def timing_config(opt: Mapping[str, Any]) -> TimingConfig:
    """The perf rows' timing from the timing options (every DEFAULTS key present); the cap defaults by backend."""
    cap = opt["max_time"] if opt["max_time"] is not None else MAX_TIME_S.get(opt["backend"], DEFAULT_MAX_TIME_S)
    return TimingConfig(mode=opt["timing_mode"], scopes=opt["timing_scope"] or (), warmup=opt["warmup"],
                        min_samples=opt["min_samples"], max_time_s=cap, warmup_max_time_s=cap / 4,
                        rounds=opt["rounds"] if opt["rounds"] is not None else default_rounds(opt["backend"]))


def default_rounds(backend: str) -> int:
    """The rounds a perf row gets on `backend` when none is given."""
    return ROUNDS.get(backend, DEFAULT_ROUNDS)
