"""`harness ab`: the operators built at two revisions, timed in one process with samples interleaved per row.

Two runs days apart see different machine states (clocks, thermal, neighbours); interleaving A and B sample by
sample makes any drift hit both sides alike, so what remains is the code. Each round alternates the order (AB,
BA, AB, ...) so neither side always runs in the other's wake. Each revision's `operators/` is exported with
`git archive` into a temporary directory (read-only for the repository: nothing to clean up if killed) and the
CPU twin is built from it; both runs go into the history and are compared with `harness.compare`.
"""
from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness.backends import Timer
from harness.session import RunMeta, Session, new_meta, new_settings
from harness.timing import RunningCI, Sampler, TimingConfig, timing_record


class AbError(Exception):
    """ab cannot run (unknown revision, build failure, backend missing); the message is printed, exit 3."""


def interleave(call_a: Callable[[], object], call_b: Callable[[], object], timer_a: Timer, timer_b: Timer,
               config: TimingConfig, clock: Callable[[], float] = time.monotonic) -> tuple[dict, dict]:
    """Timing dicts for A and B from alternating samples, under one stopping rule for the pair.

    Stops when both sides have min_samples and both CIs meet the target, at max_samples, or at the time cap
    (which covers both sides' samples). Each side's `converged` is judged on its own samples.
    """
    samplers = [Sampler(call_a, timer_a, config), Sampler(call_b, timer_b, config)]
    warmed = 0
    warm_deadline = clock() + config.warmup_max_time_s
    while warmed < config.warmup and clock() < warm_deadline:
        for sampler in samplers:
            sampler.sample()
        warmed += 1
    samples: list[list[float]] = [[], []]
    running = [RunningCI(), RunningCI()]
    deadline = clock() + config.max_time_s
    stop_reason = "max_samples"
    while len(samples[0]) < config.max_samples:
        order = (0, 1) if len(samples[0]) % 2 == 0 else (1, 0)
        for i in order:
            s = samplers[i].sample()
            samples[i].append(s)
            running[i].add(s)
        if len(samples[0]) >= config.min_samples and all(
                r.rel_half_width() <= config.ci_rel_target for r in running):
            stop_reason = "ci_target"
            break
        if clock() >= deadline:
            stop_reason = "time_cap"
            break

    def record(i: int) -> dict:
        converged = len(samples[i]) >= config.min_samples and running[i].rel_half_width() <= config.ci_rel_target
        return timing_record(samples[i], config, warmed, converged, stop_reason)
    return record(0), record(1)


def export_operators(commit: str, dest: Path, repo: Path) -> Path:
    """`operators/` of `commit` extracted under dest; returns the extracted operators directory."""
    out = subprocess.run(["git", "archive", "--format=tar", commit, "operators"], cwd=repo, capture_output=True,
                         check=False)
    if out.returncode != 0:
        raise AbError(f"cannot export operators/ at {commit[:12]}: {out.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(out.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest / "operators"


@dataclass
class Side:
    """One revision under test: its build, its backend, its run in the history."""

    label: str
    rev: str
    defines: dict[str, str]
    commit: str = ""
    lib: str = ""
    backend: Any = None
    run_id: str = ""
    records: list[dict] = field(default_factory=list)


def _open_side(side: Side, repo: Path, workdir: Path) -> None:
    from harness.backends import BackendUnavailable, open_backend
    from harness.backends.build import build_twin
    from harness.compare import git_commit

    commit = git_commit(side.rev, repo)
    if commit is None:
        raise AbError(f"{side.rev!r} is not a git revision in {repo}")
    side.commit = commit
    source = export_operators(commit, workdir / side.label, repo)
    try:
        side.lib = str(build_twin(side.defines, source_dir=source))
        side.backend = open_backend("cpu", operator_lib=side.lib)
    except BackendUnavailable as exc:
        raise AbError(f"side {side.label} ({side.rev}): {exc}") from exc
    except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
        raise AbError(f"side {side.label} ({side.rev}): building the CPU twin failed: {exc}") from exc


def _meta(side: Side, other: Side, tables: list[str], select: str | None, config: TimingConfig) -> RunMeta:
    """The same meta shape as `harness run`'s, with the revision under test as the commit."""
    from harness import ops

    settings = new_settings(select=select, timing=config.as_dict(), gates={n: ops.get(n).GATE for n in ops.names()},
                            ab={"side": side.label, "rev": side.rev, "pair": other.run_id, "defines": side.defines})
    info = {**side.backend.describe(), "library": side.lib}
    name = str(info.get("hardware") or info.get("device") or "")
    return new_meta("ab", "cpu", tables, settings, info, {"name": name, "detected": name, "override": None},
                    git={"commit": side.commit, "dirty": False, "branch": side.rev}, run_id=side.run_id)


def _time_case(case: Any, a: Side, b: Side, config: TimingConfig) -> tuple[dict, dict]:
    """The pair of records for one perf row: timed only, outputs are not checked (that is `harness run`'s job)."""
    from harness import abi, engine

    recs = [case.new_record() for _ in (a, b)]
    prepared = []
    try:
        for side in (a, b):
            prepared.append(engine.prepare_call(case, side.backend))
        statuses = []
        for side, p in zip((a, b), prepared):
            statuses.append(p.call())
            side.backend.synchronize()
        if any(s != abi.Status.SUCCESS for s in statuses):
            for rec, status in zip(recs, statuses):
                rec.update(verdict="ERROR", status=status, reason=f"returned {abi.status_name(status)}; not timed")
            return recs[0], recs[1]
        timings = interleave(prepared[0].call, prepared[1].call, a.backend.timer(), b.backend.timer(), config)
        for rec, timing in zip(recs, timings):
            rec.update(verdict="SKIP", status=0, timing=timing, reason="timed by harness ab; outputs not checked")
    finally:
        for p in prepared:
            p.close()
    return recs[0], recs[1]


def run_ab(rev_a: str, rev_b: str, tables: list[str], select: str | None, defines_a: dict[str, str],
           defines_b: dict[str, str], config: TimingConfig, history: Any, repo: Path, report_dir: Path,
           progress: Callable[[str], None] = lambda line: None) -> tuple[Side, Side]:
    """Build, time every perf row of `tables` on both sides, record both runs (one session each: history rows,
    results.jsonl and reports under report_dir/<run_id>/); returns the sides with records."""
    from harness import provenance
    from harness.engine import load_cases

    a, b = Side("A", rev_a, dict(defines_a)), Side("B", rev_b, dict(defines_b))
    with tempfile.TemporaryDirectory(prefix="harness-ab-") as tmp:
        try:
            for side in (a, b):
                _open_side(side, repo, Path(tmp))
                progress(f"side {side.label}: {side.rev} = {side.commit[:12]}, twin {side.lib}")
            cases = [c for c in load_cases(tables, select) if c.is_perf and not c.skip and not c.errors]
            for side in (a, b):
                side.run_id = f"{provenance.new_run_id(side.commit)}-ab{side.label}"
            sessions = [Session(history, report_dir / s.run_id, _meta(s, o, tables, select, config), cases)
                        for s, o in ((a, b), (b, a))]
            for session in sessions:
                session.start()
            for i, case in enumerate(cases, 1):
                for session, rec in zip(sessions, _time_case(case, a, b, config)):
                    session.record(rec)
                progress(f"[{i}/{len(cases)}] {case.name}")
            for side, session in zip((a, b), sessions):
                session.finish()
                side.records = session.records
        finally:
            for side in (a, b):
                if side.backend is not None:
                    side.backend.close()
    return a, b
