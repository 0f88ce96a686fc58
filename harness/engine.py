"""One case, end to end: CSV row -> Case -> buffers -> golden -> call -> checks -> (timing) -> result record.

Every step is a plain function so the CLI runner, the pytest plugin, `harness ab` and `harness baseline` all run
exactly the same code; isolation from crashing operators is the runner's job, not this module's.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np

from golden import sample
from harness import abi, criteria, footprint, ops, perf
from harness.cases import CellReader, base_fields, op_for_table, read_table
from harness.layout import (GUARD_BYTES, Buffer, changed_outside, guard_pattern, guard_zones, poison, split_guards,
                            with_guards)
from harness.record import Record, new_record

#: Rows whose estimated harness footprint (harness.footprint) exceeds this are refused before anything is allocated.
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


#: After a call that left threads running, the end-of-row check waits this long, so their late writes land first.
SETTLE_S = 0.05


@dataclass
class PreparedCall:
    """Buffers planned, filled and uploaded; `call()` runs the operator once on them (used by timing, ab, baseline).

    `zones` are each buffer's (front, back) guard bytes; `scalars` the host alpha/beta the call points to, with
    their bytes as created in `scalar_bytes`, so a write through the const pointers is caught."""

    case: Case
    backend: Any
    buffers: dict[str, Buffer]
    addrs: dict[str, int]
    zones: dict[str, tuple[int, int]]
    scalars: dict[str, Any] = field(default_factory=dict)
    scalar_bytes: dict[str, bytes] = field(default_factory=dict)

    @property
    def ptrs(self) -> dict[str, int]:
        return {n: 0 if b.null else self.addrs[n] + self.zones.get(n, (GUARD_BYTES, 0))[0]
                for n, b in self.buffers.items()}

    def call(self) -> int:
        handle = 0 if self.case.args.handle_null else self.backend.handle
        return ops.call(ops.get(self.case.op), self.backend, self.case.args, self.ptrs, handle, self.scalars)

    def download_one(self, name: str) -> np.ndarray:
        """A buffer's bytes, guard zones included."""
        front, back = self.zones[name]
        return self.backend.download(self.addrs[name], front + self.buffers[name].nbytes + back)

    def download(self) -> dict[str, np.ndarray]:
        return {name: self.download_one(name) for name in self.addrs}

    def restore_outputs(self) -> None:
        """Upload the outputs' original bytes again (C before a re-check call)."""
        for name in outputs(self.buffers):
            self.backend.upload(self.addrs[name], with_guards(self.buffers[name].host, self.zones[name]))

    def output(self, after: dict[str, np.ndarray]) -> np.ndarray:
        """The outputs' data (guards stripped) in plan order, as one array: what the golden is compared with."""
        parts = [split_guards(after[n], self.buffers[n].nbytes, self.zones[n][0])[1].view(self.buffers[n].host.dtype)
                 for n in outputs(self.buffers)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, np.float32)

    def problems(self, after: dict[str, np.ndarray]) -> list[str]:
        """Every byte the operator must not have changed (of the buffers in `after`), and the const scalars."""
        changed = [f"{name}: the operator overwrote the const host scalar it was given by pointer"
                   for name, value in self.scalars.items()
                   if value is not None and bytes(value) != self.scalar_bytes[name]]
        return region_problems({n: self.buffers[n] for n in after}, after, self.zones) + changed

    def close(self) -> None:
        for addr in self.addrs.values():
            self.backend.free(addr)
        self.addrs.clear()


def outputs(bufs: dict[str, Buffer]) -> list[str]:
    """Names of the buffers the operator writes (C, or C_0..C_{b-1} of a pointer-array operator), in plan order."""
    return [name for name, b in bufs.items() if b.output]


def written_mask(bufs: dict[str, Buffer]) -> np.ndarray:
    """The outputs' written masks, concatenated like PreparedCall.output."""
    masks = [bufs[n].written for n in outputs(bufs)]
    return masks[0] if len(masks) == 1 else np.concatenate(masks) if masks else np.zeros(0, bool)


