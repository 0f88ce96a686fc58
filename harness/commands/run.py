"""`harness run [CSV ...]`: the front door. Runs case tables on a backend and writes the acceptance report.

Without CSV arguments it runs every `*_test.csv` in `cases/`. Records are appended to `results.jsonl` and the
history database as each row finishes, so an interrupted run loses nothing it completed.
"""
from __future__ import annotations

import argparse
import json
import sys
from functools import lru_cache
from pathlib import Path

from harness import ops, provenance
from harness.backends import BackendUnavailable
from harness.cli import EXIT_ENV
from harness.engine import DEFAULT_MEMORY_CAP, Case, load_cases
from harness.record import DISPUTED, FAILING, Record, accept_disputed, summarize


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run case tables and write a report", description=__doc__)
    p.add_argument("csv", nargs="*", help="case tables (default: every *_test.csv in cases/)")
    add_backend_options(p)
    p.add_argument("-n", "--workers", type=int, default=2, help="parallel workers for precision rows (default 2)")
    p.add_argument("-k", dest="select", help="pytest-style keyword expression over case names")
    p.add_argument("--report-dir", default="reports", help="reports land in REPORT_DIR/<run_id>/")
    p.add_argument("--history", default="reports/history.sqlite", help="SQLite run history")
    p.add_argument("--timeout", type=float, default=600.0, help="per-row limit in seconds (TIMEOUT beyond it)")
    p.add_argument("--no-poison", action="store_true",
                   help="do not poison never-read regions (byte parity with the C++ frame's inputs)")
    p.add_argument("--accept-disputed", action="store_true",
                   help="DISPUTED precision rows (official gate failed, diagnosis clears the output) do not fail the "
                        "run; they stay DISPUTED in every report, and the acceptance is recorded in the settings")
    p.add_argument("--memory-cap", type=float, default=DEFAULT_MEMORY_CAP / 2**30,
                   help="refuse rows whose buffers exceed this many GiB (default 8)")
    add_timing_options(p)
    p.set_defaults(func=run)


def add_backend_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", default="cpu", choices=("cpu", "npu", "cuda"))
    p.add_argument("--device", type=int, default=0, help="device id (npu, cuda)")
    p.add_argument("--operator-lib", help="shared library exporting the ops-blas C ABI (cpu, npu backends)")


def add_timing_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timing-mode", default="sync", choices=("sync", "steady"),
                   help="sync: one synchronised call per sample (task-book Avg time); steady: back-to-back calls")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--min-samples", type=int, default=50)
    p.add_argument("--max-time", type=float, default=None,
                   help="time cap in seconds for one perf row's samples (default 0.4 on cpu, 10 on devices); "
                        "warm-up gets a quarter of it")


def backend_options(args: argparse.Namespace) -> dict:
    options: dict = {"device": args.device}
    if args.operator_lib:
        options["operator_lib"] = args.operator_lib
    return options


def timing_config(args: argparse.Namespace):
    from harness.timing import TimingConfig

    cap = args.max_time if args.max_time is not None else (0.4 if args.backend == "cpu" else 10.0)
    return TimingConfig(mode=args.timing_mode, warmup=args.warmup, min_samples=args.min_samples,
                        max_time_s=cap, warmup_max_time_s=cap / 4)


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
    from harness import reports, runner
    from harness.history import History

    tables = args.csv or default_tables()
    missing = [t for t in tables if not Path(t).is_file()]
    if not tables or missing:
        print(f"harness run: no such case table: {', '.join(missing) or 'cases/*_test.csv'}", file=sys.stderr)
        return EXIT_ENV
    settings = runner.Settings(backend=args.backend, backend_options=backend_options(args), workers=args.workers,
                               timeout_s=args.timeout, poison=not args.no_poison,
                               memory_cap=int(args.memory_cap * 2**30), timing=timing_config(args),
                               baselines=baselines_for)
    try:
        backend_info = runner.check_backend(settings)
    except BackendUnavailable as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_ENV
    cases = load_cases(tables, args.select)
    git = provenance.git_state()
    run_id = provenance.new_run_id(str(git["commit"]))
    out_dir = Path(args.report_dir) / run_id
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = {
        "run_id": run_id, **git, "backend": args.backend, "device": backend_info.get("device", ""),
        "host": provenance.host(), "inputs": [{"path": t, "sha256": provenance.sha256(t)} for t in tables],
        "settings": {"select": args.select, "workers": args.workers, "timeout_s": args.timeout,
                     "poison": not args.no_poison, "timing": settings.timing.as_dict(),
                     "accept_disputed": args.accept_disputed,
                     "gates": {name: ops.get(name).GATE for name in ops.names()}},
        "started": provenance.now(), "backend_info": backend_info, "golden_blas": _golden_info(),
    }
    history = History(args.history)
    history.start_run(meta)
    records: list[Record] = []
    progress = _Progress(len(cases))
    with (out_dir / "results.jsonl").open("a") as stream:
        def on_record(rec: Record) -> None:
            if args.accept_disputed:
                accept_disputed(rec)
            records.append(rec)
            stream.write(json.dumps(rec, default=str) + "\n")
            stream.flush()
            history.record(run_id, rec)
            progress.update(rec)

        runner.run(cases, settings, on_record)
    meta["finished"] = provenance.now()
    summary = summarize(records)
    history.finish_run(run_id, summary)
    order = {c.id: i for i, c in enumerate(cases)}
    records.sort(key=lambda r: order.get(f"{Path(r['table']).name}::{r['case_name']}", 0))
    paths = reports.write_all(out_dir, meta, records)
    print(f"\n{summary['total']} rows: {summary['passed']} passed, {summary['failed']} failed, "
          f"{summary['errors']} errors, {summary['crashed']} crashed, {summary['timeouts']} timeouts, "
          f"{summary['skipped']} skipped, {summary['disputed']} disputed"
          + (" (accepted)" if args.accept_disputed and summary["disputed"] else ""))
    print(f"report: {paths.get('md', out_dir)}")
    return reports.exit_code(records)


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
