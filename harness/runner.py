"""Runs many cases in isolated worker processes, so one crashing or hanging operator costs one row, not the run.

Each worker opens the backend once and runs cases sent over a pipe. A worker that dies mid-case (segfault, abort)
yields CRASH for that row; one that exceeds the per-row limit is killed and yields TIMEOUT; either way a fresh
worker takes the next row. Precision rows run on `workers` processes in parallel; perf rows afterwards, alone, on one
worker, so timing never shares the machine with other rows. Every finished record goes to `on_record` at once.
"""
from __future__ import annotations

import faulthandler
import multiprocessing as mp
import signal
import time
from collections import deque
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Callable

from harness import ops
from harness.backends import BackendUnavailable, fence, open_backend
from harness.engine import DEFAULT_MEMORY_CAP, Case, run_case
from harness.record import Record



def _context(backend: str):
    """fork for the CPU twin (cheap, nothing device-side to inherit); spawn for device backends, whose runtimes
    (CUDA, ACL) cannot be used in a child forked after the parent initialised them."""
    return mp.get_context("fork" if backend == "cpu" else "spawn")


@dataclass
class Settings:
    backend: str = "cpu"
    backend_options: dict[str, Any] = field(default_factory=dict)
    workers: int = 1
    timeout_s: float = 600.0
    poison: bool = True
    memory_cap: int = DEFAULT_MEMORY_CAP
    timing: Any = None  # harness.timing.TimingConfig for perf rows; None skips timing
    baselines: Callable[[Case], list] | None = None
    hardware: str = ""  # what perf verdicts judge against baselines: the runtime's name, or --hardware


