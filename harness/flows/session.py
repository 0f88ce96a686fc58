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
from typing import Any, Iterator, TextIO

from harness.store import operator_identity, provenance
from harness.model import codec
from harness.store import job
from harness.model.exitcodes import Exit, interrupted
from harness.reports.progress import Progress
from harness.model.meta import META, RESULTS, RunMeta, RunSettings
from harness.model.record import Record, accept_disputed, outcome, summarize

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
        from harness.reports.junit import write_junit
        from harness.reports.progress import closing_lines

        out = out or sys.stdout
        try:
            paths = self.finish(interrupted_by)
            if junitxml:
                paths["junitxml"] = write_junit(junitxml, self.meta, self.records)
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
