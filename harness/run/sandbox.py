"""The operator's side of a row: all that runs in the process that loads the operator library.

The judge (harness/run/row_judge.py, in a process that never loads operator code) plans the row's buffers and writes them,
guards included, into shared memory it created (a `RowJob` says where each buffer lies, each at a page-aligned
offset). On `cpu` the sandbox maps each buffer's pages of that shared memory between guard pages, so the operator
works on the judge's bytes in place; elsewhere it copies them into device memory and, after the call, back into
the shared memory. It calls the operator and answers with a small fixed message of measurements (status, memory, the
const scalars' bytes, the floating-point environment). It never judges: whatever the operator does to this process,
the golden, the checks and the verdict are computed elsewhere from the judge's own copies.

Perf rows are timed here (the call must run where it is timed). Every later call is accounted for (_CallLog): its
status, and a digest of every buffer after it, warm-up calls and the re-check included; bytes other than the
checked call's go to the judge at once, in the shared memory, to be judged like the checked call's ("differs"). A
C the call reads (beta != 0) is put back before each call, outside the timed region, so each call's output is
the checked one's again. The judge's clock brackets the samples ("sampling" ... "timed").
"""
from __future__ import annotations

import ctypes
import hashlib
import mmap
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import xxhash

from harness.run import memory as footprint
from harness.run import fpenv
from harness.model import operators as ops

#: After a call that left threads running, the end-of-row digest waits for them to end, in steps of SETTLE_S, up to
#: SETTLE_MAX_S (a thread pool of the library's own never ends: then the digest is taken after SETTLE_MAX_S).
SETTLE_S = 0.05
SETTLE_MAX_S = 0.5
#: The bytes of one "untouchable" buffer: rows expected to be rejected whose real buffers would not fit get
#: pointers into this much inaccessible memory each (any access is a SIGSEGV: CRASH).
UNTOUCHABLE_BYTES = 1 << 16
DIGEST_BYTES = 16
#: The checked call's buffers, read by the judge where the sandbox's buffers are the shared memory, are not those the
#: sandbox digested as the call returned ("called"'s digest): a thread wrote them after the call returned.
MOVED = ("the buffers changed after the call returned (a thread left running?): the sandbox's digest of them as "
         "the call returned does not match the bytes the judge read")
#: The sandbox's messages the judge answers before the sandbox goes on: "called" (whether to time the row),
#: "differs" (whether the bytes a call left passed) and "sampling" (the judge's clock has opened).
ANSWERED = ("called", "differs", "sampling")


@dataclass(frozen=True)
class Slot:
    """One buffer in the row's shared memory: `size` bytes at `offset`, data `nbytes` after `front` guard bytes."""

    name: str
    offset: int
    size: int
    front: int
    nbytes: int
    null: bool = False
    output: bool = False
    points_to: tuple[str | None, ...] | None = None


@dataclass(frozen=True)
class RowJob:
    """What the judge sends for one row (pickled: it comes from the trusted side)."""

    case: Any
    slots: tuple[Slot, ...]
    size: int
    timing: Any = None          # harness.model.settings.TimingConfig when the row is to be timed after a passing first call
    accumulates: bool = False   # the call reads C (beta != 0): the timed loop's C is not the checked one
    untouchable: bool = False   # the buffers are inaccessible memory: the row must be rejected before any access


@dataclass(frozen=True)
class BackendInfo:
    """What the judge knows of the sandbox's backend (its "ready" message, validated): how buffers are guarded,
    which API it calls, and why an operator cannot run there (e.g. the library lacks its symbol)."""

    name: str = "cpu"
    api: str = "aclblas"
    fenced: bool = False
    granule: int = 1
    hardware: str = ""
    unsupported: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def of(backend: Any) -> "BackendInfo":
        """The description of an open backend (in the process that opened it)."""
        info = backend.describe()
        return BackendInfo(name=backend.name, api=backend.api, fenced=bool(getattr(backend, "fenced", False)),
                           granule=int(getattr(backend, "guard_granule", 1)),
                           hardware=str(info.get("hardware") or info.get("device", "")),
                           unsupported={op: why for op in ops.names() if (why := ops.unsupported(ops.get(op),
                                                                                                  backend))})


