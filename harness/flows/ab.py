"""`harness ab`: two operator libraries timed in one process with samples interleaved per row. The libraries come
from one of three sources (Side.kind), by one mechanism: two files as given (`--lib-a`, `--lib-b`), the user's
checkout at two revisions built by their command in git worktrees (`--src`, `--build`, `--lib`), or this
repository's CPU twin at two revisions (`harness ab REV_A REV_B`).

Two runs days apart see different machine states (clocks, thermal, neighbours); interleaving A and B sample by
sample makes any drift hit both sides alike, so what remains is the code. Each round alternates the order (AB,
BA, AB, ...) so neither side always runs in the other's wake. With `rounds` > 1 (the default) every row is timed
that many times, each round in a fresh worker process: a process fixes where the two libraries and the buffers
land in memory, and that placement alone moved one pair's medians by up to 1.5 % (measured on the twin, rows of
70-250 us: a planted 5 % read +2.3..+5.4 % in one process), so a row's evidence is its rounds' paired
differences, with placement among what they vary over (harness.perf.compare, evidence "paired rounds"). For the
twin each revision's `operators/` is exported with `git archive` into a temporary directory (read-only for the
repository: nothing to clean up if killed) and built there; both runs go into the history, each with its
operator's identity, and are compared with `harness.perf.compare`.

Both libraries are untrusted code: they are loaded only in an isolated worker (harness.run.worker, through
harness.run.runner), probed there first, and a row that crashes, hangs or leaves something behind is that row's CRASH,
TIMEOUT or note on both sides, never the end of ab.
"""
from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from harness.backends import Timer
from harness.model.settings import Settings, from_options
from harness.model.meta import RunMeta, new_settings
from harness.flows.session import Session, new_meta
from harness.perf.timing import RunningCI, Sampler, merge_rounds, timing_record
from harness.model.settings import TimingConfig


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
    """One operator build under test: where its library comes from (`kind`), the library, its backend's
    describe(), its identity and its run in the history.

    kind "twin": the CPU twin of this repository's `operators/` at `rev` (`repo`), built with `defines`;
    "lib": the library file `lib` as given; "src": the user's checkout `repo` at `rev` in a git worktree, built
    there by the shell command `build`, the library taken from `lib_in_build` inside it."""

    label: str
    rev: str
    defines: dict[str, str] = field(default_factory=dict)
    kind: str = "twin"
    repo: Path | None = None
    build: str = ""
    lib_in_build: str = ""
    commit: str = ""
    lib: str = ""
    info: dict = field(default_factory=dict)  # the backend's describe(), from the probe worker
    operator: dict = field(default_factory=dict)  # harness.store.operator_identity.identify
    worktree: Path | None = None  # kind "src": the git worktree, removed when ab ends
    run_id: str = ""
    records: list[dict] = field(default_factory=list)

    def what(self) -> str:
        """The side in words, for the progress and the closing lines."""
        sha = str(self.operator.get("sha256") or "")[:12]
        if self.kind == "lib":
            label = str(self.operator.get("label") or "")
            return (f"library {self.lib} (sha256 {sha}" + (f", operator {label}" if label and
                                                           not label.startswith("sha256:") else "") + ")")
        built = (f"the CPU twin at {self.rev}" if self.kind == "twin"
                 else f"{self.repo} at {self.rev} built by {self.build!r}")
        return (f"{built} = {self.commit[:12]}{' ' + str(self.defines) if self.defines else ''}: {self.lib} "
                f"(sha256 {sha})")


def twin_side(label: str, rev: str, defines: dict[str, str], repo: Path) -> Side:
    return Side(label, rev, dict(defines), "twin", repo)


def library_side(label: str, path: str) -> Side:
    return Side(label, "", {}, "lib", lib=str(path))


def source_side(label: str, rev: str, repo: Path, build: str, lib_in_build: str) -> Side:
    return Side(label, rev, {}, "src", Path(repo), build, lib_in_build)


