"""One row judged on the trusted side (RowJudge): Case -> buffers -> golden -> the sandbox's messages about the call
-> checks -> (timing) -> result record; `run_case` joins it to a sandbox in one process.

The CLI runner, the pytest plugin, `harness ab` and `harness baseline` all judge rows with this same code; isolation
from crashing operators is the runner's job, not this module's.
"""
from __future__ import annotations

import mmap
import os
import time
import traceback
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import xxhash

from harness.model import abi, codec
from harness.model import operators as ops
from harness.model.case import Case
from harness.model.record import Record
from harness.model.settings import DEFAULT_MEMORY_CAP
from harness.perf import verdict as perf
from harness.run import memory as footprint
from harness.run.buffers import footprint_bytes, plan, region_problems
from harness.run.credibility import Account, credibility
from harness.run.goldens import KEPT_GOLDENS_BYTES, Golden, golden_bytes, golden_of
from harness.run.messages import Malformed, checked_timing, fields, strings
from harness.run.output_chunks import OutputChunks, Unwritten
from harness.run.sandbox import MOVED, BackendInfo, RowJob, Slot, digest, sample_digest, timed_parts
from harness.tables.layout import Buffer, guard_pattern, guard_zones

#: The judge reads the shared memory, and measures the cost of copying it (credibility), this many bytes at a time: a
#: whole copy of the largest row (768 MiB, beside the host data and the shared memory) was the main job judge's peak.
COPY_CHUNK_BYTES = 16 << 20