def digest(parts: list[memoryview | bytes]) -> str:
    """The bytes of `parts`, in order, as one digest. SHA-256 (hardware-accelerated where the CPU has SHA
    extensions: 1.4x blake2b's speed here, and every byte of every buffer is hashed several times a row)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part)
    return h.hexdigest()[:2 * DIGEST_BYTES]


def sample_digest(parts: list[memoryview]) -> str:
    """What a call left (timed_parts), as the sandbox reports it after every sample: XXH3-128 of the parts
    in order. Not SHA-256: it runs on the timed core between samples, where SHA-256 (1.8 GB/s here, XXH3 38 GB/s)
    took 41 s of the main job's 62 s of timed samples; and it is the sandbox's claim, which a hostile library in
    the same process could forge whatever the hash. The judge's own digests (`digest`), which decide whether bytes
    it has judged are judged again, stay SHA-256."""
    h = xxhash.xxh3_128()
    for part in parts:
        h.update(part)
    return h.hexdigest()


def timed_parts(slots: tuple[Slot, ...], accumulated: bool, raw: Callable[[Slot], memoryview]) -> list[memoryview]:
    """The bytes a call must leave as the judge expects them: every buffer whole, except after several calls that
    `accumulated` into C (a steady-scope sample, beta != 0), where C's data changes from call to call by design and
    only the bytes around it are compared."""
    parts = []
    for s in slots:
        view = raw(s)
        if s.output and accumulated:
            parts += [view[:s.front], view[s.front + s.nbytes:]]
        else:
            parts.append(view)
    return parts


class Prepared:
    """The row's buffers in backend memory (state: their addresses); `call()` runs the operator once on them.
    Given the shared memory's descriptor `fd`, a backend that `maps_shared_memory` (cpu) gets the shared memory's
    own pages as its buffers: nothing is copied in or out, and the worker holds no second copy of the row."""

    def __init__(self, job: RowJob, backend: Any, view: memoryview, fd: int | None = None):
        self.job, self.backend, self.view = job, backend, memoryview(view)
        self.shared = fd is not None and fd >= 0 and bool(getattr(backend, "maps_shared_memory", False))
        self._fd = fd
        self.addrs: dict[str, int] = {}
        self._untouchable = (0, 0)
        self.pristine: dict[str, bytes] = {}
        try:
            self._place()
        except BaseException:
            self.close()  # the shared memory must not stay exported by a half-made row
            raise

    def _place(self) -> None:
        job, backend = self.job, self.backend
        self.spec = ops.get(job.case.op)
        self.scalars = self.spec.scalars(job.case.args)
        by_name = {s.name: s for s in job.slots}
        if job.untouchable:
            size = UNTOUCHABLE_BYTES * max(1, len(job.slots))
            base = _inaccessible(size)
            self._untouchable = (base, size)
            self.ptrs = {s.name: 0 if s.null else base + i * UNTOUCHABLE_BYTES for i, s in enumerate(job.slots)}
            return
        # pointer arrays last: their entries are the device addresses of the matrices allocated before them
        for s in sorted(job.slots, key=lambda s: s.points_to is not None):
            if s.points_to is not None:
                table = np.array([0 if t is None or by_name[t].null else self.addrs[t] + by_name[t].front
                                  for t in s.points_to], dtype=np.uint64)
                self.raw(s)[s.front:s.front + s.nbytes] = table.view(np.uint8).tobytes()
            if self.shared:
                self.addrs[s.name] = backend.map_shared(self._fd, s.offset, s.size, s.name, (s.front, s.nbytes))
                continue
            self.addrs[s.name] = backend.alloc(s.size, s.name, (s.front, s.nbytes))
            backend.upload(self.addrs[s.name], np.frombuffer(self.view, np.uint8, s.size, s.offset))
        self.ptrs = {s.name: 0 if s.null else self.addrs[s.name] + s.front for s in job.slots}
        # C as uploaded, for the timed loop to put back (a private copy of it: only where the row is to be timed)
        self.pristine = {s.name: bytes(self.raw(s)) for s in job.slots
                         if s.output and job.accumulates and job.timing is not None}

    def raw(self, slot: Slot) -> memoryview:
        return self.view[slot.offset:slot.offset + slot.size]

    def call(self) -> int:
        handle = 0 if self.job.case.args.handle_null else self.backend.handle
        return ops.call(self.spec, self.backend, self.job.case.args, self.ptrs, handle, self.scalars)

    def device_bytes(self, slot: Slot) -> memoryview:
        """A buffer's bytes as the operator left them: read in place in host memory (a backend that
        `maps_shared_memory` has its buffers there), downloaded elsewhere."""
        addr = self.addrs[slot.name]
        if getattr(self.backend, "maps_shared_memory", False):
            return memoryview((ctypes.c_char * slot.size).from_address(addr)).cast("B")
        return memoryview(self.backend.download(addr, slot.size))

    def download(self) -> None:
        """Every buffer back into the shared memory, where the judge copies it (nothing to do where the buffers
        are the shared memory)."""
        if self.shared:
            return
        for s in self.job.slots:
            if s.name in self.addrs:
                self.raw(s)[:] = self.device_bytes(s)

    def restore_outputs(self) -> None:
        for name, data in self.pristine.items():
            self.backend.upload(self.addrs[name], np.frombuffer(data, np.uint8))

    def timed_digest(self, whole: bool = True) -> str:
        """What a call left, as sample_digest; not `whole`: C's data left out (calls that accumulated into C)."""
        return sample_digest(timed_parts(self.job.slots, not whole, self.device_bytes))

    def close(self) -> None:
        for addr in self.addrs.values():
            self.backend.free(addr)
        self.addrs.clear()
        self.view.release()
        base, size = self._untouchable
        if base:
            _LIBC.munmap(ctypes.c_void_p(base), ctypes.c_size_t(size))
            self._untouchable = (0, 0)


