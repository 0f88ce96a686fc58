"""One case, end to end: CSV row -> Case -> buffers -> golden -> call -> checks -> (timing) -> result record.

Every step is a plain function so the CLI runner, the pytest plugin, `harness ab` and `harness baseline` all run
exactly the same code; isolation from crashing operators is the runner's job, not this module's.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np

from harness import abi, criteria, ops, perf
from harness.cases import CellReader, base_fields, op_for_table, read_table
from harness.layout import GUARD_BYTES, Buffer, changed_outside, poison, split_guards, with_guards
from harness.record import Record, new_record

#: Buffers larger than this in total are refused before anything is allocated.
DEFAULT_MEMORY_CAP = 8 << 30


@dataclass
class Case:
    """A parsed row. `errors` means the harness cannot run it as written (verdict ERROR); `skip` a reason not to."""

    table: str
    line: int
    name: str
    op: str | None
    description: str
    args: Any = None
    params: dict[str, Any] = field(default_factory=dict)
    expected_status: int = 0
    seed: int = 0
    thresholds: tuple[float, float] = (0.0, 0.0)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skip: str = ""

    @property
    def is_perf(self) -> bool:
        return self.name.startswith("TC_PF_")

    @property
    def id(self) -> str:
        return f"{Path(self.table).name}::{self.name}"

    def new_record(self) -> Record:
        """An empty result record for this row (verdict ERROR until something better is known)."""
        return new_record(self.name, self.op or "?", self.table, self.line, self.expected_status, self.is_perf,
                          self.params)


def load_table(path: str | Path) -> list[Case]:
    """Every row of one table as a Case; rows for operators this harness lacks become SKIP cases."""
    table = read_table(str(path))
    op = op_for_table(table)
    spec = ops.get(op)
    cases = []
    for row in table.rows:
        diags: list = []
        reader = CellReader(row, diags)
        base = base_fields(reader)
        case = Case(table=str(path), line=row.line, name=base.case_name, op=op, description=base.description,
                    expected_status=base.expect_result, seed=base.random_seed,
                    thresholds=(base.mere_threshold, base.mare_multiplier))
        if spec is None:
            case.skip = f"operator {op or '?'} is not implemented by this harness"
        else:
            case.args = spec.parse(reader, base.description)
            case.params = _plain(case.args)
        case.errors = [str(d) for d in diags if d.severity == "error"]
        case.warnings = [str(d) for d in diags if d.severity == "warning"]
        cases.append(case)
    for d in table.diagnostics:  # table-level errors (e.g. a duplicate case name) belong to the row they name
        if d.severity == "error":
            for case in cases:
                if case.line == d.line:
                    case.errors.append(str(d))
    return cases


def _plain(args: Any) -> dict[str, Any]:
    """JSON-friendly params: complex scalars as [re, im]."""
    out = {}
    for key, value in vars(args).items():
        out[key] = [value.real, value.imag] if isinstance(value, complex) else value
    return out


def load_cases(paths: list[str | Path], select: str | None = None) -> list[Case]:
    """All cases of the given tables, optionally filtered by a pytest-style keyword expression over case names."""
    cases = [c for p in paths for c in load_table(p)]
    return [c for c in cases if matches(select, c.name)] if select else cases


@lru_cache(maxsize=64)
def _compiled(expr: str):
    from _pytest.mark.expression import Expression

    return Expression.compile(expr)


def matches(expr: str | None, name: str) -> bool:
    """pytest `-k` semantics: substring (case-insensitive) identifiers combined with and/or/not."""
    if not expr:
        return True
    lowered = name.lower()
    return _compiled(expr).evaluate(lambda ident, **_: ident.lower() in lowered)


@dataclass
class PreparedCall:
    """Buffers planned, filled and uploaded; `call()` runs the operator once on them (used by timing, ab, baseline)."""

    case: Case
    backend: Any
    buffers: dict[str, Buffer]
    addrs: dict[str, int]
    uploaded: dict[str, np.ndarray]

    @property
    def ptrs(self) -> dict[str, int]:
        return {n: 0 if b.null else self.addrs[n] + GUARD_BYTES for n, b in self.buffers.items()}

    def call(self) -> int:
        spec = ops.get(self.case.op)
        handle = 0 if self.case.args.handle_null else self.backend.handle
        return spec.call(self.backend, self.case.args, self.ptrs, handle)

    def download(self) -> dict[str, np.ndarray]:
        return {n: self.backend.download(self.addrs[n], raw.size) for n, raw in self.uploaded.items()}

    def close(self) -> None:
        for addr in self.addrs.values():
            self.backend.free(addr)
        self.addrs.clear()


def plan(case: Case, use_poison: bool = True, memory_cap: int = DEFAULT_MEMORY_CAP) -> dict[str, Buffer]:
    """Host buffers for a case, with never-read regions poisoned; refuses oversized cases before allocating."""
    spec = ops.get(case.op)
    need = spec.bytes_needed(case.args)
    if need > memory_cap:
        raise MemoryError(f"buffers need {need / 2**30:.2f} GiB, over the {memory_cap / 2**30:.2f} GiB cap")
    bufs = spec.buffers(case.args, case.seed)
    if use_poison:
        for b in bufs.values():
            b.host = poison(b.host, b.never_read)
    return bufs


def prepare_call(case: Case, backend: Any, bufs: dict[str, Buffer] | None = None) -> PreparedCall:
    bufs = bufs if bufs is not None else plan(case)
    addrs, uploaded = {}, {}
    for name, b in bufs.items():
        raw = with_guards(b.host)
        addrs[name] = backend.alloc(raw.size)
        backend.upload(addrs[name], raw)
        uploaded[name] = raw
    return PreparedCall(case, backend, bufs, addrs, uploaded)


def region_problems(bufs: dict[str, Buffer], uploaded: dict[str, np.ndarray],
                    after: dict[str, np.ndarray]) -> list[str]:
    """Bytes the operator must not have touched: guards, inputs, and output elements outside the written region."""
    problems = []
    for name, b in bufs.items():
        front, data, back = split_guards(after[name], b.nbytes)
        ufront, udata, uback = split_guards(uploaded[name], b.nbytes)
        if not np.array_equal(front, ufront) or not np.array_equal(back, uback):
            where = "before" if not np.array_equal(front, ufront) else "after"
            problems.append(f"{name}: guard zone {where} the buffer overwritten (out-of-bounds write)")
        written = b.written if b.output else None
        bad = changed_outside(udata.view(b.host.dtype), data.view(b.host.dtype), written)
        if bad.size:
            what = "outside the written region (ld padding or batch gaps)" if b.output else "(input buffer)"
            problems.append(f"{name}: {bad.size} element(s) changed {what}, first at storage index {bad[0]}")
    return problems


def judge_output(case: Case, bufs: dict[str, Buffer], out_c: np.ndarray, expected: np.ndarray,
                 truth: np.ndarray) -> criteria.Judgement:
    spec = ops.get(case.op)
    mask = bufs["C"].written
    gate, options = spec.gate(case.args, case.thresholds)

    def scale() -> np.ndarray:  # G for the forward-error test, computed only if the judgement needs it
        with np.errstate(all="ignore"):
            return spec.error_scale(case.args, bufs)[mask]

    return criteria.judge(out_c[mask], expected[mask], truth[mask], gate, scale=scale, **options)


def run_case(case: Case, backend: Any, *, use_poison: bool = True, memory_cap: int = DEFAULT_MEMORY_CAP,
             timing_config: Any = None, baselines: Callable[[Case], list] | None = None) -> Record:
    """Run one case on an open backend and return its result record. Never raises for a case-level problem."""
    rec = case.new_record()
    started = time.perf_counter()
    try:
        _run_into(rec, case, backend, use_poison, memory_cap, timing_config, baselines)
    except MemoryError as exc:
        rec.update(verdict="ERROR", reason=f"refused before allocating: {exc}")
    except (ValueError, OverflowError) as exc:
        rec.update(verdict="ERROR", reason=f"case cannot be planned: {exc}")
    except Exception as exc:  # a harness bug must cost one row (ERROR), not the worker (which would read as CRASH)
        where = traceback.extract_tb(exc.__traceback__)[-1]
        rec.update(verdict="ERROR", reason=f"harness error: {type(exc).__name__}: {exc} "
                                           f"({Path(where.filename).name}:{where.lineno})")
    rec["duration_s"] = time.perf_counter() - started
    return rec


def _run_into(rec: Record, case: Case, backend: Any, use_poison: bool, memory_cap: int, timing_config: Any,
              baselines: Callable[[Case], list] | None) -> None:
    if case.skip:
        rec.update(verdict="SKIP", reason=case.skip)
        return
    if case.errors:
        rec.update(verdict="ERROR", reason="; ".join(case.errors))
        return
    if backend.api == "cublas" and case.expected_status != abi.Status.SUCCESS:
        rec.update(verdict="SKIP", reason="negative rows check aclblas status codes; not run on the cuda backend")
        return
    spec = ops.get(case.op)
    rec["flops"] = spec.flops(case.args)
    bufs = plan(case, use_poison, memory_cap)
    want_golden = case.expected_status == abi.Status.SUCCESS and not case.is_perf
    expected = truth = None
    if want_golden:
        with np.errstate(all="ignore"):  # Inf/NaN rows: non-finite arithmetic is the point, not a warning
            expected, truth = spec.golden_result(case.args, bufs)
    prepared = prepare_call(case, backend, bufs)
    try:
        backend.reset_peaks()
        status = prepared.call()
        backend.synchronize()
        rec["status"] = status
        expected_ws = spec.expected_workspace_bytes(case.args) if status == abi.Status.SUCCESS else 0
        rec["memory"] = perf.memory_verdict(expected_ws, backend.memory())  # a rejected call uses no workspace
        after = prepared.download()
        problems = region_problems(bufs, prepared.uploaded, after)
        if rec["memory"]["verdict"] == "FAIL":
            problems.append(rec["memory"]["reason"])
        if status != case.expected_status:
            rec.update(verdict="FAIL", reason=f"status {abi.status_name(status)}, expected "
                                              f"{abi.status_name(case.expected_status)}")
        elif problems:
            rec.update(verdict="FAIL", reason="; ".join(problems))
        elif want_golden:
            out_c = split_guards(after["C"], bufs["C"].nbytes)[1].view(bufs["C"].host.dtype)
            judgement = judge_output(case, bufs, out_c, expected, truth)
            rec["precision"] = judgement.to_dict()
            rec.update(verdict=judgement.verdict, reason=judgement.reason)
        else:
            rec.update(verdict="PASS", reason="status only" if case.is_perf else "status matches")
        if case.is_perf and timing_config is not None and rec["verdict"] == "PASS" \
                and status == abi.Status.SUCCESS:
            _time_into(rec, case, backend, prepared, timing_config, baselines)
    finally:
        prepared.close()


def _time_into(rec: Record, case: Case, backend: Any, prepared: PreparedCall, config: Any,
               baselines: Callable[[Case], list] | None) -> None:
    from harness import timing

    rec["timing"] = timing.measure(prepared.call, backend.timer, config)
    hardware = backend.describe().get("device", "")
    rec["baseline"] = perf.baseline_verdicts(rec["timing"], baselines(case) if baselines else [], hardware)