class RowJudge:
    """One row judged on the trusted side (state: the plan, the golden, the shared memory, the bytes checked so
    far). Created for a case and the sandbox's BackendInfo: either `done` is the record at once (SKIP, ERROR,
    refused) or `job` goes to the sandbox with `fd`, and on_called / on_timed / on_end turn its messages into the
    record. Every message is validated; a malformed one raises Malformed (the runner's CRASH)."""

    def __init__(self, case: Case, info: BackendInfo, *, use_poison: bool = True,
                 memory_cap: int = DEFAULT_MEMORY_CAP, timing_config: Any = None,
                 baselines: Callable[[Case], list] | None = None, golden: bool = True,
                 goldens: dict[str, Golden] | None = None, cache_goldens: bool = True):
        self.case, self.info, self.timing_config, self.baselines = case, info, timing_config, baselines
        self.goldens = goldens        # a perf row's golden kept between its rounds (same seed, same inputs)
        self.golden_s = 0.0           # the time this row spent computing its golden (0 when one was kept)
        self.golden_hit = False       # its golden came from the golden cache (golden_s: the time to read it)
        self.check_s = 0.0            # from planning to the first call judged: a row's work, timing aside
        self.rec = case.new_record()
        self.started = time.perf_counter()
        self.done: Record | None = None
        self.job: Any = None
        self.fd = -1
        self.view: mmap.mmap | None = None
        self.golden: Golden | None = None
        self.checked: list[str] = []  # per-buffer digests of the bytes last judged
        self.reference = ""           # the judge's digest of the checked call's bytes (sandbox.sample_digest)
        self.call_failures: list[tuple[str, int, int, str]] = []  # (phase, call, calls, why): failed "differs"
        self.differs_s = 0.0          # the judge's time answering "differs" (inside its clock's interval)
        self.clock_open: float | None = None  # the judge's clock as it let the samples begin ("sampling")
        self.costs = (0.0, 0.0)       # (digest, copy) seconds of all the row's bytes, measured by the judge
        self.stage = "job"            # the protocol: job -> called -> (timed, if told to time) -> end
        self.untimed = False          # told to time before the checked call failed its checks: timing dropped
        self._after: OutputChunks | None = None  # the checked call's outputs as begin_called read them
        self._outputs: list[tuple] = []  # (name, front guard, data bytes, dtype, Unwritten) per output
        self._read_back: tuple = ()   # begin_called's digests and problems seen reading, for end_called
        self._uploaded: dict[str, str] = {}  # each input's digest as it must stay (guards and data)
        self._let_go: list[str] = []  # buffers whose host data the judge let go once uploaded (_inputs plans them)
        self._replan = (use_poison, memory_cap)
        self.wants_golden = golden    # False: a caller that only times (harness ab) needs no golden
        self.cache_goldens = cache_goldens  # False where the operator runs in this process (run_case)
        try:
            self._prepare(use_poison, memory_cap)
        except MemoryError as exc:
            self._finish("ERROR", f"refused before allocating: {exc}")
        except (ValueError, OverflowError) as exc:
            self._finish("ERROR", f"case cannot be planned: {exc}")
        except Exception as exc:  # a harness bug must cost one row (ERROR), not the run
            self._finish("ERROR", _harness_error(exc))
        self.planned_s = time.perf_counter() - self.started

    def resume(self) -> None:
        """The row starts now, planned ahead (harness.run.runner plans a perf row while the one before it is timed):
        its duration counts the planning, not the wait."""
        self.started = time.perf_counter() - self.planned_s

    # -- planning -------------------------------------------------------------------------------------------------
    def _prepare(self, use_poison: bool, memory_cap: int) -> None:
        case, info, rec = self.case, self.info, self.rec
        if case.skip:
            return self._finish("SKIP", case.skip)
        if case.errors:
            return self._finish("ERROR", "; ".join(case.errors))
        if info.api == "cublas" and case.expected_status != abi.Status.SUCCESS:
            return self._finish("SKIP", "negative rows check aclblas status codes; not run on the cuda backend")
        spec = ops.get(case.op)
        if case.op in info.unsupported:
            return self._finish("SKIP", info.unsupported[case.op])
        if info.api not in spec.CALLS:
            return self._finish("SKIP", f"operator {spec.NAME} has no call on the {info.name} backend")
        rec["flops"] = spec.flops(case.args)
        want_golden = case.expected_status == abi.Status.SUCCESS
        overlap = spec.output_overlap(case.args) if want_golden else ""
        if overlap:
            return self._finish("ERROR", f"refused: output batches overlap ({overlap})")
        untouchable = False
        try:
            self.bufs = plan(case, use_poison, memory_cap, info.fenced)
        except MemoryError:
            if want_golden:
                raise
            # a row that expects a rejection: the operator must not touch its buffers, so they need not exist
            untouchable, self.bufs = True, {}
        if want_golden and self.wants_golden:
            self.golden = self._golden()
        self.scalar_bytes = {k: bytes(v).hex() for k, v in spec.scalars(case.args).items() if v is not None}
        # buffers no golden holds (a sampled golden holds its own) are let go once uploaded: an input's digest
        # suffices until a check finds it changed, an output's bytes outside its written region are kept (Unwritten)
        held = list(self.golden.bufs.values()) if self.golden is not None else []
        self._let_go = [n for n, b in self.bufs.items() if b.points_to is None and not any(b is g for g in held)]
        slots = self._layout(untouchable)
        timed = case.is_perf and self.timing_config is not None
        self.job = RowJob(case=case, slots=slots, size=self._size, timing=self.timing_config if timed else None,
                          accumulates=spec.accumulates(case.args), untouchable=untouchable)

    def _golden(self) -> Golden:
        """The row's golden: the one kept from an earlier round of the row when there is one (the buffers are
        planned from the same seed, so it is the same golden), else computed and kept."""
        kept = self.goldens.get(self.case.id) if self.goldens is not None else None
        if kept is not None:  # an unsampled golden judges the buffers of this round, which the plan just made
            return kept if kept.index is not None else replace(kept, bufs=self.bufs)
        start = time.perf_counter()
        with np.errstate(all="ignore"):  # Inf/NaN rows: non-finite arithmetic is the point, not a warning
            golden = golden_of(self.case, self.bufs, self.cache_goldens,
                               partial(plan, self.case, *self._replan, self.info.fenced))
        self.golden_s, self.golden_hit = time.perf_counter() - start, golden.cached
        # list(): one step under the GIL (the runner plans the next row in a thread while it frees others' goldens)
        if self.goldens is not None and golden_bytes(golden) + sum(map(golden_bytes, list(self.goldens.values()))) \
                <= KEPT_GOLDENS_BYTES:
            self.goldens[self.case.id] = golden if golden.index is not None else replace(golden, bufs={})
        return golden

    def _layout(self, untouchable: bool) -> tuple:
        """Each buffer's bytes (guards, data, guards) at a page-aligned offset of one shared memory file."""
        self.zones: dict[str, tuple[int, int]] = {}
        slots, offset = [], 0
        if untouchable:  # a NULLPTR fill stays NULL (the row may expect exactly that rejection)
            args = self.case.args
            self.slots = tuple(Slot(name, 0, 0, 0, 0, null=getattr(args, f"{name.lower()}_fill", "") == "NULLPTR")
                               for name in ops.get(self.case.op).buffer_bytes(args))
            self._size = mmap.PAGESIZE
            self._open_memory()
            return self.slots
        for name, b in self.bufs.items():
            front, back = self.zones[name] = guard_zones(b, self.info.fenced, self.info.granule)
            size = front + b.nbytes + back
            slots.append(Slot(name, offset, size, front, b.nbytes, b.null, b.output,
                              tuple(b.points_to) if b.points_to is not None else None))
            offset += -(-size // mmap.PAGESIZE) * mmap.PAGESIZE
        self._size = max(offset, mmap.PAGESIZE)
        self._open_memory()
        for s in slots:
            b = self.bufs[s.name]
            # guard, data, guard written in place: one copy of each buffer (with_guards().tobytes() made three)
            memory = np.frombuffer(self.view, np.uint8, s.size, s.offset)
            front, back = self.zones[s.name]
            memory[:front] = guard_pattern(front)
            # a pointer table's entries are the sandbox's own addresses: zeros until it fills them
            memory[front:front + b.nbytes] = b.host.view(np.uint8).ravel() if b.points_to is None else 0
            memory[front + b.nbytes:] = guard_pattern(back)
            if not b.output:
                self._uploaded[s.name] = digest([memoryview(memory)])
            else:
                self._outputs.append((s.name, front, b.nbytes, b.host.dtype, Unwritten(b)))
            if s.name in self._let_go:  # one buffer at a time: never the row's host data and its shared memory whole
                b.host = b.written = None  # type: ignore[assignment]  # _inputs() plans them again
            del memory  # no export of the mapping may outlive this (close() unmaps it)
        self.slots = tuple(slots)
        return self.slots

    def _open_memory(self) -> None:
        from harness.model.untrusted import sealed_memfd

        self.fd = sealed_memfd("harness-row", self._size)  # a worker's ftruncate cannot SIGBUS the judge
        self.view = mmap.mmap(self.fd, self._size)

    def _copy(self) -> dict[str, np.ndarray]:
        """The judge's own copy of every buffer as the sandbox left it (the sandbox may still write its mapping)."""
        return {s.name: np.frombuffer(self.view, np.uint8, s.size, s.offset).copy() for s in self.slots}

    def _read(self, judge_inputs: bool, accumulated: bool = False) -> tuple[OutputChunks | None, list[str], str,
                                                                            list[str]]:
        """The shared memory read once, a chunk at a time into the judge's own memory (the sandbox may still write
        it): (where `judge_inputs`, the outputs judged chunk by chunk, with the elements the golden judges; each
        buffer's digest (sandbox.digest); the digest of all of them in order, as sandbox.sample_digest of
        timed_parts(slots, accumulated); where `judge_inputs`, the inputs whose bytes are not those uploaded), every
        byte judged and digested from the same copy of it: the judge never holds a copy of the whole row."""
        outputs = OutputChunks(self._outputs, self.golden.index if self.golden else None, self.golden is not None) \
            if judge_inputs else None
        digests, changed, whole = [], [], xxhash.xxh3_128()  # each buffer's digest, inputs not as uploaded
        scratch = np.empty(min(COPY_CHUNK_BYTES, max((s.size for s in self.slots), default=0)), np.uint8)

        def chunks(s: Any, judged: OutputChunks | None) -> Iterator[np.ndarray]:
            for lo in range(0, s.size, COPY_CHUNK_BYTES):
                part = scratch[:min(COPY_CHUNK_BYTES, s.size - lo)]
                part[:] = np.frombuffer(self.view, np.uint8, part.size, s.offset + lo)
                if accumulated and s.output:  # timed_parts: C's data changes from call to call by design
                    whole.update(part[:max(0, s.front - lo)])
                    whole.update(part[max(0, s.front + s.nbytes - lo):])
                else:
                    whole.update(part)
                if judged is not None:
                    judged.feed(s.name, lo, part)
                yield part

        for s in self.slots:
            digests.append(digest(chunks(s, outputs if s.output else None)))
            if judge_inputs and not s.output and digests[-1] != self._uploaded[s.name]:
                changed.append(s.name)
        return outputs, digests, whole.hexdigest(), changed

    def _region_problems(self, after: OutputChunks, changed: list[str]) -> list[str]:
        """What region_problems says of every buffer of a read, in plan order: the outputs' from their chunks, the
        inputs' where their digest changed."""
        return [x for s in self.slots for x in (after.problems([s.name]) if s.output else
                                                self._input_problems([s.name]) if s.name in changed else [])]

    def _input_problems(self, changed: list[str]) -> list[str]:
        """What changed in the input buffers `_read` found changed, from a copy of each (it may have changed
        again: a buffer that now reads as uploaded changed while the judge read it)."""
        problems = []
        for s in (s for s in self.slots if s.name in changed):
            raw = {s.name: np.frombuffer(self.view, np.uint8, s.size, s.offset).copy()}
            problems += region_problems({s.name: self._inputs()[s.name]}, raw, self.zones) \
                or [f"{s.name}: changed while the judge read it"]
        return problems

    def _inputs(self) -> dict[str, Buffer]:
        """The row's buffers, each with its host data and masks: those the judge let go once uploaded (a row whose
        golden holds its own buffers, or none) planned again from the row's seed, for a check that needs them."""
        if self._let_go:
            fresh = plan(self.case, *self._replan, self.info.fenced)
            for name in self._let_go:
                self.bufs[name].host, self.bufs[name].written = fresh[name].host, fresh[name].written
            self._let_go = []
        return self.bufs

    # -- messages ------------------------------------------------------------------------------------------------
    def on_called(self, payload: Any) -> bool:
        """The first call's measurements, its buffers in the shared memory: judged here. Whether to time it."""
        self.begin_called(payload)
        return self.end_called()

    def begin_called(self, payload: Any) -> bool:
        """The first half of on_called: the message validated, the status and memory read, the buffers copied
        (from here on the sandbox may write them). Returns whether the row may be timed as far as that shows; the
        runner lets the sandbox time it while end_called judges the copy (the judge's work beside the timed
        calls, on its own cores). A row end_called then fails keeps its verdict, and its timing is dropped."""
        self._advance("job", "called")
        p = self._called = fields(payload, {"status": int, "growth": (int, type(None)), "memory": dict,
                                             "scalars": dict, "pointers": dict, "message": str, "fpenv": list,
                                             "digest": (str, type(None))})
        memory = fields(p["memory"], {"workspace_bytes": (int, type(None)), "peak_bytes": (int, type(None))})
        fp_changes = strings(p["fpenv"], "fpenv")
        case, rec, spec = self.case, self.rec, ops.get(self.case.op)
        status = rec["status"] = p["status"]
        if self.job.untouchable:
            problems = [f"the operator changed the floating-point environment: {'; '.join(fp_changes)}"] \
                if fp_changes else []
            self._verdict_for_status(status, p["message"], problems)
            self._after = None
            return False
        self._point_tables(p["pointers"])
        expected_ws = spec.expected_workspace_bytes(case.args) if status == abi.Status.SUCCESS else 0
        rec["memory"] = perf.memory_verdict(expected_ws, memory)  # a rejected call uses no workspace
        rec["memory"]["operator_growth_bytes"] = p["growth"]
        # the workspace the backend reports (an emulator's lives in the worker's host memory) is not a leak
        self._allowed = max(expected_ws or 0, memory["workspace_bytes"] or 0)
        self._after, digests, whole, changed = self._read(judge_inputs=True)
        moved = [] if p["digest"] in (None, whole) else [MOVED]  # where the judge reads the buffers themselves
        self._read_back = (digests, whole, self._input_problems(changed) + moved)
        go = self.job.timing is not None and status == abi.Status.SUCCESS == case.expected_status \
            and not fp_changes and rec["memory"]["verdict"] != "FAIL"
        self.stage = "timing" if go else "called"
        return go

    def end_called(self) -> bool:
        """The second half of on_called: the copy judged (untouched memory, scalars, leaks, precision). Whether
        the row is timed; False after begin_called said yes: the timed loop runs, and on_timed drops it."""
        after, self._after = self._after, None
        if after is None:  # untouchable: judged on its status alone
            return False
        p, rec = self._called, self.rec
        status, fp_changes = p["status"], p["fpenv"]
        digests, whole, input_problems = self._read_back
        problems = after.problems() + input_problems \
            + self._scalar_problems(p["scalars"]) + _leak(p["growth"], self._allowed, "the operator call")
        if fp_changes:
            problems.append(f"the operator changed the floating-point environment: {'; '.join(fp_changes)}")
        if rec["memory"]["verdict"] == "FAIL":
            problems.append(rec["memory"]["reason"])
        if self._verdict_for_status(status, p["message"], problems) and self.golden is not None:
            judgement = self.golden.judge_elements(after.judged)
            rec["precision"] = judgement.to_dict()
            rec.update(verdict=judgement.verdict, reason=judgement.reason)
        if self.golden is not None and self.golden.index is not None and rec["precision"] is not None:
            rec["precision"]["sampled"] = f"{self.golden.index.size} of {after.written} elements"
        self.checked = digests
        self.check_s = time.perf_counter() - self.started
        go = self.job.timing is not None and rec["verdict"] == "PASS" and status == abi.Status.SUCCESS
        self.untimed = self.stage == "timing" and not go
        if go:
            self.reference = whole
            self.costs = self._costs()
        return go

    def _costs(self) -> tuple[float, float]:
        """(digest, copy) seconds of all the row's bytes, as a sample costs the sandbox: its digest of every buffer
        whole (read in place: only the time counts), and a copy into fresh memory, a chunk at a time."""
        start = time.perf_counter()
        sample_digest(timed_parts(self.slots, False, lambda s: memoryview(self.view)[s.offset:s.offset + s.size]))
        hashed = time.perf_counter()
        for s in self.slots:
            for lo in range(0, s.size, COPY_CHUNK_BYTES):
                np.frombuffer(self.view, np.uint8, min(COPY_CHUNK_BYTES, s.size - lo), s.offset + lo).copy()
        return hashed - start, time.perf_counter() - hashed

    def _advance(self, expected: str, to: str) -> None:
        if self.stage != expected:
            raise Malformed(f"{to!r} while the row is at {self.stage!r}")
        self.stage = to

    def _verdict_for_status(self, status: int, message: str, problems: list[str]) -> bool:
        """Status and untouched-memory verdicts; True when the output is still to be judged."""
        case, rec = self.case, self.rec
        if status != case.expected_status:
            rec.update(verdict="FAIL", reason=f"status {abi.status_name(status)}, expected "
                                              f"{abi.status_name(case.expected_status)}"
                                              + (f": {message}" if message else ""))
        elif problems:
            rec.update(verdict="FAIL", reason="; ".join(problems))
        elif self.golden is None:
            rec.update(verdict="PASS", reason="status matches")
        else:
            return True
        return False

    def _point_tables(self, pointers: dict) -> None:
        """Pointer-array buffers hold the sandbox's device addresses: what they must still hold afterwards."""
        for name, b in self.bufs.items():
            if b.points_to is None:
                continue
            try:
                b.host = np.array([0 if t is None or self.bufs[t].null else int(pointers[t]) for t in b.points_to],
                                  dtype=np.uint64)
            except (KeyError, TypeError, ValueError, OverflowError) as exc:
                raise Malformed(f"pointers: {type(exc).__name__}") from None
            front, back = self.zones[name]
            self._uploaded[name] = digest([memoryview(guard_pattern(front)), memoryview(b.host.view(np.uint8)),
                                           memoryview(guard_pattern(back))])

    def _scalar_problems(self, scalars: dict) -> list[str]:
        return [f"{name}: the operator overwrote the const host scalar it was given by pointer"
                for name, value in self.scalar_bytes.items() if scalars.get(name) != value]

    def on_sampling(self, payload: Any) -> bool:
        """The warm-up is over and the samples begin once the judge answers: its clock opens here."""
        if self.stage != "timing" or self.clock_open is not None:
            raise Malformed(f"'sampling' while the row is at {self.stage!r}")
        fields(payload, {})
        self.clock_open = time.perf_counter()
        return True

    def on_differs(self, payload: Any) -> bool:
        """A call after the checked one left other bytes than any judged so far; they are in the shared memory,
        and the sandbox waits: judged like the checked call's (untouched bytes, then the golden: an operator whose
        results differ from call to call but are right passes). Whether they passed; a failure is kept for
        on_timed, named by the call."""
        if self.stage != "timing":
            raise Malformed(f"'differs' while the row is at {self.stage!r}")
        p = fields(payload, {"phase": str, "call": int, "calls": int, "digest": str, "whole": bool})
        if self.untimed:  # the checked call failed: the verdict stands, the timed calls are not judged
            return True
        start = time.perf_counter()
        after, _, claimed, changed = self._read(judge_inputs=True, accumulated=not p["whole"])
        problems = self._region_problems(after, changed)
        if not problems and p["whole"] and self.golden is not None:
            judgement = self.golden.judge_elements(after.judged)
            if not judgement.passed:
                problems.append(f"the output is wrong: {judgement.reason}")
        if claimed != p["digest"]:  # said after what the bytes the judge read were: both are the call's doing
            problems.append("the sandbox's digest of it does not match the bytes it put in the shared memory")
        if problems:
            self.call_failures.append((p["phase"][:20], p["call"], p["calls"], "; ".join(problems)))
        self.differs_s += time.perf_counter() - start
        return not problems

    def on_timed(self, payload: Any, account: Account | None = None) -> None:
        """The timed loop's figures, every call's account (statuses, digests) and the buffers after the last call:
        judged again, unless they are the very bytes the checked call left and end_called judged; then the
        figures are bounded by the judge's own clock and the kernel's `account` of the worker (credibility)."""
        received = time.perf_counter()
        self._advance("timing", "timed")
        p = fields(payload, {"timing": dict, "calls": dict, "recheck_status": (int, type(None)),
                              "fpenv": list, "growth": (int, type(None))})
        if self.untimed:  # timed before its checked call was judged, and that call failed: the verdict stands
            return
        if self.clock_open is None:
            raise Malformed("'timed' before 'sampling'")
        log = fields(p["calls"], {"reference": str, "last": str, "calls": dict, "statuses": list,
                                   "bad_statuses": int, "differed": int})
        rec, case = self.rec, self.case
        rec["timing"] = checked_timing(p["timing"])
        rec["memory"]["timed_growth_bytes"] = p["growth"]
        rec["baseline"] = perf.baseline_verdicts(rec["timing"], self.baselines(case) if self.baselines else [],
                                                 self.info.hardware)
        judged = self.checked  # the digests of the bytes end_called judged
        # one read of the buffers, chunk by chunk; byte for byte what end_called passed (both digests the judge's
        # own), its checks would say so again: only other bytes are judged
        after, self.checked, last, changed = self._read(judge_inputs=True)
        same = self.checked == judged
        calls = rec["timing"].get("n", 0) * rec["timing"].get("calls_per_sample", 1)
        totals = log["calls"]
        problems = self._status_problems(log) + [f"{_call_label(*failed[:3], totals)}: {failed[3]}"
                                                 for failed in self.call_failures]
        if p["recheck_status"] is not None and p["recheck_status"] != case.expected_status and not log["statuses"]:
            problems.append(f"re-check: status {abi.status_name(p['recheck_status'])}")
        if log["reference"] != self.reference:
            problems.append("the sandbox's digest of the checked call does not match the bytes the judge checked")
        if last != log["last"]:
            problems.append("the bytes after the last call are not those the sandbox's digest of it claims (a "
                            "forged digest, or a write after the call returned)")
        if not same:
            problems += self._region_problems(after, changed)
        problems += _leak(p["growth"], 0, f"{calls} timed calls")
        if p["fpenv"]:
            problems.append("a timed call changed the floating-point environment: "
                            + "; ".join(strings(p["fpenv"], "fpenv")))
        if self.golden is not None and not same:
            judgement = self.golden.judge_elements(after.judged)
            if not judgement.passed:
                problems.append(f"after the timed calls the output is wrong: {judgement.reason}")
        if problems:
            rec.update(verdict="FAIL", reason="during the timed calls: " + "; ".join(problems))
            return
        interval = received - self.clock_open - self.differs_s
        doubt = credibility(rec["timing"], interval, self.costs, self.job.accumulates, self.info.name == "cpu",
                             os.getloadavg()[0] / (os.cpu_count() or 1), account)
        if doubt:
            rec.update(verdict="FAIL", reason=f"timing not credible: {doubt}")

    def _status_problems(self, log: dict) -> list[str]:
        """Calls after the checked one that returned another status than it (the sandbox names a few, counts all)."""
        problems = []
        for named in log["statuses"][:NAMED_STATUSES]:
            one = fields(named, {"phase": str, "call": int, "status": int})
            problems.append(f"{_call_label(one['phase'][:20], one['call'], 1, log['calls'])}: status "
                            f"{abi.status_name(one['status'])}, the checked call's was "
                            f"{abi.status_name(self.rec['status'])}")
        if problems and log["bad_statuses"] > len(problems):
            problems.append(f"{log['bad_statuses']} calls in all returned another status")
        return problems

    def on_end(self, payload: Any) -> Record:
        """The end of the row: bytes that changed after the last check (late writes), what the operator left
        changed in its process (`leftovers`), the sandbox's peak memory."""
        if self.stage not in ("called", "timed"):
            raise Malformed(f"'end' while the row is at {self.stage!r}")
        self.stage = "end"
        p = fields(payload, {"late": list, "threads_left": int, "peak_growth": (int, type(None)),
                              "leftovers": list})
        late_digests = strings(p["late"], "late", limit=len(self.slots) or 1)
        leftovers = strings(p["leftovers"], "leftovers")
        if late_digests and self.checked and len(late_digests) == len(self.checked):
            late = [s.name for s, a, b in zip(self.slots, late_digests, self.checked) if a != b]
            if late and self.rec["verdict"] == "PASS":
                after = self._copy()
                where = region_problems({n: self._inputs()[n] for n in late}, {n: after[n] for n in late},
                                        self.zones)
                self.rec.update(verdict="FAIL", reason="; ".join([f"late write: {', '.join(late)} changed after the "
                                                                  "call returned (a thread left running?)", *where]))
        elif not self.job.untouchable and self.checked and not late_digests:
            raise Malformed("late: no digests")
        if leftovers:
            note = "the operator " + "; ".join(leftovers)
            if self.rec["verdict"] == "PASS":
                self.rec.update(verdict="FAIL", reason=note)
            else:
                self.rec["reason"] = f"{self.rec['reason']}; {note}" if self.rec["reason"] else note
        if self.rec["memory"] is not None:
            self.rec["memory"]["harness_estimate_bytes"] = footprint_bytes(self.case, self.info.fenced)
            self.rec["memory"]["harness_peak_bytes"] = p["peak_growth"]
        return self._finish()

    def ended_early(self, verdict: str, reason: str) -> Record:
        """The sandbox died or hung before the row ended: that is its verdict, unless its checked call had already
        failed (it was being timed while judged): that failure stays the verdict, and this is said after it."""
        if self.untimed:
            self.rec["reason"] += f"; then, in the timed calls: {verdict}: {reason}"
        else:
            self.rec.update(verdict=verdict, reason=reason)
        return self._finish()

    def _finish(self, verdict: str | None = None, reason: str = "") -> Record:
        if verdict is not None:
            self.rec.update(verdict=verdict, reason=reason)
        self.rec["duration_s"] = time.perf_counter() - self.started
        self.close()
        self.done = self.rec = _json_round_trip(self.rec)  # plain JSON data, as every record store expects
        return self.rec

    def close(self) -> None:
        if self.view is not None:
            self.view.close()
            self.view = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


#: The calls with another status a reason names (the rest are counted).
NAMED_STATUSES = 3
def _call_label(phase: str, call: int, calls: int, totals: dict) -> str:
    """E.g. "timed call 17 of 50": a call after the checked one, by its phase's count (the sandbox's `calls`)."""
    total = totals.get(phase)
    of = f" of {total}" if isinstance(total, int) and not isinstance(total, bool) else ""
    return (f"{phase} call {call}" if calls == 1 else f"{phase} calls {call}-{call + calls - 1}") + of


def _harness_error(exc: Exception) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1]
    return f"harness error: {type(exc).__name__}: {exc} ({Path(where.filename).name}:{where.lineno})"


