"""One run's life on disk: its meta, its results.jsonl and history rows as each row finishes, the progress display,
and the reports at the end.

`harness run`, `harness ab` (one session per side), `harness baseline`, `harness mutants` (one session per library
built), `harness report` (rebuilding) and the pytest plugin (with `--harness-report-dir`) all go through this, so a
run looks the same in reports/ and in the history whoever made it, and the commands stay shells that parse options
and print. Only this process writes a session's files:
results.jsonl gets whole lines only, run.json the meta as soon as the run starts, so a crashed run can still be
rebuilt (`harness report`).
"""
from __future__ import annotations

import errno
import os
import signal
import sqlite3
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, TextIO, TypedDict

from harness.store import codec, operator_identity, provenance
from harness.store import job
from harness.exitcodes import Exit, interrupted
from harness.progress import Progress
from harness.store.record import Record, accept_disputed, outcome, summarize

if TYPE_CHECKING:
    from harness.settings import Settings

RESULTS = "results.jsonl"
META = "run.json"
#: The kinds whose runs measure the checkout's own operators with their outputs judged: what `latest`, `previous`
#: and a git revision name in `harness compare`. An ab side is a build of another revision (perhaps with defines,
#: outputs unchecked), a mutants run is broken on purpose, a baseline run times a peer library: each is reached by
#: its run id only, so none of them silently becomes the reference a regression is measured against.
REFERENCE_KINDS = ("run", "pytest")


class RunSettings(TypedDict):
    """What the run was asked to do; every key present in every meta (load_meta fills older runs' gaps)."""

    select: str | None
    workers: int
    timeout_s: float | None
    poison: bool
    timing: dict[str, Any]
    accept_disputed: bool
    gates: dict[str, str]  # op -> the precision gate its rows are judged by
    ab: dict[str, Any] | None  # harness ab: {"side", "rev", "pair", "defines"}; None otherwise
    devices: list[int]  # the device ids rows ran on (cpu: emulated devices)
    cluster: str | None  # the Ray cluster address (--cluster); None: this host
    shard: str | None  # "i/N" for `harness run --shard i/N`; None: every selected row
    mutant: dict[str, Any] | None  # harness mutants: {"name", "description"} ("clean": the twin as written)


class RunMeta(TypedDict):
    """report.json `meta`, run.json and the history's runs.meta (contract, docs/architecture.md "Report")."""

    kind: str  # "run", "ab", "pytest", "baseline" or "mutants": which shell made the session
    run_id: str
    commit: str
    dirty: bool
    branch: str
    backend: str
    device: str
    host: dict[str, Any]
    inputs: list[dict[str, str]]  # [{"path", "sha256"}] per case table
    operator_lib: dict[str, Any]  # {"path", "sha256"} (None each when the backend does not say)
    operator: dict[str, Any]  # harness.store.operator_identity.identify: what was judged (library, revision, runtime)
    harness: dict[str, Any]  # provenance.harness_identity: the judging harness's version, commit and dirty flag
    settings: RunSettings
    started: str
    finished: str
    backend_info: dict[str, Any]
    golden_blas: dict[str, Any]
    hardware: dict[str, Any]  # perf.hardware_identity: {"name", "detected", "override"}
    interrupted: bool
    job: dict[str, Any] | None  # harness.store.job.account: the run's wall, compute floor and overhead; None until it ends


def new_meta(kind: str, backend: str, tables: list[str], settings: RunSettings, backend_info: dict[str, Any],
             hardware: dict[str, Any], git: dict[str, Any] | None = None, run_id: str = "",
             operator: dict[str, Any] | None = None) -> RunMeta:
    """Provenance: the harness's own commit (of the checkout it runs from, not the cwd) unless `git` names the
    revision under test (ab), the operator under test (`operator`, else identified from the backend's library with
    its revision found from where it sits), each table's sha256, the settings."""
    import golden

    git = git or provenance.harness_git_state()
    if operator is None:
        operator = operator_identity.identify(backend_info.get("library"), backend_info.get("library_sha256"),
                                              runtime=backend_info)
    return RunMeta(
        kind=kind, run_id=run_id or provenance.new_run_id(str(git["commit"])), commit=str(git["commit"]),
        dirty=bool(git["dirty"]), branch=str(git["branch"]), backend=backend,
        device=str(backend_info.get("device", "")), host=provenance.host(),
        inputs=[{"path": t, "sha256": provenance.table_sha256(t)} for t in tables],
        operator_lib={"path": backend_info.get("library"), "sha256": backend_info.get("library_sha256")},
        operator=operator, harness=provenance.harness_identity(), settings=settings, started=provenance.now(),
        finished="", backend_info=backend_info,
        golden_blas=golden.blas_info(), hardware=hardware, interrupted=False, job=None)