def _worker(conn: Connection, settings: Settings) -> None:
    """Worker loop: open the backend once, then run whatever case arrives until told to stop (None)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    faulthandler.disable()  # a crashing operator is reported as CRASH by the parent, not dumped by the child
    try:
        backend = open_backend(settings.backend, **settings.backend_options)
    except BackendUnavailable as exc:
        conn.send(("unavailable", str(exc)))
        return
    conn.send(("ready", None))
    while (case := conn.recv()) is not None:
        conn.send(("record", run_case(case, backend, use_poison=settings.poison, memory_cap=settings.memory_cap,
                                      timing_config=settings.timing, baselines=settings.baselines)))
    backend.close()


class _Slot:
    """One worker process and the case it is running (state: which case, since when)."""

    def __init__(self, settings: Settings):
        ctx = _context(settings.backend)
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, settings), daemon=True)
        self.proc.start()
        child.close()
        kind, message = self.conn.recv() if self.conn.poll(300) else ("unavailable", "worker did not start")
        if kind != "ready":
            self.stop()
            raise BackendUnavailable(message)
        self.case: Case | None = None
        self.since = 0.0

    def submit(self, case: Case) -> None:
        self.case, self.since = case, time.monotonic()
        self.conn.send(case)

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()

    def close(self) -> None:
        try:
            self.conn.send(None)
            self.proc.join(timeout=10)
        except (BrokenPipeError, OSError):
            pass
        self.stop()


def _died(case: Case, proc: mp.Process) -> Record:
    rec = case.new_record()
    code = proc.exitcode
    how = f"signal {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
    note = fence.fault_note(proc.pid)  # what the cpu backend's guard pages saw, naming the buffer
    rec.update(verdict="CRASH",
               reason=f"the operator killed its worker process ({how})" + (f": {note}" if note else ""))
    return rec


def _timed_out(case: Case, limit: float) -> Record:
    rec = case.new_record()
    rec.update(verdict="TIMEOUT", reason=f"no result within the per-row limit of {limit:g} s; worker killed",
               duration_s=limit)
    return rec


def _run_phase(cases: list[Case], settings: Settings, workers: int, on_record: Callable[[Record], None]) -> None:
    pending = deque(cases)
    slots = [_Slot(settings) for _ in range(min(workers, len(pending)))]
    try:
        while pending or any(s.case for s in slots):
            for slot in slots:
                if slot.case is None and pending:
                    slot.submit(pending.popleft())
            busy = [s for s in slots if s.case is not None]
            ready = wait([s.conn for s in busy], timeout=0.5)
            now = time.monotonic()
            for i, slot in enumerate(slots):
                if slot.case is None:
                    continue
                if slot.conn in ready:
                    try:
                        _, record = slot.conn.recv()
                    except (EOFError, OSError):
                        slot.proc.join(timeout=5)
                        on_record(_died(slot.case, slot.proc))
                        slot.stop()
                        slots[i] = _Slot(settings) if pending else _idle(slot)
                        continue
                    slot.case = None
                    on_record(record)
                elif now - slot.since > settings.timeout_s:
                    on_record(_timed_out(slot.case, settings.timeout_s))
                    slot.stop()
                    slots[i] = _Slot(settings) if pending else _idle(slot)
    finally:
        for slot in slots:
            if slot.proc.is_alive():
                slot.close()


def _idle(slot: _Slot) -> _Slot:
    """A stopped slot with nothing left to run: keep it in the list, marked free, so the loop can end."""
    slot.case = None
    return slot


def run(cases: list[Case], settings: Settings, on_record: Callable[[Record], None]) -> None:
    """Precision phase in parallel, then the perf phase serially; records are handed out as they finish."""
    precision = [c for c in cases if not c.is_perf]
    perf = [c for c in cases if c.is_perf]
    if precision:
        _run_phase(precision, settings, max(1, settings.workers), on_record)
    if perf:
        _run_perf(perf, settings, on_record)


def _run_perf(perf: list[Case], settings: Settings, on_record: Callable[[Record], None]) -> None:
    """Perf rows in up to `timing.rounds` rounds, each round a fresh worker process (like pyperf), rounds in table
    order so slow machine drift spreads over every row. A row stops early once it has spent its time budget
    (harness.timing.more_rounds: three rounds while a round fits the row's cap, one when a single round does
    not). Its record goes out after its last round, rounds merged and judged once
    (harness.perf.merge_round_records); a row that fails, crashes or is not timed leaves at once."""
    from harness.perf import merge_round_records
    from harness.timing import more_rounds

    config = settings.timing
    rounds = config.rounds if config is not None else 1
    per_round = replace(settings, timing=config.per_round()) if config is not None else settings
    by_id = {c.id: c for c in perf}
    taken: dict[str, list[Record]] = {c.id: [] for c in perf}

    def finish(key: str) -> None:
        on_record(merge_round_records(taken.pop(key), by_id[key], config, settings.baselines, settings.hardware))

    settling = False

    def collect(rec: Record) -> None:
        nonlocal settling
        if settling:  # the round's settling pass: its numbers belong to a process that had not run anything yet
            settling = False
            return
        key = f"{Path(rec['table']).name}::{rec['case_name']}"
        taken[key].append(rec)
        if not rec.get("timing") or rec["verdict"] != "PASS":  # a row checked wrong after timing ends here too
            finish(key)
    todo = list(perf)
    for r in range(rounds):
        if not todo:
            break
        # A fresh process's first row pays for page faults, thread start-up and caches (measured on the twin: the
        # first row of a round ran ~20 % slow); the round opens with the cheapest row once, untimed for the record.
        settle = min(todo, key=lambda c: (sum(rec.get("duration_s") or 0.0 for rec in taken[c.id]),
                                          ops.get(c.op).flops(c.args) if c.args is not None and ops.get(c.op) else 0))
        settling = True
        _run_phase([settle, *todo], per_round, 1, collect)
        for case in [c for c in todo if c.id in taken]:
            spent = sum(rec.get("duration_s") or 0.0 for rec in taken[case.id])
            if r == rounds - 1 or not more_rounds(len(taken[case.id]), spent, config):
                finish(case.id)
        todo = [c for c in todo if c.id in taken]


def check_backend(settings: Settings) -> dict[str, Any]:
    """Open and close the backend once in this process: fails fast (exit 3) and builds the twin before forking."""
    backend = open_backend(settings.backend, **settings.backend_options)
    try:
        return backend.describe()
    finally:
        backend.close()