def footprint_bytes(case: Case, fenced: bool = True) -> int:
    """The harness's estimated peak bytes for a case (buffers, copies, golden, truth, masks), before allocating;
    `fenced`: the backend has guard pages (small guard zones)."""
    spec = ops.get(case.op)
    sampled = case.is_perf and spec.flops(case.args) > sample.BUDGET_FLOPS
    return footprint.estimate(spec.buffer_bytes(case.args), sampled=sampled, device_zones=not fenced)


def plan(case: Case, use_poison: bool = True, memory_cap: int = DEFAULT_MEMORY_CAP,
         fenced: bool = True) -> dict[str, Buffer]:
    """Host buffers for a case, with never-read regions poisoned; refuses cases whose footprint would exceed the
    cap before allocating anything."""
    spec = ops.get(case.op)
    need = footprint_bytes(case, fenced)
    if need > memory_cap:
        raise MemoryError(f"the row needs an estimated {need / 2**30:.2f} GiB (buffers "
                          f"{spec.bytes_needed(case.args) / 2**30:.2f} GiB, plus copies, golden and truth), over "
                          f"the {memory_cap / 2**30:.2f} GiB cap")
    bufs = spec.buffers(case.args, case.seed)
    if use_poison:
        for b in bufs.values():
            b.host = poison(b.host, b.never_read)
    return bufs


def prepare_call(case: Case, backend: Any, bufs: dict[str, Buffer] | None = None) -> PreparedCall:
    bufs = bufs if bufs is not None else plan(case)
    fenced, granule = getattr(backend, "fenced", False), getattr(backend, "guard_granule", 1)
    addrs, zones = {}, {}
    # pointer arrays last: their entries are the device addresses of the matrices allocated before them
    for name, b in sorted(bufs.items(), key=lambda item: item[1].points_to is not None):
        zones[name] = guard_zones(b, fenced, granule)
        if b.points_to is not None:
            b.host = np.array([0 if t is None or bufs[t].null else addrs[t] + zones[t][0] for t in b.points_to],
                              dtype=np.uint64)
        raw = with_guards(b.host, zones[name])
        addrs[name] = backend.alloc(raw.size, name, (zones[name][0], b.nbytes))
        backend.upload(addrs[name], raw)
    scalars = ops.get(case.op).scalars(case.args)
    snapshot = {name: bytes(value) for name, value in scalars.items() if value is not None}
    return PreparedCall(case, backend, bufs, addrs, zones, scalars, snapshot)


def region_problems(bufs: dict[str, Buffer], after: dict[str, np.ndarray],
                    zones: dict[str, tuple[int, int]]) -> list[str]:
    """Bytes the operator must not have touched: guards, inputs, and output elements outside the written region
    (compared with what was uploaded: the guard pattern and each buffer's host data)."""
    problems = []
    for name, b in bufs.items():
        front, data, back = split_guards(after[name], b.nbytes, zones[name][0])
        for where, zone in (("before", front), ("after", back)):
            bad = np.flatnonzero(zone != guard_pattern(len(zone)))
            if bad.size:
                reach = len(zone) - bad[0] if where == "before" else bad[-1] + 1  # the farthest changed byte
                problems.append(f"{name}: guard zone {where} the buffer overwritten (out-of-bounds write, up to "
                                f"{reach} bytes {where} it)")
                break
        written = b.written if b.output else None
        bad = changed_outside(b.host, data.view(b.host.dtype), written)
        if bad.size:
            what = "outside the written region (ld padding or batch gaps)" if b.output else "(input buffer)"
            problems.append(f"{name}: {bad.size} element(s) changed {what}, first at storage index {bad[0]}")
    return problems