def _build_twin_side(side: Side, workdir: Path) -> None:
    from harness.backends.build import build_twin
    from harness.perf.compare import git_commit

    commit = git_commit(side.rev, side.repo)
    if commit is None:
        raise AbError(f"{side.rev!r} is not a git revision in {side.repo}")
    side.commit = commit
    source = export_operators(commit, workdir / side.label, side.repo)
    try:
        side.lib = str(build_twin(side.defines, source_dir=source))
    except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
        raise AbError(f"side {side.label} ({side.rev}): building the CPU twin failed: {exc}") from exc


def _build_source_side(side: Side, workdir: Path) -> None:
    """The user's checkout at the side's revision in a git worktree under workdir, built by their command there."""
    from harness.perf.compare import git_commit

    commit = git_commit(side.rev, side.repo)
    if commit is None:
        raise AbError(f"--src {side.repo}: {side.rev!r} is not a git revision there")
    side.commit = commit
    tree = workdir / f"src-{side.label}"
    added = subprocess.run(["git", "-C", str(side.repo), "worktree", "add", "--detach", str(tree), commit],
                           capture_output=True, text=True, check=False)
    if added.returncode != 0:
        raise AbError(f"--src {side.repo}: cannot check out {side.rev} in a worktree: "
                      f"{(added.stderr.strip().splitlines() or ['git worktree add failed'])[-1]}")
    side.worktree = tree
    built = subprocess.run(["bash", "-c", side.build], cwd=tree, capture_output=True, text=True, check=False)
    if built.returncode != 0:
        tail = " | ".join((built.stderr or built.stdout).strip().splitlines()[-3:])
        raise AbError(f"side {side.label} ({side.rev}): --build {side.build!r} exited {built.returncode}: {tail}")
    lib = tree / side.lib_in_build
    if not lib.is_file():
        raise AbError(f"side {side.label} ({side.rev}): --build {side.build!r} made no {side.lib_in_build} "
                      f"(--lib is a path inside the built checkout)")
    side.lib = str(lib)


def _remove_worktree(side: Side) -> None:
    if side.worktree is not None:
        subprocess.run(["git", "-C", str(side.repo), "worktree", "remove", "--force", str(side.worktree)],
                       capture_output=True, check=False)
        side.worktree = None


def _open_side(side: Side, workdir: Path, settings: Settings) -> None:
    """Build or find the side's library, probe it in a worker and identify it (harness.store.operator_identity)."""
    from harness.run import runner
    from harness.backends import BackendUnavailable
    from harness.store import operator_identity

    if side.kind == "twin":
        _build_twin_side(side, workdir)
    elif side.kind == "src":
        _build_source_side(side, workdir)
    elif not Path(side.lib).is_file():
        raise AbError(f"side {side.label}: no such operator library: {side.lib}")
    try:
        side.info = runner.check_backend(settings.with_library(side.lib))
    except BackendUnavailable as exc:
        raise AbError(f"side {side.label} ({side.rev or side.lib}): {exc}") from exc
    source = side.worktree if side.kind == "src" else side.repo
    # the commit, resolved once in the side's repository (a relative name such as HEAD~1 means nothing in a worktree)
    side.operator = operator_identity.identify(side.lib, rev=side.commit or None, src=str(source) if source else None,
                                               runtime=side.info, clean=side.kind != "lib")
    if side.kind != "lib":
        side.operator["revision"].update(rev=side.rev, src=str(side.repo))
        side.operator["label"] = operator_identity.label(side.operator)


def _meta(side: Side, other: Side, tables: list[str], settings: Settings, config: TimingConfig) -> RunMeta:
    """The same meta shape as `harness run`'s; the twin's side keeps the revision under test as the commit (it is
    this repository's), the others the harness's own."""
    from harness.model import operators as ops

    recorded = new_settings(settings, timing=config.as_dict(), gates=ops.gates(),
                            ab={"side": side.label, "rev": side.rev, "pair": other.run_id, "defines": side.defines,
                                "source": side.kind, "library": side.lib})
    from harness.run import bwrap

    # the probe ran a plain worker; the pair's timed workers are a service's (harness.run.bwrap.wanted)
    info = {**side.info, "library": side.lib,
            "isolation": bwrap.isolation(replace(settings, service=PairService), side.info.get("confinement") or [])}
    name = str(info.get("hardware") or info.get("device") or "")
    git = {"commit": side.commit, "dirty": False, "branch": side.rev} if side.kind == "twin" else None
    return new_meta("ab", settings.backend, tables, recorded, info, {"name": name, "detected": name, "override": None},
                    git=git, run_id=side.run_id, operator=side.operator)


