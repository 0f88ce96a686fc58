"""The `msprof` timing scope: a perf row's calls timed by msprof's kernel Task Duration, summed per call.

`harness run --backend npu --timing-scope msprof` runs each selected perf row again, alone, in a nested
`harness run` in the call scope (each call synchronised, so a call's kernels are contiguous on the stream), under
msprof in application mode (`msprof --output=DIR --application=CMD`): every launch is profiled as it ran, with no
kernel replay and no --launch-count cap (msprof op profiles the first kernel only unless --kernel-name names
them, and 1 launch by default, 100 at most). Then it reads `Op Name` and `Task Duration(us)` of every kernel task
from the profile's op_summary_*.csv (or msprof op's OpBasicInfo*.csv), groups the kernels into calls by the
period of their names, keeps the nested run's timed calls (the last `n` before a re-check call, as its record
says) and judges their per-call sums like any figure, in scope `msprof`, with the nested call-scope figure beside
it in `timing.scopes.call`. The rows go to `<report-dir>/msprof-<time>/msprof.json`, not to the history.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from harness.model import operators as ops
from harness.perf import verdict as perf
from harness.model.exitcodes import Exit
from harness.store import stored
from harness.model.codec import dumps
from harness.perf.timing import RunningCI, timing_record
from harness.model.settings import TimingConfig
from harness.model import untrusted

NAME, DURATION, TYPE = "Op Name", "Task Duration(us)", "Task Type"
#: Header variants msprof's own export code has used, first found wins. Ascend/msprof (9ba1ac7be):
#: analysis/msconfig/msprof_export_data_config.py, 'op_summary' headers: "Task Start Time(us)", "Block Num",
#: "Mix Block Num"; analysis/msconfig/prof_header_mapping.json: "Task Start Time" (no unit); its ST checks of
#: op_summary before 2d36dd5b0 (2026-07) and msprof op's OpBasicInfo.csv: "Block Dim", "Mix Block Dim".
START = ("Task Start Time(us)", "Task Start Time")
BLOCKS = ("Block Num", "Block Dim")
MIX_BLOCKS = ("Mix Block Num", "Mix Block Dim")
#: Task types that are kernels (op_summary also lists other tasks); a file without the column is all kernels.
KERNEL_TYPES = ("AI_CORE", "AI_VECTOR_CORE", "AI_CPU", "MIX_AIC", "MIX_AIV")
METHOD = "msprof --application: Task Duration(us) of the call's kernels, summed per call"


class MsprofError(Exception):
    """A profile that cannot be read or grouped; the message is one line (exit 3)."""


def profile_files(directory: Path) -> list[Path]:
    """op_summary_*.csv (application mode) or else OpBasicInfo*.csv (msprof op) anywhere under `directory`."""
    found = sorted(directory.rglob("op_summary_*.csv")) or sorted(directory.rglob("OpBasicInfo*.csv"))
    if not found:
        raise MsprofError(f"msprof: no op_summary_*.csv or OpBasicInfo*.csv under {directory}")
    return found


def _column(header: list[str], names: tuple[str, ...]) -> int | None:
    """The index of the first of `names` (a column's variants) in the header, None when none is there."""
    return next((header.index(n) for n in names if n in header), None)


def _number(path: Path, line: int, cells: list[str], at: int, column: str) -> float:
    try:
        return float(cells[at])  # msprof may end a time with a tab (kept as text by spreadsheets): float strips it
    except ValueError:
        raise MsprofError(f"{path}:{line}:{at + 1}: {column} {cells[at]!r} is not a number") from None


def _blocks(cell: str) -> int | None:
    """A Block Num / Mix Block Num cell: the count, None where msprof wrote none (N/A, NA, empty)."""
    return untrusted.count(cell.strip())


def _kernel_rows(directory: Path) -> list[tuple[float, str, float, int | None, int | None]]:
    """(start or file position, Op Name, Task Duration in us, blocks, mix blocks) of every kernel task, in
    start-time order where the files have a start time (either variant), else in file order."""
    rows = []
    for path in profile_files(directory):
        with path.open(newline="", encoding="utf-8") as f:
            table = list(csv.reader(f))
        header = [c.strip() for c in table[0]] if table else []
        for column in (NAME, DURATION):
            if column not in header:
                raise MsprofError(f"{path}:1:1: no {column!r} column (msprof's columns: {', '.join(header)})")
        name, duration = header.index(NAME), header.index(DURATION)
        start, kind = _column(header, START), _column(header, (TYPE,))
        blocks, mix = _column(header, BLOCKS), _column(header, MIX_BLOCKS)
        for line, cells in enumerate(table[1:], start=2):
            if len(cells) != len(header):
                raise MsprofError(f"{path}:{line}:1: {len(cells)} cells, the header has {len(header)}")
            if kind is not None and cells[kind].strip() not in KERNEL_TYPES:
                continue
            rows.append((len(rows) if start is None else _number(path, line, cells, start, header[start]),
                         cells[name].strip(), _number(path, line, cells, duration, DURATION),
                         None if blocks is None else _blocks(cells[blocks]),
                         None if mix is None else _blocks(cells[mix])))
    return sorted(rows, key=lambda r: r[0])


def read_kernels(directory: Path) -> list[tuple[str, float]]:
    """(Op Name, Task Duration in us) of every kernel task of the profile, in start-time order where the files
    have a start time, else in file order."""
    return [(name, us) for _, name, us, _, _ in _kernel_rows(directory)]


def kernel_blocks(directory: Path) -> dict[str, dict[str, list[int]]]:
    """Per kernel name, the block counts msprof recorded for its tasks (Block Num / Block Dim) and, for mixed
    AIC/AIV kernels, the secondary cores' (Mix Block Num / Mix Block Dim): what the launches really used."""
    out: dict[str, dict[str, set[int]]] = {}
    for _, name, _, blocks, mix in _kernel_rows(directory):
        seen = out.setdefault(name, {"blocks": set(), "mix_blocks": set()})
        seen["blocks"].update([blocks] if blocks is not None else [])
        seen["mix_blocks"].update([mix] if mix is not None else [])
    return {name: {k: sorted(v) for k, v in seen.items()} for name, seen in out.items()}


def period(names: list[str]) -> int:
    """The smallest p such that the name sequence is p names repeated: the kernels of one call."""
    for p in range(1, len(names) + 1):
        if len(names) % p == 0 and all(names[i] == names[i % p] for i in range(len(names))):
            return p
    return len(names)


def per_call_us(kernels: list[tuple[str, float]], timed: int, after: int) -> tuple[list[float], int]:
    """(per-call Task Duration sums of the `timed` calls that end `after` calls before the last, kernels per
    call): the calls before them (the checked first call, warm-up, an opening pass) are dropped."""
    if not kernels:
        raise MsprofError("msprof: the profile has no kernel tasks (was the run under msprof, on the device?)")
    p = period([name for name, _ in kernels])
    calls = [sum(us for _, us in kernels[i:i + p]) for i in range(0, len(kernels), p)]
    if len(calls) < timed + after:
        raise MsprofError(f"msprof: {len(kernels)} kernels do not group into {timed + after} or more calls "
                          f"({len(calls)} calls of {p} kernels)")
    return calls[len(calls) - after - timed:len(calls) - after], p


def nested_run(args: argparse.Namespace, case, report_dir: Path) -> list[str]:
    """The nested `harness run` of one perf row in the call scope, one round, the row's timing options."""
    argv = [sys.executable, "-m", "harness.cli", "run", case.table, "--backend", "npu", "-k", case.name,
            "--timing-scope", "call", "--rounds", "1", "--warmup", str(args.warmup),
            "--min-samples", str(args.min_samples), "--report-dir", str(report_dir / "run"),
            "--history", str(report_dir / "history.sqlite"), "--device", str(args.device[0])]
    for option, value in (("--max-time", args.max_time), ("--operator-lib", args.operator_lib),
                          ("--hardware", args.hardware)):
        if value is not None:
            argv += [option, str(value)]
    return argv


def judged(rec: dict, case, config: TimingConfig, baselines: list, hardware: str, profile: Path) -> dict:
    """The nested record with its timing in scope msprof (the call-scope figure kept in timing.scopes.call)."""
    call_timing = rec.get("timing")
    if not call_timing:
        return rec
    sums, p = per_call_us(read_kernels(profile), call_timing["n"], int(ops.get(case.op).accumulates(case.args)))
    running = RunningCI()
    for us in sums:
        running.add(us)
    converged = running.n >= config.min_samples and running.rel_half_width() <= config.ci_rel_target
    timing = timing_record([us / 1e6 for us in sums], config, call_timing["warmup"], converged, "msprof",
                           "msprof", METHOD)
    timing.update(kernels_per_call=p, kernel_blocks=kernel_blocks(profile), scopes={"call": call_timing})
    rec.update(timing=timing, baseline=perf.baseline_verdicts(timing, baselines, hardware))
    return rec


def run(args: argparse.Namespace, cases: list, baselines_for) -> int:
    """`harness run --timing-scope msprof` over the selected rows' perf rows; the exit code of the run."""
    if args.backend != "npu" or list(args.timing_scope) != ["msprof"]:
        print("harness run: --timing-scope msprof runs alone and on --backend npu (msprof profiles an Ascend "
              "device)", file=sys.stderr)
        return Exit.ENV
    msprof = shutil.which("msprof")
    if msprof is None:
        print("harness run: msprof is not on PATH (requires CANN + NPU; source <CANN>/set_env.sh)", file=sys.stderr)
        return Exit.ENV
    perf_cases = [c for c in cases if c.is_perf]
    if not perf_cases:
        print("harness run: --timing-scope msprof: no perf row selected (exit 2)", file=sys.stderr)
        return Exit.INSUFFICIENT
    config = TimingConfig(scopes=("msprof",), warmup=args.warmup, min_samples=args.min_samples)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    out = Path(args.report_dir) / f"msprof-{stamp}"
    records = []
    try:
        for case in perf_cases:
            row = out / case.name
            row.mkdir(parents=True)
            application = shlex.join(nested_run(args, case, row))
            command = [msprof, f"--output={row / 'profile'}", f"--application={application}"]
            with (row / "msprof.log").open("w") as log:
                subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
            try:
                meta, nested, _ = stored.read_path(next((row / "run").glob("*/report.json")))
            except StopIteration:
                raise MsprofError(f"msprof: the nested run of {case.name} wrote no report (see {row / 'msprof.log'})")
            except stored.BadRun as exc:
                raise MsprofError(f"msprof: the nested run of {case.name}: {exc}")
            [rec] = [r for r in nested if r["case_name"] == case.name]
            records.append(judged(rec, case, config, baselines_for(case), meta["hardware"]["name"],
                                  row / "profile"))
            timing = records[-1].get("timing") or {}
            print(f"{case.name}: {records[-1]['verdict']}"
                  + (f", msprof {timing['mean_us']:.4g} us per call ({timing['n']} calls of "
                     f"{timing['kernels_per_call']} kernels)" if timing.get("scope") == "msprof" else "")
                  + "".join(f"; {b['kind']} {b['verdict']}" for b in records[-1].get("baseline") or []))
    except MsprofError as exc:
        print(str(exc), file=sys.stderr)
        return Exit.ENV
    (out / "msprof.json").write_text(dumps({"cases": records}, indent=1), encoding="utf-8")
    print(f"msprof rows: {out / 'msprof.json'}")
    if any(r["verdict"] != "PASS" or any(b["verdict"] == "FAIL" for b in r.get("baseline") or [])
           for r in records):
        return Exit.FAIL
    if not any(b["verdict"] not in ("NO_REF", None) for r in records for b in r.get("baseline") or []):
        return Exit.INSUFFICIENT
    return Exit.OK
