"""`harness run [CSV ...]`: the front door. Runs case tables on a backend and writes the acceptance report.

Without CSV arguments it runs every `*_test.csv` in `cases/`. Records are appended to `results.jsonl` (strict JSON,
whole lines only) and the history database as each row finishes, so an interrupted run loses nothing it completed.
Ctrl-C or SIGTERM stops dispatching, kills the rows in flight, writes every report for what finished (marked
`interrupted`), closes the history run and exits 128+signal (130, 143). A history or report path that cannot be
written (disk full, not a directory, not a database) is one line and exit 3; what was written stays consistent.
A -k expression that selects no row prints "0 of N rows selected" and exits 2 without recording a run.
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from dataclasses import replace
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

from harness.model import operators as ops
from harness.model.settings import DEFAULT_MEMORY_CAP
from harness.model.exitcodes import Exit
from harness.options import (Grouped, add_backend_options, add_baselines_option, add_history_option,
                             add_select_option, add_table_options, add_timeout_option, add_timing_options,
                             default_tables, non_negative_int, positive_float, positive_int, shard_spec)
from harness.model.settings import from_options
from harness.store import operator_identity
from harness.model.meta import new_settings

if TYPE_CHECKING:
    from harness.flows.session import Session
    from harness.model.case import Case

# What a run runs on (tables, judge, runner, reports: numpy, pandas, matplotlib) is imported by `run` when it runs,
# not with the module: `harness --help` and every other command build this parser too.


#: `harness run --help` by purpose: group title -> the option names (or the positional's name) it holds. A new
#: option goes under one of these titles (or a new one); tests/docs/test_docs.py fails on an option listed nowhere.
OPTION_GROUPS: dict[str, tuple[str, ...]] = {
    "tables and selection": ("csv", "-k", "--shard", "--operator", "--lenient"),
    "backend and device": ("--backend", "--device", "--operator-lib", "--operator-rev", "--operator-src", "--hardware",
                           "--workers", "--cluster", "--retries"),
    "timing": ("--timing-mode", "--timing-scope", "--warmup", "--min-samples", "--max-time", "--rounds",
               "--baselines"),
    "output and history": ("--report-dir", "--history", "--junitxml", "--accept-disputed", "--no-golden-cache"),
    "isolation": ("--timeout", "--no-poison", "--memory-cap"),
}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = Grouped(sub.add_parser("run", help="run case tables and write the acceptance report (the main job)",
                               description=__doc__), OPTION_GROUPS)
    p.add_argument("csv", nargs="*", help="case tables (default: every *_test.csv in cases/)")
    add_backend_options(p)
    p.add_argument("-n", "--workers", type=positive_int, default=2,
                   help="parallel workers for precision rows on a single --device (several devices get one worker "
                        "each)")
    add_select_option(p)
    add_table_options(p)
    p.add_argument("--report-dir", default="reports", help="reports land in REPORT_DIR/<run_id>/")
    add_history_option(p)
    add_timeout_option(p)
    p.add_argument("--no-poison", action="store_true",
                   help="do not poison never-read regions (byte parity with the C++ frame's inputs)")
    p.add_argument("--accept-disputed", action="store_true",
                   help="DISPUTED precision rows (official gate failed, diagnosis clears the output) do not fail the "
                        "run; they stay DISPUTED in every report, and the acceptance is recorded in the settings")
    p.add_argument("--memory-cap", type=positive_float, default=DEFAULT_MEMORY_CAP / 2**30,
                   help="refuse rows whose buffers exceed this many GiB")
    p.add_argument("--no-golden-cache", action="store_true",
                   help="compute every golden afresh: neither read nor write the judge's golden cache "
                        "($HARNESS_CACHE_DIR/goldens, else ~/.cache/ops-blas-harness/goldens)")
    add_timing_options(p)
    add_baselines_option(p)
    add_scale_options(p)
    p.add_argument("--junitxml", metavar="PATH", type=Path,
                   help="also write the run as JUnit XML for CI systems (one testcase per row; FAIL rows as "
                        "failures, ERROR/CRASH/TIMEOUT as errors, each with its reason)")
    p.set_defaults(func=run)


def add_scale_options(p: argparse.ArgumentParser) -> None:
    """Many hosts (issue 16): a Ray cluster, or shards a CI system runs itself and `harness merge` joins."""
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run the rows on a Ray cluster: ray://host:port, host:port or auto (default: this host)")
    p.add_argument("--retries", type=non_negative_int, default=0,
                   help="with --cluster: re-run a row whose host died this many times on another host")
    p.add_argument("--shard", type=shard_spec, metavar="I/N",
                   help="run only shard I of N (every N-th selected row); `harness merge` joins the shards' reports")


@lru_cache(maxsize=None)
def _operator_baselines(table: str, op: str, extra: tuple[str, ...]) -> tuple:
    """(baselines of `op` for a table, what a row none matches gets) from harness.perf.baselines' search order."""
    from harness.perf import baselines

    dirs = baselines.search_dirs(table, extra)
    return tuple(baselines.for_operator(op, dirs)), baselines.unmatched(op, dirs)