def _time_case(case: Any, a: Any, b: Any, config: TimingConfig) -> tuple[dict, dict]:
    """The pair of records for one perf row (a and b: open backends): timed only, outputs are not checked (that
    is `harness run`'s job)."""
    from harness.model import abi
    from harness.run import sandbox
    from harness.run.engine import RowJudge

    recs = [case.new_record() for _ in (a, b)]
    judges = [RowJudge(case, sandbox.BackendInfo.of(backend), golden=False) for backend in (a, b)]
    prepared = []
    try:
        for judge in judges:
            if judge.done is not None:
                for rec in recs:
                    rec.update(verdict=judge.done["verdict"], reason=judge.done["reason"])
                return recs[0], recs[1]
        for backend, judge in zip((a, b), judges):
            prepared.append(sandbox.Prepared(judge.job, backend, judge.view))
        statuses = []
        for backend, p in zip((a, b), prepared):
            statuses.append(p.call())
            backend.synchronize()
        if any(s != abi.Status.SUCCESS for s in statuses):
            for rec, status in zip(recs, statuses):
                rec.update(verdict="ERROR", status=status, reason=f"returned {abi.status_name(status)}; not timed")
            return recs[0], recs[1]
        timings = interleave(prepared[0].call, prepared[1].call, a.timer(), b.timer(), config)
        for rec, timing in zip(recs, timings):
            rec.update(verdict="SKIP", status=0, timing=timing, reason="timed by harness ab; outputs not checked")
    finally:
        for p in prepared:
            p.close()
        for judge in judges:
            judge.close()
    return recs[0], recs[1]


@dataclass
class PairService:
    """What an ab worker does (harness.run.worker's service protocol): open both twins in the one process, so their
    samples interleave, and answer each case with one record carrying the pair (`pair`: [A, B])."""

    libs: tuple[str, str]
    config: TimingConfig

    def open(self, settings: Any) -> dict:
        from harness.backends import open_backend

        self.backends = [open_backend("cpu", operator_lib=lib) for lib in self.libs]
        return self.backends[0].describe()

    def run(self, case: Any, settings: Any) -> dict:
        rec = case.new_record()
        try:
            rec.update(verdict="SKIP", pair=list(_time_case(case, *self.backends, self.config)))
        except Exception as exc:  # a harness bug costs this row on both sides, not the worker
            rec.update(verdict="ERROR", reason=f"harness error: {type(exc).__name__}: {exc}")
        return rec

    def close(self) -> None:
        for backend in self.backends:
            backend.close()


def merge_side(records: list[dict], config: TimingConfig) -> dict:
    """One side's record of a row from its rounds: the first one that was not timed (a crash or a refusal in any
    round is the row's), else the first round's record with the rounds' timings merged
    (harness.perf.timing.merge_rounds: pooled samples, one summary per round)."""
    untimed = [r for r in records if not r.get("timing")]
    if untimed or len(records) == 1:
        return untimed[0] if untimed else records[0]
    return {**records[0], "timing": merge_rounds([r["timing"] for r in records], config)}


def split_pair(rec: dict) -> tuple[dict, dict]:
    """A and B's records from a worker's answer. A row the worker did not finish (CRASH, TIMEOUT) or that left
    something behind is charged to both sides: the fault cannot be told apart within one process."""
    pair = rec.pop("pair", None)
    if not isinstance(pair, list) or len(pair) != 2:
        return dict(rec), dict(rec)
    if rec.get("reason"):
        for side in pair:
            side["reason"] = f"{side['reason']}; {rec['reason']}" if side.get("reason") else rec["reason"]
            if side["verdict"] == "SKIP" and rec["verdict"] == "FAIL":
                side["verdict"] = "FAIL"
    return pair[0], pair[1]


