"""The precision rows beside the perf phase: a second judge process, forked from this one and pinned to the cores
the timed worker does not use, shares the precision rows with this one (one from each end)."""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import time
import traceback
from collections import deque
from dataclasses import replace
from multiprocessing.connection import wait
from typing import Any, Callable, NoReturn

from harness.model import codec
from harness.run import proctree
from harness.model.case import Case
from harness.run.phase import run_phase
from harness.run.process import KEEP, LIVE, Interrupted, StopSignals, fork
from harness.run.rounds import run_perf
from harness.model.settings import Settings
from harness.store import job
from harness.model.record import Record


def beside_allowed(settings: Settings, devices: list[int]) -> bool:
    """Whether the precision rows may run beside the perf phase: on the cpu backend, where a "device" is emulated
    in the worker's host threads and what timing must not share is a core, not a device, so a timed worker pinned
    to cores of its own shares nothing with the precision rows on the others (docs/architecture.md, "Where a run's
    work goes"); with workers >= 2 (the run may use more than one core) on one device, and at least two cores to
    split."""
    return (settings.backend == "cpu" and len(devices) == 1 and settings.workers >= 2 and settings.timing is not None
            and getattr(settings, "service", None) is None and len(os.sched_getaffinity(0)) >= 2)


def run_beside(precision: list[Case], perf: list[Case], settings: Settings, device: int,
                on_record: Callable[[Record], None], stop: StopSignals, on_start: Callable[[Case], None],
                tally: dict) -> None:
    """The precision rows in a judge process beside this one (Beside) on the first half of the cores, while this
    one runs the perf phase with its timed workers pinned to the other half; once the perf phase ends, this
    process takes precision rows too (from the back of the list, the other judge from the front), and at the end
    runs any row the other judge took and did not report (it died)."""
    cpus = sorted(os.sched_getaffinity(0))
    judge_cpus, timed_cpus = set(cpus[:len(cpus) // 2]), set(cpus[len(cpus) // 2:])
    bounds = mp.get_context("fork").Array("q", [0, len(precision)])
    start = last = time.monotonic()

    def precision_record(rec: Record) -> None:  # the precision phase ends with its last record
        nonlocal last
        last = time.monotonic()
        on_record(rec)

    beside = Beside(Claims(precision, bounds, front=True), replace(settings, workers=1), device, judge_cpus, stop,
                     precision_record)
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, judge_cpus)  # this judge too: only the timed worker runs on the timed cores
    try:
        with job.phase(tally, "perf"):
            run_perf(perf, settings, [device], on_record, stop, on_start, tally, beside, timed_cpus)
        os.sched_setaffinity(0, mine)  # nothing is timed now: the precision rows left take any core
        rest = Claims(precision, bounds, front=False)
        run_phase({device: rest}, settings, [device], precision_record, stop, tally=tally, beside=beside)
        beside.finish(stop)
    finally:
        os.sched_setaffinity(0, mine)
        beside.kill()
        tally["intervals"]["precision"] = (start, last)
    for key in job.SUMMED:
        tally[key] += beside.tally.get(key, 0)
    if stop.signum:
        raise Interrupted(stop.signum)
    lost = [c for c in precision[:bounds[0]] if (c.table, c.line) not in beside.reported]
    if lost:
        run_phase({device: deque(lost)}, settings, [device], on_record, stop, tally=tally)


class Claims:
    """Precision rows shared by two judge processes (a queue for run_phase): one takes them from the front, the
    other from the back, each row once. Testing one changes nothing; the other judge may take the last row between
    the test and popleft, which then raises IndexError like an empty deque's."""

    def __init__(self, cases: list[Case], bounds: Any, front: bool):
        self.cases, self.bounds, self.front = cases, bounds, front

    def __bool__(self) -> bool:
        with self.bounds.get_lock():
            return self.bounds[0] < self.bounds[1]

    def popleft(self) -> Case:
        with self.bounds.get_lock():
            low, high = self.bounds[0], self.bounds[1]
            if low >= high:
                raise IndexError("no rows left")
            if self.front:
                self.bounds[0] = low + 1
                return self.cases[low]
            self.bounds[1] = high - 1
            return self.cases[high - 1]


class Beside:
    """A judge process beside this one, forked from it (trusted: it runs the harness's own code and never loads
    the operator library) and pinned to `cpus` with its worker: it runs the precision rows it claims and sends
    each record over a pipe, as JSON; `pump` hands them to `on_record` here, the one process that writes files."""

    def __init__(self, claims: Claims, settings: Settings, device: int, cpus: set[int], stop: StopSignals,
                 on_record: Callable[[Record], None]):
        self.on_record, self.reported, self.tally, self.eof = on_record, set(), {}, False
        self.conn, child = mp.Pipe(duplex=False)
        self.pid = fork()
        if self.pid == 0:
            self.conn.close()
            _beside_main(claims, settings, device, cpus, stop, child)
        child.close()
        KEEP.add(self.pid)

    def waitables(self) -> list:
        return [] if self.eof else [self.conn]

    def pump(self) -> None:
        """One message of the other judge: a record (passed on), or its tally at its end."""
        try:
            kind, payload = json.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            self.eof = True
            return
        if kind == "record":
            self.reported.add((payload["table"], payload["line"]))
            self.on_record(payload)
        else:
            self.tally = payload

    def finish(self, stop: StopSignals) -> None:
        """Every record it has left to send, until it ends (or a signal stops the run)."""
        while not self.eof and not stop.signum:
            if wait([self.conn], timeout=0.2):
                self.pump()

    def kill(self) -> None:
        """End it and everything below it (at once when the run was interrupted; after finish() it has ended)."""
        proctree.kill_descendants(self.pid)
        proctree.kill(self.pid)
        proctree.reap(self.pid)
        self.conn.close()
        KEEP.discard(self.pid)


def _beside_main(claims: Claims, settings: Settings, device: int, cpus: set[int], stop: StopSignals,
                 conn: Any) -> NoReturn:
    """The body of the judge process beside: its rows on one worker, on `cpus`; never returns (os._exit, so
    nothing of the parent's, its buffered output or its database, is flushed or closed twice)."""
    code = 1
    try:
        os.sched_setaffinity(0, cpus)
        LIVE.clear()
        KEEP.clear()
        proctree.set_subreaper(True)
        tally = job.new_tally()

        def send(rec: Record) -> None:
            conn.send_bytes(codec.message(["record", rec]))

        try:
            run_phase({device: claims}, settings, [device], send, stop, tally=tally)
        except Interrupted:  # Ctrl-C reached this process too: the parent ends the run
            os._exit(1)
        conn.send_bytes(codec.message(["tally", {k: tally[k] for k in job.SUMMED}]))
        code = 0
    except BaseException:  # noqa: BLE001 - the parent runs what this process took and did not report
        traceback.print_exc()
    finally:
        os._exit(code)