def new_settings(settings: Settings | None = None, *, gates: dict[str, str], timing: dict[str, Any] | None = None,
                 ab: dict[str, Any] | None = None, mutant: dict[str, Any] | None = None) -> RunSettings:
    """The meta's view of the settings a run's workers were given (harness.settings), so the record says what
    the run did; `timing` for a shell that times rows itself (ab), else the settings' own. Without settings: the
    neutral values (a key older runs lack)."""
    if settings is None:
        return RunSettings(select=None, workers=1, timeout_s=None, poison=True, timing=timing or {},
                           accept_disputed=False, gates=gates, ab=ab, devices=[], cluster=None, shard=None,
                           mutant=mutant)
    if timing is None:
        timing = settings.timing.as_dict() if settings.timing is not None else {}
    return RunSettings(select=settings.select, workers=settings.workers, timeout_s=settings.timeout_s,
                       poison=settings.poison, timing=timing, accept_disputed=settings.accept_disputed,
                       gates=gates, ab=ab, devices=list(settings.devices), cluster=settings.cluster,
                       shard=settings.shard, mutant=mutant)


def load_meta(raw: dict[str, Any]) -> RunMeta:
    """A meta read back from disk or the history, every key present: runs recorded before a key existed (or by
    an older shell) get its neutral value here, once, instead of `.get` guesses in every reader."""
    settings = dict(raw.get("settings") or {})
    if (raw.get("summary") or {}).get("interrupted"):  # the history's meta is the start's; the end's is here
        raw = {**raw, "interrupted": True}
    if "criteria" in raw and "gates" not in settings:  # the first runs kept the gates beside the settings
        settings["gates"] = raw["criteria"]
    if "timing_mode" in settings and not settings.get("timing"):  # ... and the timing mode as a setting of its own
        settings["timing"] = {"mode": settings["timing_mode"]}
    blank_settings = new_settings(gates={}, timing={})
    library = raw.get("operator_lib") if isinstance(raw.get("operator_lib"), dict) else {}
    blank = RunMeta(kind="run", run_id="", commit="", dirty=False, branch="", backend="", device="", host={},
                    inputs=[], operator_lib={"path": None, "sha256": None},
                    operator=operator_identity.blank(library.get("path"), library.get("sha256")),
                    harness={"version": "", "commit": raw.get("commit") or "", "dirty": bool(raw.get("dirty"))},
                    settings=blank_settings, started="",
                    finished="", backend_info={}, golden_blas={}, hardware={"name": "", "detected": "",
                                                                            "override": None},
                    interrupted=False, job=None)
    meta = {**blank, **{k: v for k, v in raw.items() if k in blank and v is not None}}
    meta["settings"] = RunSettings(**{**blank_settings, **{k: v for k, v in settings.items()
                                                           if k in blank_settings}})
    meta["operator"] = {**blank["operator"], **meta["operator"]}
    meta["operator"]["label"] = meta["operator"].get("label") or operator_identity.label(meta["operator"])
    if isinstance(meta["hardware"], str):  # recorded as a bare name by early device runs
        meta["hardware"] = {"name": meta["hardware"], "detected": meta["hardware"], "override": None}
    if not isinstance(meta["host"], dict):
        meta["host"] = {"hostname": str(meta["host"])}
    return RunMeta(**meta)  # type: ignore[typeddict-item]