_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mmap.restype = ctypes.c_void_p
_LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def _inaccessible(size: int) -> int:
    """The address of `size` bytes of PROT_NONE memory (Python's mmap cannot give the address of what it may not
    read)."""
    addr = _LIBC.mmap(None, size, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)  # PROT_NONE
    if addr in (None, ctypes.c_void_p(-1).value):
        raise MemoryError("cannot map inaccessible memory for a rejected row")
    return int(addr)


def execute(job: RowJob, backend: Any, view: memoryview, exchange: Callable[[str, dict], Any],
            fd: int | None = None) -> dict:
    """Run one row: the first call ("called"), then, if the judge says so, the timed loop ("timed"). Returns the
    end-of-row measurements (late-write digests, threads still running, peak memory) for the "end" message.
    `fd`: the descriptor of the shared memory `view` maps (see Prepared)."""
    start_peak = footprint.reset_peak()
    prepared = Prepared(job, backend, view, fd)
    try:
        backend.reset_peaks()
        threads_before = footprint.threads()
        env_before = fpenv.read()
        before = footprint.resident()
        called = time.perf_counter()
        status = prepared.call()
        backend.synchronize()
        called = time.perf_counter() - called
        after = footprint.resident()
        changed_env = fpenv.changes(env_before)
        prepared.download()
        message = backend.last_message() if hasattr(backend, "last_message") else ""
        go = exchange("called", {
            "status": int(status),
            "growth": None if before is None or after is None else after - before,
            "memory": backend.memory(),
            "scalars": {k: bytes(v).hex() for k, v in prepared.scalars.items() if v is not None},
            "pointers": {k: int(v) for k, v in prepared.ptrs.items()},
            "message": str(message)[:500],
            "fpenv": changed_env,
            # the buffers as the call left them, where they are the shared memory the judge reads later
            "digest": prepared.timed_digest() if prepared.shared and not job.untouchable else None,
        })
        if go and job.timing is not None and not job.untouchable:
            _timed(job, backend, prepared, exchange, warmed_s=called, checked=int(status))
        backend.synchronize()  # device work still queued is not late; work outside the stream is
        settle_until = time.monotonic() + SETTLE_MAX_S
        while footprint.threads() > threads_before and time.monotonic() < settle_until:
            time.sleep(SETTLE_S)  # threads the call left: give their late writes time to land before the digest
        threads_left = max(0, footprint.threads() - threads_before)
        prepared.download()  # the bytes as the row ends: the judge compares their digests with what it checked
        late = [digest([prepared.raw(s)]) for s in job.slots if s.name in prepared.addrs]
    finally:
        prepared.close()
    peak = footprint.peak()
    return {"late": late, "threads_left": threads_left,
            "peak_growth": None if peak is None or start_peak is None else peak - start_peak}