def _leak(growth: int | None, allowed: int, what: str) -> list[str]:
    if growth is None or growth <= allowed + footprint.LEAK_BYTES:
        return []
    return [f"memory leak: {what} left the worker {growth / 2**20:.0f} MiB more resident memory (allowed: "
            f"{allowed / 2**20:.0f} MiB expected workspace + {footprint.LEAK_BYTES / 2**20:.0f} MiB)"]


def run_case(case: Case, backend: Any, *, use_poison: bool = True, memory_cap: int = DEFAULT_MEMORY_CAP,
             timing_config: Any = None, baselines: Callable[[Case], list] | None = None) -> Record:
    """One case on a backend open in this process: judge and sandbox in one process, for tests and tools that
    trust the library (`harness run` keeps them apart: harness.run.runner). Never raises for a case-level problem."""
    from harness.run import sandbox

    # the operator runs in this process: it must not reach the golden cache the judges of other runs trust
    judge = RowJudge(case, BackendInfo.of(backend), use_poison=use_poison, memory_cap=memory_cap,
                     timing_config=timing_config, baselines=baselines, cache_goldens=False)
    if judge.done is not None:
        return judge.done

    def exchange(kind: str, payload: dict) -> Any:
        answer = {"called": judge.on_called, "differs": judge.on_differs, "sampling": judge.on_sampling}
        return answer.get(kind, judge.on_timed)(payload)

    try:
        end = sandbox.execute(judge.job, backend, judge.view, lambda k, p: exchange(k, _json_round_trip(p)),
                              judge.fd)
        return judge.on_end({**end, "leftovers": []})
    except Exception as exc:  # noqa: BLE001 - in one process, a harness bug costs the row
        return judge.ended_early("ERROR", _harness_error(exc))


def prepare_call(case: Case, backend: Any) -> Any:
    """The row's buffers placed on a backend open in this process, planned by the judge without a golden (as
    `harness ab` plans them): a `sandbox.Prepared` whose `call()` runs the operator once, for benchmarks that
    time or digest bare calls. The caller closes it."""
    from harness.run import sandbox

    judge = RowJudge(case, BackendInfo.of(backend), golden=False)
    if judge.done is not None:
        raise ValueError(f"{case.name}: {judge.done['reason']}")
    prepared = sandbox.Prepared(judge.job, backend, judge.view, judge.fd)
    os.close(judge.fd)  # the mapping outlives its descriptor; it goes with the last view of it
    judge.fd = -1
    return prepared


def _json_round_trip(payload: dict) -> Any:
    """`payload` as JSON data (tuples become lists, sets sorted lists, numpy scalars numbers): what the judge
    receives from a worker, and what a record is when it leaves the judge."""
    return codec.loads(codec.message(payload))
