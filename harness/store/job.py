"""A run's compute floor and where the rest of its wall time went (report.json `meta.job`, one line in report.md
and in the closing lines).

The floor is the compute the run cannot do without on its cores: the precision rows' work (each row's
`duration_s`: plan, golden, the call, the checks), each perf row's checked first call once (the same work, up to
the first call judged, in its first round) and the perf rows' timed samples, shared over the cores, but never
below the timed samples alone, which run one at a time. A row's work is its wall time, so the floor holds
as a lower bound while each judge runs no more rows at once than there are cores (`-n` <= cores). Everything
above it is overhead, said by where it went: the phases (disjoint segments of the wall: precision alone,
precision beside perf, perf alone, other), worker start-ups, goldens computed, and the core-seconds no process of
the run used (idle cores).
"""
from __future__ import annotations

import os
import resource
import time
from contextlib import contextmanager
from typing import Any, Iterator

#: The keys of `meta.job` (docs/formats.md, "report.json"): every one present whenever the run got as far as its rows.
KEYS = ("wall_s", "floor_s", "ratio", "overhead_s", "cores", "precision_work_s", "perf_check_s", "timed_s",
        "phases", "worker_starts", "worker_start_s", "goldens", "golden_s", "golden_hits", "golden_hit_s", "cpu_s",
        "idle_core_s")
PHASES = ("precision", "both", "perf", "other")
#: The tally's counts a judge process beside the perf phase sends back, summed into the run's (harness.run.runner).
SUMMED = ("worker_starts", "worker_start_s", "goldens", "golden_s", "golden_hits", "golden_hit_s")


def new_tally() -> dict[str, Any]:
    """What the runner counts while rows run: phase intervals (monotonic), worker start-ups (fork to "ready"),
    goldens computed, and the run's CPU seconds at the start."""
    return {"start": time.monotonic(), "end": None, "intervals": {}, "worker_starts": 0, "worker_start_s": 0.0,
            "goldens": 0, "golden_s": 0.0, "golden_hits": 0, "golden_hit_s": 0.0, "perf_check_s": 0.0, "checked": set(), "cpu0": cpu_seconds(),
            "cpu_s": None,
            "cores": len(os.sched_getaffinity(0))}


def add_row(tally: dict[str, Any], case: Any, judge: Any) -> None:
    """A row's judge ended (harness.run.row_judge.RowJudge): its golden (computed, or read from the golden cache), and
    a perf row's first checked call (once per row, whichever round came first; a later round's is repetition,
    overhead)."""
    if judge.golden_s and judge.golden_hit:  # read from the golden cache, not computed
        tally["golden_hits"] += 1
        tally["golden_hit_s"] += judge.golden_s
    elif judge.golden_s:
        tally["goldens"] += 1
        tally["golden_s"] += judge.golden_s
    if case.is_perf and judge.check_s and case.id not in tally["checked"]:
        tally["checked"].add(case.id)
        tally["perf_check_s"] += judge.check_s


def cpu_seconds() -> float:
    """User + system seconds of this process and of its children that have ended (workers are reaped)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@contextmanager
def phase(tally: dict[str, Any], name: str) -> Iterator[None]:
    """Time one phase ("precision" or "perf") of the run."""
    start = time.monotonic()
    try:
        yield
    finally:
        tally["intervals"][name] = (start, time.monotonic())


def close(tally: dict[str, Any]) -> dict[str, Any]:
    """The tally at the run's end (its wall and CPU seconds); returned for chaining."""
    tally["end"] = time.monotonic()
    tally["cpu_s"] = cpu_seconds() - tally["cpu0"]
    return tally


def segments(tally: dict[str, Any]) -> dict[str, float]:
    """The run's wall as disjoint segments: precision alone, both phases at once, perf alone, and the rest (start-up,
    the probe, between phases); they sum to the wall."""
    wall = tally["end"] - tally["start"]
    pre, perf = tally["intervals"].get("precision"), tally["intervals"].get("perf")
    length = (lambda iv: iv[1] - iv[0] if iv else 0.0)
    both = max(0.0, min(pre[1], perf[1]) - max(pre[0], perf[0])) if pre and perf else 0.0
    out = {"precision": length(pre) - both, "both": both, "perf": length(perf) - both}
    out["other"] = max(0.0, wall - sum(out.values()))
    return {k: round(v, 3) for k, v in out.items()}