def judge_output(case: Case, bufs: dict[str, Buffer], out_c: np.ndarray, expected: np.ndarray,
                 truth: np.ndarray) -> criteria.Judgement:
    """The written region judged as one, or, for an operator whose package names `verify_parts` (the parts of its
    output ops-blas verifies one by one), each part on its own, the worst deciding."""
    spec = ops.get(case.op)
    gate, options = spec.gate(case.args, case.thresholds)
    parts = spec.verify_parts(case.args, bufs) if hasattr(spec, "verify_parts") else []
    if not parts:
        parts = [("", np.flatnonzero(written_mask(bufs)))]

    @lru_cache(maxsize=1)
    def scale_all() -> np.ndarray:  # G for the forward-error test, computed only if a judgement needs it
        with np.errstate(all="ignore"):
            return spec.error_scale(case.args, bufs)

    judged = [(label, criteria.judge(out_c[index], expected[index], truth[index], gate,
                                     scale=lambda index=index: scale_all()[index], **options))
              for label, index in parts]
    return judged[0][1] if len(judged) == 1 and not judged[0][0] else criteria.worst_part(judged)


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
    unsupported = ops.unsupported(spec, backend)
    if unsupported:
        rec.update(verdict="SKIP", reason=unsupported)
        return
    rec["flops"] = spec.flops(case.args)
    want_golden = case.expected_status == abi.Status.SUCCESS
    overlap = spec.output_overlap(case.args) if want_golden else ""
    if overlap:
        rec.update(verdict="ERROR", reason=f"refused: output batches overlap ({overlap})")
        return
    start_bytes = footprint.reset_peak()
    fenced = getattr(backend, "fenced", False)
    bufs = plan(case, use_poison, memory_cap, fenced)
    golden = None
    if want_golden:
        with np.errstate(all="ignore"):  # Inf/NaN rows: non-finite arithmetic is the point, not a warning
            golden = _golden(case, bufs)
    prepared = prepare_call(case, backend, bufs)
    try:
        backend.reset_peaks()
        threads_before = footprint.threads()
        status, growth = _measured_call(prepared)
        rec["status"] = status
        expected_ws = spec.expected_workspace_bytes(case.args) if status == abi.Status.SUCCESS else 0
        rec["memory"] = perf.memory_verdict(expected_ws, backend.memory())  # a rejected call uses no workspace
        rec["memory"]["operator_growth_bytes"] = growth
        after = prepared.download()
        problems = prepared.problems(after) + _leak(growth, expected_ws or 0, "the operator call")
        if rec["memory"]["verdict"] == "FAIL":
            problems.append(rec["memory"]["reason"])
        if status != case.expected_status:
            detail = backend.last_message() if hasattr(backend, "last_message") else ""
            rec.update(verdict="FAIL", reason=f"status {abi.status_name(status)}, expected "
                                              f"{abi.status_name(case.expected_status)}"
                                              + (f": {detail}" if detail else ""))
        elif problems:
            rec.update(verdict="FAIL", reason="; ".join(problems))
        elif want_golden:
            judgement = golden.judge(prepared.output(after))
            rec["precision"] = judgement.to_dict()
            rec.update(verdict=judgement.verdict, reason=judgement.reason)
        else:
            rec.update(verdict="PASS", reason="status matches")
        if golden is not None and golden.index is not None and rec["precision"] is not None:
            rec["precision"]["sampled"] = f"{golden.index.size} of {int(written_mask(bufs).sum())} elements"
        if case.is_perf and timing_config is not None and rec["verdict"] == "PASS" \
                and status == abi.Status.SUCCESS:
            after = None  # the re-check downloads its own copies; do not hold two sets at once
            _time_into(rec, case, backend, prepared, timing_config, baselines)
            after = _recheck_after_timing(rec, case, prepared, golden)
        late = _late_problems(prepared, after, threads_before)
        if late and rec["verdict"] == "PASS":
            rec.update(verdict="FAIL", reason="; ".join(late))
    finally:
        prepared.close()
        _note_footprint(rec, case, start_bytes, fenced)


@dataclass
class Golden:
    """What a row's output is judged against: the case and buffers the golden was computed for (for a large perf
    row, a smaller problem on a sample of C: golden.sample), expected and truth over that problem's C, and the
    storage index in the full C of each of its elements (None: the whole C)."""

    case: Case
    bufs: dict[str, Buffer]
    expected: np.ndarray
    truth: np.ndarray
    index: np.ndarray | None = None

    def judge(self, out_c: np.ndarray) -> criteria.Judgement:
        """The operator's full C judged with the ordinary criteria (judge_output) on this golden's elements."""
        out = out_c if self.index is None else out_c[self.index]
        return judge_output(self.case, self.bufs, out, self.expected, self.truth)


def _golden(case: Case, bufs: dict[str, Buffer]) -> Golden:
    spec = ops.get(case.op)
    sampled = spec.sample_problem(case.args, bufs, sample.BUDGET_FLOPS, case.seed) if case.is_perf else None
    if sampled is None:
        return Golden(case, bufs, *spec.golden_result(case.args, bufs))
    args, sub, index = sampled
    return Golden(replace(case, args=args), sub, *spec.golden_result(args, sub), index)