#: The calls whose status differed from the checked call's that a "timed" message names (the rest are counted).
NAMED_CALLS = 8


class _CallLog:
    """Every call after the checked one, accounted for (state: calls per phase, statuses that differed, digests
    already judged). After each sample: its calls' statuses compared with the checked call's, and a digest of
    every buffer; a digest not seen before means other bytes than any the judge has judged, so they are put in the
    shared memory and the judge judges them before the next call ("differs": the judge says whether they passed;
    after a failure the rest are only counted). Samples of several calls on a row whose C is read (steady scope,
    beta != 0) accumulate into C within the timed region: their digest leaves C's data out."""

    def __init__(self, job: RowJob, prepared: Prepared, exchange: Callable[[str, dict], Any], checked: int):
        self.job, self.prepared, self.exchange, self.checked = job, prepared, exchange, checked
        self.reference = prepared.timed_digest()  # the checked call's bytes, still in backend memory
        self.known = {self.reference, prepared.timed_digest(whole=False)}
        self.calls: dict[str, int] = {}
        self.statuses: list[dict] = []
        self.bad_statuses = 0
        self.differed = 0
        self.failed = False
        self.last = self.reference

    def after(self, phase: str, statuses: list) -> None:
        first = self.calls.get(phase, 0) + 1
        self.calls[phase] = first - 1 + len(statuses)
        for i, status in enumerate(statuses):
            if int(status) != self.checked:
                self.bad_statuses += 1
                if len(self.statuses) < NAMED_CALLS:
                    self.statuses.append({"phase": phase, "call": first + i, "status": int(status)})
        whole = len(statuses) == 1 or not self.job.accumulates
        self.last = digest = self.prepared.timed_digest(whole)
        if digest in self.known:
            return
        self.known.add(digest)
        self.differed += 1
        if not self.failed:
            self.prepared.download()
            self.failed = not self.exchange("differs", {"phase": phase, "call": first, "calls": len(statuses),
                                                        "digest": digest, "whole": whole})

    def summary(self) -> dict:
        return {"reference": self.reference, "last": self.last, "calls": self.calls, "statuses": self.statuses,
                "bad_statuses": self.bad_statuses, "differed": self.differed}


def _timed(job: RowJob, backend: Any, prepared: Prepared, exchange: Callable[[str, dict], Any],
           warmed_s: float = 0.0, checked: int = 0) -> None:
    """The timed loop on the checked call's buffers; `warmed_s`, that call's seconds, count towards the warm-up;
    `checked`: that call's status, which every later call must return too."""
    from harness.perf import stats, timing  # noqa: F401 - stats (scipy) before `before`: its import is not a leak

    log = _CallLog(job, prepared, exchange, checked)
    env_before = fpenv.read()
    env_changes: list[str] = []

    def after_sample(phase: str, statuses: list) -> None:
        log.after(phase, statuses)
        if not env_changes:
            env_changes.extend(fpenv.changes(env_before))

    before = footprint.resident()
    restore = prepared.restore_outputs if job.accumulates else None
    record = timing.measure_scopes(prepared.call, backend, job.timing, after_sample=after_sample, warmed_s=warmed_s,
                                   before_sample=restore, on_sampling=lambda: exchange("sampling", {}))
    after = footprint.resident()
    recheck = None
    if job.accumulates:  # the re-check: C put back once more, one more call, judged like any other
        prepared.restore_outputs()
        recheck = int(prepared.call())
        backend.synchronize()
        log.after("re-check", [recheck])
    prepared.download()
    exchange("timed", {"timing": record, "calls": log.summary(), "recheck_status": recheck, "fpenv": env_changes,
                       "growth": None if before is None or after is None else after - before})
