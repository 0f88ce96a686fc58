"""`harness run [CSV ...]`: the front door. Runs case tables on a backend and writes the acceptance report.

Without CSV arguments it runs every `*_test.csv` in `cases/`. Records are appended to `results.jsonl` (strict JSON,
whole lines only) and the history database as each row finishes, so an interrupted run loses nothing it completed.
Ctrl-C or SIGTERM stops dispatching, kills the rows in flight, writes every report for what finished (marked
`interrupted`), closes the history run and exits 128+signal (130, 143). A history or report path that cannot be
written (disk full, not a directory, not a database) is one line and exit 3; what was written stays consistent.
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import signal
import sqlite3
import sys
from functools import lru_cache
from pathlib import Path

from harness import devices, ops, perf, provenance, shard
from harness.backends import NAMES, BackendUnavailable
from harness.cases import TableError
from harness.cli import (EXIT_ENV, EXIT_INSUFFICIENT, exit_interrupted, keyword_expression, non_negative_int, number,
                         positive_float, positive_int)
from harness.engine import DEFAULT_MEMORY_CAP, Case, load_cases
from harness.record import DISPUTED, FAILING, Record, accept_disputed, summarize


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run case tables and write a report", description=__doc__)
    p.add_argument("csv", nargs="*", help="case tables (default: every *_test.csv in cases/)")
    add_backend_options(p)
    p.add_argument("-n", "--workers", type=positive_int, default=2,
                   help="parallel workers for precision rows on a single --device (default 2; several devices get "
                        "one worker each)")
    p.add_argument("-k", dest="select", type=keyword_expression,
                   help="pytest-style keyword expression over case names")
    p.add_argument("--report-dir", default="reports", help="reports land in REPORT_DIR/<run_id>/")
    p.add_argument("--history", default="reports/history.sqlite",
                   help="run history: an SQLite file, or a postgresql://user@host/db URL shared by every host")
    p.add_argument("--timeout", type=positive_float, default=600.0,
                   help="per-row limit in seconds (TIMEOUT beyond it)")
    p.add_argument("--no-poison", action="store_true",
                   help="do not poison never-read regions (byte parity with the C++ frame's inputs)")
    p.add_argument("--accept-disputed", action="store_true",
                   help="DISPUTED precision rows (official gate failed, diagnosis clears the output) do not fail the "
                        "run; they stay DISPUTED in every report, and the acceptance is recorded in the settings")
    p.add_argument("--memory-cap", type=positive_float, default=DEFAULT_MEMORY_CAP / 2**30,
                   help="refuse rows whose buffers exceed this many GiB (default 8)")
    add_timing_options(p)
    add_scale_options(p)
    p.set_defaults(func=run)


def add_scale_options(p: argparse.ArgumentParser) -> None:
    """Many hosts (issue 16): a Ray cluster, or shards a CI system runs itself and `harness merge` joins."""
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run the rows on a Ray cluster: ray://host:port, host:port or auto (default: this host)")
    p.add_argument("--retries", type=non_negative_int, default=0,
                   help="with --cluster: re-run a row whose host died this many times on another host (default 0)")
    p.add_argument("--shard", type=shard.parse, metavar="I/N",
                   help="run only shard I of N (every N-th selected row); `harness merge` joins the shards' reports")


#: Rounds per perf row: the spread between fresh processes is what `compare` judges separate runs by.
DEFAULT_ROUNDS = 10


def add_backend_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", default="cpu", choices=NAMES)
    p.add_argument("--device", type=devices.parse, default="0",
                   help="device ids: 3, a list 0,2,5, a range 0-7 or all; one worker per device (cpu: emulated "
                        "devices, `all` = HARNESS_CPU_DEVICES, default 4)")
    p.add_argument("--operator-lib", help="shared library exporting the ops-blas C ABI (cpu, npu backends)")
    p.add_argument("--hardware", metavar="NAME",
                   help="hardware name perf baselines are judged on (default: what the runtime reports, e.g. the "
                        "Ascend SoC or the CUDA device name)")


def add_timing_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timing-mode", default="sync", choices=("sync", "steady"),
                   help="sync: one synchronised call per sample (task-book Avg time); steady: back-to-back calls")
    p.add_argument("--warmup", type=non_negative_int, default=10)
    p.add_argument("--min-samples", type=number(int, 2), default=50, help="at least 2 (a spread needs two)")
    p.add_argument("--max-time", type=positive_float, default=None,
                   help="time cap in seconds for one perf row's samples (default 0.4 on cpu, 10 on devices); "
                        "warm-up gets a quarter of it")
    p.add_argument("--rounds", type=positive_int, default=None,
                   help="rounds per perf row, each in a fresh worker process; samples and time cap are shared "
                        f"out over them (default {DEFAULT_ROUNDS})")


def backend_options(args: argparse.Namespace) -> dict:
    options: dict = {"device": devices.resolve(args.device, args.backend)[0]}
    if args.operator_lib:
        options["operator_lib"] = args.operator_lib
    return options


def timing_config(args: argparse.Namespace):
    from harness.timing import TimingConfig

    cap = args.max_time if args.max_time is not None else (0.4 if args.backend == "cpu" else 10.0)
    return TimingConfig(mode=args.timing_mode, warmup=args.warmup, min_samples=args.min_samples,
                        max_time_s=cap, warmup_max_time_s=cap / 4,
                        rounds=args.rounds if getattr(args, "rounds", None) is not None else DEFAULT_ROUNDS)


def default_tables() -> list[str]:
    for root in (Path.cwd(), Path(__file__).resolve().parents[2]):
        found = sorted((root / "cases").glob("*_test.csv"))
        if found:
            return [str(p) for p in found]
    return []


@lru_cache(maxsize=None)
def _table_baselines(table: str, op: str) -> tuple:
    from harness.baselines import load_baselines

    return tuple(load_baselines(Path(table).parent / "baselines", op))


def baselines_for(case: Case) -> list:
    from harness.baselines import match

    spec = ops.get(case.op)
    if spec is None or case.args is None:
        return []
    return match(list(_table_baselines(case.table, case.op)), case.name, spec.baseline_params(case.args))


def run(args: argparse.Namespace) -> int:
    from harness import runner
    from harness.cluster import ClusterUnavailable

    tables = args.csv or default_tables()
    if problem := _tables_problem(tables):
        print(f"harness run: {problem}", file=sys.stderr)
        return EXIT_ENV
    try:
        settings = runner.Settings(backend=args.backend, backend_options=backend_options(args), workers=args.workers,
                                   timeout_s=args.timeout, poison=not args.no_poison,
                                   memory_cap=int(args.memory_cap * 2**30), timing=timing_config(args),
                                   baselines=baselines_for, devices=devices.resolve(args.device, args.backend))
    except (ValueError, OverflowError) as exc:  # option values that pass one by one but not together
        print(f"harness run: {exc}", file=sys.stderr)
        return EXIT_ENV
    try:
        cases = load_cases(tables, args.select)
        if args.shard:
            cases = shard.select(cases, args.shard)
        if args.cluster:
            from harness.cluster import connect
            connect(args.cluster, args.backend)
        history = _open_history(args.history)
        out_dir = _report_dir(Path(args.report_dir))
        backend_info = runner.check_backend(settings)
    except (TableError, BackendUnavailable, _Unusable, ClusterUnavailable) as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_ENV
    except OSError as exc:  # a table that vanished or cannot be read after the first check
        print(f"harness run: {_why(exc)}", file=sys.stderr)
        return EXIT_ENV
    hardware = perf.hardware_identity(backend_info, args.hardware)
    settings.hardware = hardware["name"]
    meta = _meta(args, tables, settings, backend_info, hardware)
    session = _Session(history, out_dir / meta["run_id"], meta, cases)
    try:
        session.start()
        _dispatch(args, cases, settings, session.record)
    except runner.Interrupted as exc:
        with runner.StopSignals():
            return session.end(interrupted=exc.signum)
    except (OSError, sqlite3.Error) as exc:
        return session.fail(exc)
    with runner.StopSignals():  # a Ctrl-C now would only cut a report in half
        return session.end()


def _dispatch(args: argparse.Namespace, cases: list[Case], settings, on_record) -> None:
    """This host's devices, or the Ray cluster's."""
    from harness import runner

    if args.cluster:
        from harness.cluster import run as run_on_cluster
        run_on_cluster(cases, settings, on_record, retries=args.retries)
    else:
        runner.run(cases, settings, on_record)


class _Unusable(Exception):
    """A history or report path that cannot be used; the message is the one line printed (exit 3)."""


def _tables_problem(tables: list[str]) -> str:
    """Why the given tables cannot be run at all ("" when they can): missing, not files, or one given twice."""
    if not tables:
        return "no case tables given and none in cases/*_test.csv"
    seen: dict[str, str] = {}
    for t in tables:
        if not Path(t).exists():
            return f"no such case table: {t}"
        if not Path(t).is_file():
            return f"{t}: not a regular file (a case table must be one)"
        key = os.path.realpath(t)
        if key in seen:
            return f"{t}: the same table as {seen[key]} (given twice)"
        seen[key] = t
    return ""


def _open_history(path: str):
    """The history database, opened and checked now, so a bad --history is one line before anything runs."""
    from harness.history import History

    history = History(path)
    try:
        history.db.execute("SELECT COUNT(*) FROM runs").fetchone()
    except (OSError, sqlite3.Error) as exc:
        raise _Unusable(f"harness run: --history {history.path}: {_why(exc)}") from None
    return history


def _report_dir(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe.{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise _Unusable(f"harness run: --report-dir {path}: {_why(exc)}") from None
    return path


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}" + (f" ({exc.filename})" if exc.filename else "")
    return str(exc) or type(exc).__name__


def _meta(args: argparse.Namespace, tables: list[str], settings, backend_info: dict, hardware: dict) -> dict:
    """Provenance: the harness's own commit (of the checkout it runs from, not the cwd), the operator library
    and its sha256, each table's sha256, the settings, the hardware perf rows are judged on."""
    git = provenance.harness_git_state()
    return {
        "run_id": provenance.new_run_id(str(git["commit"])), **git, "backend": args.backend,
        "device": backend_info.get("device", ""), "host": provenance.host(),
        "inputs": [{"path": t, "sha256": provenance.sha256(t)} for t in tables],
        "operator_lib": {"path": backend_info.get("library"), "sha256": backend_info.get("library_sha256")},
        "settings": {"select": args.select, "workers": args.workers, "devices": settings.devices,
                     "timeout_s": args.timeout,
                     "poison": not args.no_poison, "timing": settings.timing.as_dict(),
                     "accept_disputed": args.accept_disputed, "cluster": args.cluster,
                     "shard": shard.label(args.shard) if args.shard else None,
                     "gates": {name: ops.get(name).GATE for name in ops.names()}},
        "started": provenance.now(), "backend_info": backend_info, "golden_blas": _golden_info(),
        "hardware": hardware, "interrupted": False,
    }


