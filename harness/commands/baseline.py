"""`harness baseline [--backend cuda] CSV [-k EXPR] [--out PATH]`: measure a GPU-baseline table.

Times the perf rows (`TC_PF_*`) of one case table and writes `<table dir>/baselines/<op>_gpu_baseline.csv` (or
--out): the op's key params, `gpu_ms`, hardware, driver/CUDA/cuBLAS versions, method and date, the table task
packages judge NPU times against (pass if gpu_us / npu_us >= 0.4). Each row goes through the same path as
`harness run` (an isolated worker process that alone loads the library; status and guard-zone checks first), so a
row that misbehaves is reported, never written. The run is recorded like `harness run`'s (kind "baseline": history,
results.jsonl and reports under REPORT_DIR/<run_id>/), so the measurement behind a baseline table can be looked at
later; `harness compare latest` never picks it.
Exit 0 every selected row written; 1 some row failed or fell short of the minimum samples; 2 no perf row
selected; 3 no such table or backend.
"""
from __future__ import annotations

import argparse
import sqlite3
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.model import operators as ops
from harness.model.exitcodes import Exit
from harness.options import (add_backend_options, add_history_option, add_select_option, add_timeout_option,
                             add_timing_options)
from harness.model.settings import from_options
from harness.store import operator_identity
from harness.model.meta import new_settings

if TYPE_CHECKING:
    from harness.flows.session import Session


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("baseline", help="time a table's perf rows and write its GPU-baseline table",
                       description=__doc__)
    p.add_argument("csv", help="one case table")
    add_backend_options(p)
    add_select_option(p)
    p.add_argument("--out", help="output CSV (default: <table dir>/baselines/<op>_gpu_baseline.csv)")
    add_timeout_option(p)
    add_timing_options(p)
    add_history_option(p)
    p.add_argument("--report-dir", default="reports", help="the run's reports land in REPORT_DIR/<run_id>/")
    p.set_defaults(func=run, backend="cuda")


def method_text(backend_name: str, config: Any) -> str:
    """How the numbers were taken, in the words the baseline table's `method` column carries."""
    clock = "CUDA events" if backend_name == "cuda" else f"{backend_name} backend timer"
    if config.mode == "steady":
        shape = f"back-to-back batches of {config.steady_batch} calls per sync"
        stat = "mean per call"
    else:
        shape, stat = "per-call sync", "mean"
    return f"{clock}, {shape}, warm-up {config.warmup}, >= {config.min_samples} samples, {stat}"


def baseline_row(case: Any, timing: dict, info: dict, method: str, date: str) -> dict[str, Any]:
    """One table row: the case's key params as its operator defines them, the mean in ms, and provenance."""
    return {
        "case_name": case.name,
        **ops.get(case.op).baseline_params(case.args),
        "gpu_ms": round(timing["mean_us"] / 1e3, 6),
        "hardware": info.get("device", ""),
        "driver": info.get("driver") or info.get("driver_cuda_version", ""),
        "cuda": info.get("cuda_runtime_version", ""),
        "cublas": info.get("cublas_version", ""),
        "method": method,
        "date": date,
    }


def run(args: argparse.Namespace) -> int:
    from harness.backends import BackendUnavailable
    from harness.run import runner
    from harness.tables.load import load_cases

    table = Path(args.csv)
    if not table.is_file():
        print(f"harness baseline: no such case table: {table}", file=sys.stderr)
        return Exit.ENV
    if problem := operator_identity.options_problem(args.operator_rev, args.operator_src):
        print(f"harness baseline: {problem}", file=sys.stderr)
        return Exit.ENV
    cases = [c for c in load_cases([str(table)], args.select) if c.is_perf]
    if not cases:
        print(f"harness baseline: no perf rows (TC_PF_*) selected in {table}", file=sys.stderr)
        return Exit.INSUFFICIENT
    try:
        settings = from_options(args, timed=True)
        info = runner.check_backend(settings)
    except BackendUnavailable as exc:
        print(str(exc), file=sys.stderr)
        return Exit.ENV
    except ValueError as exc:  # option values that pass one by one but not together (--device all, none found)
        print(f"harness baseline: {exc}", file=sys.stderr)
        return Exit.ENV
    return _recorded(args, table, cases, settings, info)


def _recorded(args: argparse.Namespace, table: Path, cases: list, settings: Any, info: dict) -> int:
    """_measure inside a session of kind "baseline"; a history or report path that cannot be written is exit 3."""
    from harness.flows.session import Session, new_meta
    from harness.perf import verdict as perf
    from harness.store.history import History

    meta = new_meta("baseline", args.backend, [str(table)], new_settings(settings, gates=ops.gates()), info,
                    perf.hardware_identity(info, None),
                    operator=operator_identity.of_run(args, info, {c.op for c in cases}))
    session = Session(History(args.history), Path(args.report_dir) / meta["run_id"], meta, cases)
    try:
        with session.recording():
            code = _measure(args, table, cases, settings, info, session)
    except (OSError, sqlite3.Error) as exc:
        return session.fail(exc)
    print(f"run {meta['run_id']} (kind baseline) recorded in {session.history.path}; reports in {session.out_dir}")
    return code


def _measure(args: argparse.Namespace, table: Path, cases: list, settings: Any, info: dict,
             session: Session) -> int:
    from harness.perf import baselines
    from harness.run import runner

    config = settings.timing
    method = method_text(args.backend, config)
    date = datetime.now(timezone.utc).date().isoformat()
    by_key = {(c.table, c.line): c for c in cases}
    rows, failed = [], 0

    def take(rec: dict) -> None:
        nonlocal failed
        session.record(rec)
        case, timing = by_key[(rec["table"], rec["line"])], rec["timing"]
        if rec["verdict"] != "PASS" or not timing:
            failed += 1
            print(f"[{rec['verdict']}] {case.name}: {rec['reason'] or 'not timed'}", file=sys.stderr)
        elif timing["n"] < config.min_samples:
            failed += 1
            print(f"[SHORT] {case.name}: {timing['n']} samples within the time cap, {config.min_samples} needed "
                  f"(raise --max-time)", file=sys.stderr)
        else:
            rows.append(baseline_row(case, timing, info, method, date))
            print(f"{case.name}: {timing['mean_us']:.2f} us mean of {timing['n']}", flush=True)
    runner.run(cases, settings, take)
    if rows:
        order = {c.name: i for i, c in enumerate(cases)}
        rows.sort(key=lambda row: order[row["case_name"]])
        out = Path(args.out) if args.out else table.parent / "baselines" / f"{cases[0].op}_gpu_baseline.csv"
        out.parent.mkdir(parents=True, exist_ok=True)
        baselines.write_gpu_baseline(out, rows)
        print(f"wrote {len(rows)} of {len(cases)} perf rows to {out} ({info.get('device', args.backend)})")
    return Exit.FAIL if failed else Exit.OK