def run_ab(rev_a: str, rev_b: str, tables: list[str], select: str | None, defines_a: dict[str, str],
           defines_b: dict[str, str], config: TimingConfig, history: Any, repo: Path, report_dir: Path,
           progress: Callable[[str], None] = lambda line: None, settings: Settings | None = None
           ) -> tuple[Side, Side]:
    """The CPU twin of this repository at two revisions (`harness ab REV_A REV_B`): run_sides on two twin sides."""
    return run_sides(twin_side("A", rev_a, defines_a, repo), twin_side("B", rev_b, defines_b, repo), tables, select,
                     config, history, report_dir, progress, settings)


def run_sides(a: Side, b: Side, tables: list[str], select: str | None, config: TimingConfig, history: Any,
              report_dir: Path, progress: Callable[[str], None] = lambda line: None,
              settings: Settings | None = None) -> tuple[Side, Side]:
    """Build or find both sides' libraries, time every perf row of `tables` on both in one isolated worker per round
    (`config.rounds`, each round timing every row with the round's share of the samples and time cap), record both
    runs (one session each: history rows, results.jsonl and reports under report_dir/<run_id>/); returns the sides
    with records. A row is recorded once its last round is in; on Ctrl-C the rows are recorded with the rounds they
    have. `settings`: the cpu run's (harness.model.settings.from_options; default: no options given), rows chosen by
    `select`."""
    from harness.store import provenance

    settings = replace(settings or from_options({}, timed=False), select=select)
    harness_commit = str(provenance.harness_git_state()["commit"])
    with tempfile.TemporaryDirectory(prefix="harness-ab-") as tmp:
        try:
            for side in (a, b):
                _open_side(side, Path(tmp), settings)
                progress(f"side {side.label}: {side.what()}")
            _time_sides(a, b, tables, select, config, history, report_dir, progress, settings, harness_commit)
        finally:
            for side in (a, b):
                _remove_worktree(side)
    return a, b


def _time_sides(a: Side, b: Side, tables: list[str], select: str | None, config: TimingConfig, history: Any,
                report_dir: Path, progress: Callable[[str], None], settings: Settings, harness_commit: str) -> None:
    """run_sides' timing and recording, once both libraries are there."""
    from harness.run import runner
    from harness.tables.load import load_cases
    from harness.store import provenance

    cases = [c for c in load_cases(tables, select) if c.is_perf and not c.skip and not c.errors]
    for side in (a, b):
        side.run_id = f"{provenance.new_run_id(side.commit if side.kind == 'twin' else harness_commit)}-ab{side.label}"
    sessions = [Session(history, report_dir / s.run_id, _meta(s, o, tables, settings, config), cases)
                for s, o in ((a, b), (b, a))]
    for session in sessions:
        session.start()

    pending: defaultdict[tuple[str, str], list[tuple[dict, dict]]] = defaultdict(list)  # a row's rounds so far

    def record(key: tuple[str, str]) -> None:
        pairs = pending.pop(key)
        for i, session in enumerate(sessions):
            session.record(merge_side([pair[i] for pair in pairs], config))

    def on_record(rec: dict) -> None:
        key = (str(rec.get("op")), rec["case_name"])
        pending[key].append(split_pair(rec))
        progress(f"[round {len(pending[key])}/{config.rounds}] {rec['case_name']}")
        if len(pending[key]) == config.rounds:
            record(key)
    interrupted_by = 0
    try:
        service = replace(settings, service=PairService((a.lib, b.lib), config.per_round()))
        for _ in range(config.rounds):
            runner.run(cases, service, on_record)
    except runner.Interrupted as exc:
        interrupted_by = exc.signum
        raise
    finally:  # both runs closed and reported, marked when Ctrl-C cut them short
        for key in list(pending):
            record(key)
        for side, session in zip((a, b), sessions):
            session.finish(interrupted_by)
            side.records = session.records