class _Session:
    """One run's outputs (state: the records so far, the open results.jsonl): only this process writes them."""

    def __init__(self, history, out_dir: Path, meta: dict, cases: list[Case]):
        self.history, self.out_dir, self.meta, self.cases = history, out_dir, meta, cases
        self.records: list[Record] = []
        self.progress = _Progress(len(cases))
        self.stream = -1

    def start(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.stream = os.open(self.out_dir / "results.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC,
                              0o644)
        self.history.start_run(self.meta)

    def record(self, rec: Record) -> None:
        from harness.reports.json_csv import strict

        if self.meta["settings"]["accept_disputed"]:
            accept_disputed(rec)
        self.records.append(rec)
        append_line(self.stream, json.dumps(strict(rec), allow_nan=False, ensure_ascii=False))
        self.history.record(self.meta["run_id"], rec)
        self.progress.update(rec)

    def end(self, interrupted: int = 0) -> int:
        """Reports for what finished, the history run closed; the exit code."""
        from harness import reports

        self.meta.update(finished=provenance.now(), interrupted=bool(interrupted))
        summary = summarize(self.records)
        try:
            self.history.finish_run(self.meta["run_id"], {**summary, "interrupted": bool(interrupted)})
            order = {(c.table, c.line): i for i, c in enumerate(self.cases)}
            self.records.sort(key=lambda r: order.get((r["table"], r["line"]), 0))
            paths = reports.write_all(self.out_dir, self.meta, self.records)
        except (OSError, sqlite3.Error) as exc:
            return self.fail(exc)
        finally:
            self._close_stream()
        if interrupted:
            print(f"\nharness run: interrupted by {signal.Signals(interrupted).name}: {summary['total']} of "
                  f"{len(self.cases)} rows finished; reports in {self.out_dir}", file=sys.stderr)
            return exit_interrupted(interrupted)
        print(f"\n{summary['total']} rows: {summary['passed']} passed, {summary['failed']} failed, "
              f"{summary['errors']} errors, {summary['crashed']} crashed, {summary['timeouts']} timeouts, "
              f"{summary['skipped']} skipped, {summary['disputed']} disputed"
              + (" (accepted)" if self.meta["settings"]["accept_disputed"] and summary["disputed"] else ""))
        print(f"report: {paths.get('md', self.out_dir)}")
        code = reports.exit_code(self.records)
        unjudged = perf.unjudged_device_run(self.records, self.meta["backend"], self.meta["hardware"]["name"])
        if unjudged and code == 0:
            print(unjudged)
            return EXIT_INSUFFICIENT
        return code

    def fail(self, exc: BaseException) -> int:
        """A file the run must write cannot be written: one line, exit 3; no temporary file stays behind."""
        self._close_stream()
        for tmp in self.out_dir.glob(".*.tmp"):
            tmp.unlink(missing_ok=True)
        where = getattr(exc, "filename", None) or (self.history.path if isinstance(exc, sqlite3.Error)
                                                   else self.out_dir)
        print(f"\nharness run: cannot write {where}: {_why(exc)}; {len(self.records)} finished rows are kept",
              file=sys.stderr)
        return EXIT_ENV

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


def _golden_info() -> dict:
    import golden

    return golden.blas_info()


class _Progress:
    """One character per finished row (gtest-like dots), a line per non-passing row: visible, never noisy."""

    def __init__(self, total: int):
        self.total, self.done = total, 0

    def update(self, rec: Record) -> None:
        self.done += 1
        if rec["verdict"] in FAILING or rec["verdict"] == DISPUTED:
            print(f"\n[{rec['verdict']}] {Path(rec['table']).name}::{rec['case_name']}: {rec['reason']}",
                  flush=True)
        elif self.done % 50 == 0 or self.done == self.total:
            print(f"[{self.done}/{self.total}]", end=" ", flush=True)