class Session:
    """One run's outputs (state: the records so far, the open results.jsonl, the progress display)."""

    def __init__(self, history: Any, out_dir: Path, meta: RunMeta, cases: list[Any] | None = None,
                 progress: Progress | None = None):
        self.history, self.out_dir, self.meta = history, Path(out_dir), meta
        self.cases = list(cases or [])
        self.records: list[Record] = []
        self.progress = progress if progress is not None else Progress.quiet()
        self._descriptions = {(c.table, c.line): c.description for c in self.cases}
        self.stream = -1
        self.tally: dict[str, Any] | None = None  # harness.run.runner.run's counts (harness.store.job), when it ran the rows
        self.clock = time.monotonic()

    def start(self) -> None:
        self.clock = time.monotonic()
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._write_meta()
        self.stream = os.open(self.out_dir / RESULTS, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        self.history.start_run(self.meta)
        self.progress.start()

    @contextmanager
    def recording(self) -> Iterator[Session]:
        """start(), then finish() however the body ends: marked interrupted when Ctrl-C or SIGTERM cut it short
        (the interrupt goes on to the caller), for shells that print their own outcome (baseline, mutants)."""
        self.start()
        interrupted_by = 0
        try:
            yield self
        except KeyboardInterrupt as exc:
            interrupted_by = getattr(exc, "signum", signal.SIGINT)
            raise
        finally:
            self.finish(interrupted_by)

    def started(self, case: Any) -> None:
        """A row was handed to a worker: the display names it (the row being timed, in the perf phase)."""
        self.progress.started(case)

    def record(self, rec: Record) -> None:
        if not rec.get("description"):
            rec["description"] = self._descriptions.get((rec["table"], rec["line"]), "")
        if self.meta["settings"]["accept_disputed"]:
            accept_disputed(rec)
        self.records.append(rec)
        append_line(self.stream, codec.dumps(rec))
        self.history.record(self.meta["run_id"], rec)
        self.progress.finished(rec)

    def finish(self, interrupted_by: int = 0) -> dict[str, Path]:
        """Close the history run and write every report for what finished; returns the report paths.
        `interrupted_by`: the number of the signal that cut the run short (0: it was not)."""
        from harness import reports

        self.progress.stop()
        # a meta that arrives interrupted (harness merge of an interrupted shard) stays so
        self.meta.update(finished=provenance.now(), interrupted=bool(interrupted_by) or self.meta["interrupted"])
        if self.tally is not None:
            self.meta["job"] = job.account(self.records, self.tally, time.monotonic() - self.clock)
        try:
            self._write_meta()
            self.history.finish_run(self.meta["run_id"], {**summarize(self.records),
                                                          "interrupted": self.meta["interrupted"]})
            order = {(c.table, c.line): i for i, c in enumerate(self.cases)}
            self.records.sort(key=lambda r: order.get((r["table"], r["line"]), 0))
            return reports.write_all(self.out_dir, self.meta, self.records)
        finally:
            self._close_stream()

    def end(self, interrupted_by: int = 0, out: TextIO | None = None, junitxml: Path | None = None) -> int:
        """finish() (and the JUnit XML when asked), the closing lines printed, and the exit code (a write failure
        is fail()'s)."""
        from harness import reports
        from harness.progress import closing_lines

        out = out or sys.stdout
        try:
            paths = self.finish(interrupted_by)
            if junitxml:
                paths["junitxml"] = reports.write_junit(junitxml, self.meta, self.records)
        except (OSError, sqlite3.Error) as exc:
            return self.fail(exc)
        summary = summarize(self.records)
        if interrupted_by:
            print(f"\nharness {self.meta['kind']}: interrupted by {signal.Signals(interrupted_by).name}: "
                  f"{summary['total']} of {len(self.cases)} rows finished; reports in {self.out_dir}",
                  file=sys.stderr)
            return interrupted(interrupted_by)
        code, why_insufficient = outcome(self.records, self.meta)
        if why_insufficient:
            print(why_insufficient, file=out)
        accepted = bool(self.meta["settings"]["accept_disputed"] and summary["disputed"])
        lines = closing_lines(self.meta, self.records, paths, code, accepted)
        if job.console_line(self.meta["job"]):  # a long run's; before the verdict word, which stays last
            lines.insert(-1, job.console_line(self.meta["job"]))
        print("\n" + "\n".join(lines), file=out)
        return code

    def fail(self, exc: BaseException) -> int:
        """A file the run must write cannot be written: one line, exit 3; no temporary file stays behind."""
        self.progress.stop()
        self._close_stream()
        for tmp in self.out_dir.glob(".*.tmp"):
            tmp.unlink(missing_ok=True)
        where = getattr(exc, "filename", None) or (self.history.path if isinstance(exc, sqlite3.Error)
                                                   else self.out_dir)
        print(f"\nharness {self.meta['kind']}: cannot write {where}: {why(exc)}; {len(self.records)} finished rows "
              "are kept", file=sys.stderr)
        return Exit.ENV

    def _write_meta(self) -> None:
        """run.json: at the start (so a crashed run can be rebuilt), again at the end (finished, interrupted)."""
        from harness.reports.json_csv import write_atomic

        write_atomic(self.out_dir / META, codec.dumps(self.meta, indent=1))

    def _close_stream(self) -> None:
        if self.stream >= 0:
            os.close(self.stream)
            self.stream = -1


def append_line(fd: int, line: str) -> None:
    """Append one line to an O_APPEND file, all of it or nothing: a short write (disk full) is cut back off."""
    data = (line + "\n").encode()
    start = os.lseek(fd, 0, os.SEEK_END)
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    except OSError:
        os.ftruncate(fd, start)
        raise


def why(exc: BaseException) -> str:
    """An OS or database error as the short phrase a one-line message ends with."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}" + (f" ({exc.filename})" if exc.filename else "")
    return str(exc) or type(exc).__name__