def account(records: list[dict], tally: dict[str, Any] | None, wall_s: float) -> dict[str, Any]:
    """`meta.job` from the finished records and the runner's tally (None: the rows ran elsewhere, a Ray cluster:
    then only what the records say). `wall_s`: the session's wall, from its start to its reports."""
    tally = tally or {}
    cores = int(tally.get("cores") or len(os.sched_getaffinity(0)))
    work = sum(r.get("duration_s") or 0.0 for r in records if not r.get("is_perf"))
    timed = sum(timed_seconds(r.get("timing")) for r in records if r.get("is_perf"))
    check = tally.get("perf_check_s", 0.0)
    floor = max((work + check + timed) / cores, timed)
    phases = segments(tally) if tally.get("end") is not None else {p: 0.0 for p in PHASES}
    phases["other"] = round(max(0.0, wall_s - sum(phases[p] for p in PHASES[:3])), 3)
    cpu = tally.get("cpu_s")
    return {"wall_s": round(wall_s, 3), "floor_s": round(floor, 3),
            "ratio": round(wall_s / floor, 3) if floor > 0 else None, "overhead_s": round(wall_s - floor, 3),
            "cores": cores, "precision_work_s": round(work, 3), "perf_check_s": round(check, 3),
            "timed_s": round(timed, 3), "phases": phases,
            "worker_starts": int(tally.get("worker_starts", 0)),
            "worker_start_s": round(tally.get("worker_start_s", 0.0), 3), "goldens": int(tally.get("goldens", 0)),
            "golden_s": round(tally.get("golden_s", 0.0), 3), "golden_hits": int(tally.get("golden_hits", 0)),
            "golden_hit_s": round(tally.get("golden_hit_s", 0.0), 3), "cpu_s": None if cpu is None else round(cpu, 3),
            "idle_core_s": None if cpu is None else round(max(0.0, cores * wall_s - cpu), 3)}


def timed_seconds(timing: dict | None) -> float:
    """The seconds a perf row's timed samples took, every scope it ran (a steady sample is `calls_per_sample`
    calls, its figure per call)."""
    if not timing:
        return 0.0
    scopes = [timing, *(timing.get("scopes") or {}).values()]
    return sum(sum(t.get("samples_us") or []) * (t.get("calls_per_sample") or 1) / 1e6 for t in scopes)


#: A floor under this many seconds makes a wall/floor ratio noise (a 6 s run over a 0.7 s floor is start-up, not
#: overhead worth a number): the lines then say "floor < 1 s" and no ratio.
MIN_FLOOR_FOR_RATIO_S = 1.0
#: The closing lines name the job only for runs at least this long; the report always has it, at its end.
CONSOLE_MIN_WALL_S = 60.0


def _ratio(job: dict[str, Any]) -> str:
    """`3.41x`, or '' when the floor is too small (or unknown) for the ratio to mean anything."""
    floor, ratio = job.get("floor_s") or 0.0, job.get("ratio")
    return f"{ratio:.2f}x" if ratio and floor >= MIN_FLOOR_FOR_RATIO_S else ""


#: The job line's words: English for the terminal, Chinese for the report's last line. Fields: job's keys, the phases
#: (p_*), `floor` (with the ratio where it means something), `cached` and `idle` (empty when there is nothing to say).
TEMPLATES = {
    "en": {"floor": "floor {floor_s:.0f} s ({ratio}; ", "no_floor": "floor < 1 s (",
           "cached": ", {golden_hits} cached goldens read", "idle": ", idle cores {idle_core_s:.0f} core-s",
           "line": "job: wall {wall_s:.0f} s, {floor}precision work {precision_work_s:.0f} s + perf checks "
                   "{perf_check_s:.0f} s + timed samples {timed_s:.0f} s over {cores} cores); overhead "
                   "{overhead_s:.0f} s: phases precision {p_precision:.0f} s, both {p_both:.0f} s, perf "
                   "{p_perf:.0f} s, other {p_other:.0f} s; {worker_starts} worker starts {worker_start_s:.0f} s, "
                   "{goldens} goldens {golden_s:.0f} s{cached}{idle}"},
    "zh": {"floor": "计算下限 {floor_s:.0f} s（墙钟为其 {ratio}；", "no_floor": "计算下限不足 1 s（",
           "cached": "，标杆缓存命中 {golden_hits} 个", "idle": "，空闲核 {idle_core_s:.0f} 核·秒",
           "line": "墙钟 {wall_s:.0f} s，{floor}精度用例计算 {precision_work_s:.0f} s + 性能用例首次检查 "
                   "{perf_check_s:.0f} s + 计时采样 {timed_s:.0f} s，分摊到 {cores} 个核）；额外开销 {overhead_s:.0f} s："
                   "阶段 精度 {p_precision:.0f} s、并行 {p_both:.0f} s、性能 {p_perf:.0f} s、其他 {p_other:.0f} s；"
                   "启动工作进程 {worker_starts} 次 {worker_start_s:.0f} s，计算标杆 {goldens} 个 {golden_s:.0f} s"
                   "{cached}{idle}"},
}


def line(job: dict[str, Any] | None, language: str = "en") -> str:
    """The job in one line (the closing lines of a long run; "zh": the report's last line); '' when the run has
    no job figures."""
    if not job or job.get("floor_s") is None:
        return ""
    t, ratio = TEMPLATES[language], _ratio(job)
    fields = {"golden_hits": 0, **job, **{f"p_{k}": v for k, v in job["phases"].items()}, "ratio": ratio}
    fields["floor"] = t["floor"].format(**fields) if ratio else t["no_floor"]
    fields["cached"] = t["cached"].format(**fields) if job.get("golden_hits") else ""
    fields["idle"] = t["idle"].format(**fields) if job.get("idle_core_s") is not None else ""
    return t["line"].format(**fields)


def console_line(job: dict[str, Any] | None) -> str:
    """line() for the terminal: only a long run's (a short one's overhead is its start-up, not news)."""
    return line(job) if job and (job.get("wall_s") or 0.0) >= CONSOLE_MIN_WALL_S else ""