def baselines_for(case: Case, extra: tuple[str, ...] = ()) -> list:
    """The baselines a perf row is judged against, or the one saying that none matches it and where they were
    looked for."""
    from harness.perf.baselines import match

    spec = ops.get(case.op)
    if spec is None or case.args is None:
        return []
    found, none = _operator_baselines(case.table, case.op, extra)
    return match(list(found), case.name, spec.baseline_params(case.args)) or [none]


def warn_unmatched(cases: list[Case], extra: tuple[str, ...], out=None) -> None:
    """One line per operator whose perf rows no baseline matches (they will be NO_REF), naming the first few.
    `out` defaults to sys.stderr as it is at the call (a default bound at import outlives a replaced stream)."""
    out = out or sys.stderr
    by_op: dict[str, list[Case]] = {}
    for case in cases:
        if case.is_perf:
            by_op.setdefault(case.op, []).append(case)
    for op, rows in by_op.items():
        alone = [c.name for c in rows if [b.kind for b in baselines_for(c, extra)] == ["none"]]
        if alone:
            names = ", ".join(alone[:5]) + (", ..." if len(alone) > 5 else "")
            reason = _operator_baselines(rows[0].table, op, extra)[1].source
            print(f"harness run: warning: {len(alone)} of {len(rows)} {op} perf rows match no baseline and will be "
                  f"NO_REF ({names}): {reason}", file=out)


def _preflight(args: argparse.Namespace, tables: list[str]) -> list | None:
    """The tables read with every header and lint finding said before the first row (harness.tables.preflight), or
    None, the reason on stderr, when the run cannot go ahead."""
    from harness.flows.session import why
    from harness.tables import preflight
    from harness.tables.reader import TableError

    if problem := _tables_problem(tables) or operator_identity.options_problem(args.operator_rev,
                                                                                 args.operator_src):
        print(f"harness run: {problem}", file=sys.stderr)
        return None
    try:
        return preflight.check_all(tables, args.operator, args.lenient)
    except TableError as exc:
        print(str(exc), file=sys.stderr)
    except OSError as exc:  # a table that vanished or cannot be read after the first check
        print(f"harness run: {why(exc)}", file=sys.stderr)
    return None