def _measured_call(prepared: PreparedCall) -> tuple[int, int | None]:
    """(status, resident bytes the call left behind) of one synchronised call."""
    before = footprint.resident()
    status = prepared.call()
    prepared.backend.synchronize()
    after = footprint.resident()
    return status, None if before is None or after is None else after - before


def _leak(growth: int | None, allowed: int, what: str) -> list[str]:
    if growth is None or growth <= allowed + footprint.LEAK_BYTES:
        return []
    return [f"memory leak: {what} left the worker {growth / 2**20:.0f} MiB more resident memory (allowed: "
            f"{allowed / 2**20:.0f} MiB expected workspace + {footprint.LEAK_BYTES / 2**20:.0f} MiB)"]


def _recheck_after_timing(rec: Record, case: Case, prepared: PreparedCall,
                          golden: Golden | None) -> dict[str, np.ndarray]:
    """A perf row after its timed loop: nothing out of bounds, inputs and scalars intact, and the output judged
    like the first call's: the last timed call's own output where a call does not read C (beta == 0), else one
    more call on the original C. Returns the buffers as last checked."""
    after = prepared.download()
    calls = (rec["timing"] or {}).get("n", 0) * (rec["timing"] or {}).get("calls_per_sample", 1)
    problems = prepared.problems(after) + _leak(rec["memory"].get("timed_growth_bytes"), 0, f"{calls} timed calls")
    if problems:
        rec.update(verdict="FAIL", reason="during the timed calls: " + "; ".join(problems))
        return after
    if ops.get(case.op).accumulates(case.args):
        del after
        prepared.restore_outputs()
        status = prepared.call()
        prepared.backend.synchronize()
        after = prepared.download()
        problems = prepared.problems(after)
        if status != case.expected_status:
            problems.insert(0, f"status {abi.status_name(status)}")
        if problems:
            rec.update(verdict="FAIL", reason="after the timed calls: " + "; ".join(problems))
            return after
    if golden is not None:
        judgement = golden.judge(prepared.output(after))
        if not judgement.passed:
            rec.update(verdict="FAIL", reason=f"after the timed calls the output is wrong: {judgement.reason}")
    return after


def _late_problems(prepared: PreparedCall, checked: dict[str, np.ndarray], threads_before: int) -> list[str]:
    """The end-of-row check: bytes that changed since the last check (a thread the operator left running). When
    the operator returned with more threads than it was called with, wait SETTLE_S first."""
    prepared.backend.synchronize()  # device work still queued is not late; work outside the stream is
    if footprint.threads() > threads_before:
        time.sleep(SETTLE_S)
    late, problems = [], []
    for name in checked:  # one buffer at a time: a large row's copies are what sets the harness's peak memory
        now = prepared.download_one(name)
        if not np.array_equal(checked[name], now):
            late.append(name)
            problems += region_problems({name: prepared.buffers[name]}, {name: now}, prepared.zones)
    if not late:
        return []
    return [f"late write: {', '.join(late)} changed after the call returned (a thread left running?)", *problems]


def _note_footprint(rec: Record, case: Case, start_bytes: int | None, fenced: bool) -> None:
    """The row's estimate and measured peak beside the operator's memory (peak: VmHWM growth over the row)."""
    if rec["memory"] is None:
        return
    peak = footprint.peak()
    rec["memory"]["harness_estimate_bytes"] = footprint_bytes(case, fenced)
    rec["memory"]["harness_peak_bytes"] = None if peak is None or start_bytes is None else peak - start_bytes


def _time_into(rec: Record, case: Case, backend: Any, prepared: PreparedCall, config: Any,
               baselines: Callable[[Case], list] | None) -> None:
    from harness import timing

    before = footprint.resident()
    rec["timing"] = timing.measure_scopes(prepared.call, backend, config)
    after = footprint.resident()
    rec["memory"]["timed_growth_bytes"] = None if before is None or after is None else after - before
    info = backend.describe()
    hardware = info.get("hardware") or info.get("device", "")
    rec["baseline"] = perf.baseline_verdicts(rec["timing"], baselines(case) if baselines else [], hardware)