def run(args: argparse.Namespace) -> int:
    from harness.backends import BackendUnavailable
    from harness.flows.session import Session, new_meta, why
    from harness.judge import golden_cache
    from harness.perf import verdict as perf
    from harness.reports.progress import Progress
    from harness.run import runner, shard
    from harness.run.cluster import ClusterUnavailable
    from harness.tables.load import table_cases
    from harness.tables.keywords import matches
    from harness.tables.reader import TableError

    tables = args.csv or default_tables()
    if args.no_golden_cache:  # the run's judge processes inherit it
        os.environ[golden_cache.SWITCH_ENV] = "0"
    checked = _preflight(args, tables)
    if checked is None:
        return Exit.ENV
    every = [case for table, op in checked for case in table_cases(table, op)]
    cases = [c for c in every if matches(args.select, c.name)] if args.select else every
    if "msprof" in (args.timing_scope or ()):  # each perf row in a nested run under msprof (harness.flows.msprof)
        from harness.flows import msprof
        return msprof.run(args, cases, baselines_for)
    try:
        settings = from_options(args, timed=True, baselines=partial(baselines_for, extra=tuple(args.baselines)))
    except (ValueError, OverflowError) as exc:  # option values that pass one by one but not together
        print(f"harness run: {exc}", file=sys.stderr)
        return Exit.ENV
    try:
        # the first line at once: reading and planning 2650 rows, then the probe, take seconds on a loaded machine
        print(f"harness run: {len(tables)} case table(s) ({', '.join(Path(t).name for t in tables)}) on the "
              f"{args.backend} backend", flush=True)
        if args.select:
            print(f"-k {args.select!r}: {len(cases)} of {len(every)} rows selected", flush=True)
            if not cases:
                print("harness run: nothing to run, no run recorded (exit 2)", file=sys.stderr)
                return Exit.INSUFFICIENT
        if args.shard:
            cases = shard.select(cases, args.shard)
        if args.cluster:
            from harness.run.cluster import connect
            connect(args.cluster, args.backend)
        history = _open_history(args.history)
        out_dir = _report_dir(Path(args.report_dir))
        if args.junitxml:
            _report_dir(args.junitxml.parent, "--junitxml")
        if args.backend == "cpu" and not args.operator_lib:
            _build_twin_announced()
        backend_info = runner.check_backend(settings)
        for note in backend_info.get("notes") or []:  # what the backend says once (npu: no device scope)
            print(note, file=sys.stderr)
    except (TableError, BackendUnavailable, _Unusable, ClusterUnavailable) as exc:
        print(str(exc), file=sys.stderr)
        return Exit.ENV
    except OSError as exc:  # a table that vanished or cannot be read after the first check
        print(f"harness run: {why(exc)}", file=sys.stderr)
        return Exit.ENV
    try:  # once the run is sure to go ahead
        warn_unmatched(cases, tuple(args.baselines))
    except ValueError as exc:  # a baseline table that cannot be read: file:line:column and why
        print(f"harness run: {exc}", file=sys.stderr)
        return Exit.ENV
    hardware = perf.hardware_identity(backend_info, args.hardware)
    settings = replace(settings, hardware=hardware["name"])
    meta = new_meta("run", args.backend, tables, new_settings(settings, gates=ops.gates()), backend_info, hardware,
                    operator=operator_identity.of_run(args, backend_info, {c.op for c in cases}))
    session = Session(history, out_dir / meta["run_id"], meta, cases, Progress.for_cases(cases, settings.timing))
    try:
        session.start()
        _dispatch(args, cases, settings, session)
    except runner.Interrupted as exc:
        with runner.StopSignals():
            return session.end(interrupted_by=exc.signum, junitxml=args.junitxml)
    except (OSError, sqlite3.Error) as exc:
        return session.fail(exc)
    with runner.StopSignals():  # a Ctrl-C now would only cut a report in half
        return session.end(junitxml=args.junitxml)


def _build_twin_announced() -> None:
    """Compile the CPU twin before the probe, saying so: a first run (or one after a source change) spends ~10 s
    in the compiler, and silence that long reads as a hang."""
    import time

    from harness.backends.build import DEFAULT_CACHE_DIR, LIB_NAME, OPERATORS_DIR, build_key
    from harness.run.runner import ensure_twin

    if (DEFAULT_CACHE_DIR / build_key({}, OPERATORS_DIR) / LIB_NAME).exists():
        return
    print("compiling the CPU twin (operators/cpu_twin, once per source change) ...", flush=True)
    start = time.monotonic()
    ensure_twin()
    print(f"compiled the CPU twin in {time.monotonic() - start:.1f} s", flush=True)


def _dispatch(args: argparse.Namespace, cases: list[Case], settings, session: Session) -> None:
    """This host's devices, or the Ray cluster's."""
    from harness.run import runner

    if args.cluster:
        from harness.run.cluster import run as run_on_cluster
        run_on_cluster(cases, settings, session.record, retries=args.retries)
    else:
        session.tally = runner.run(cases, settings, session.record, on_start=session.started)


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
    from harness.flows.session import why
    from harness.store.history import History

    history = History(path)
    try:
        history.db.execute("SELECT COUNT(*) FROM runs").fetchone()
    except (OSError, sqlite3.Error) as exc:
        raise _Unusable(f"harness run: --history {history.path}: {why(exc)}") from None
    return history


def _report_dir(path: Path, option: str = "--report-dir") -> Path:
    from harness.flows.session import why

    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe.{os.getpid()}"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise _Unusable(f"harness run: {option} {path}: {why(exc)}") from None
    return path
