"""One phase of a run: its queued rows on one worker per slot, each message of each worker handled as it comes,
crashes, hangs and garbage charged to their row, workers replaced after a row that may have changed them."""
from __future__ import annotations

import sys
import time
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, Any, Callable

from harness.run.ahead import AHEAD_BYTES
from harness.model.case import Case
from harness.run.handle import STARTUP_GRACE_S, Garbage, Worker
from harness.run.process import Interrupted, StopSignals
from harness.model.settings import Settings
from harness.model.record import FAILING, Record

if TYPE_CHECKING:
    from harness.run.beside import Beside
    from harness.run.spares import Spares


def run_phase(queues: dict[int, Any], settings: Settings, slots: list[int],
              on_record: Callable[[Record], None], stop: StopSignals, settle: Case | None = None,
              on_start: Callable[[Case], None] = lambda case: None, tally: dict | None = None,
              goldens: dict | None = None, beside: Beside | None = None,
              ahead_bytes: float = AHEAD_BYTES, spares: Spares | None = None) -> None:
    """Run the queued cases on one worker per entry of `slots` (a device id each: a device listed twice gets two
    workers); a worker on device d takes its rows from queues[d] (one deque shared by every device spreads the rows
    over all of them). With `settle`, every fresh worker runs that case first and its record is dropped, unless
    the row failed (FAIL, ERROR, CRASH, TIMEOUT): then that is its verdict, it leaves the queues and no later
    worker settles (a failed row replaces its worker, which would settle again, forever). `on_start` hears of
    each row handed to a worker (the progress display's row being timed). A queue is a deque or a Claims (rows
    shared with another judge process); `tally` gets harness.store.job's counts, `goldens` keeps perf rows' goldens
    between rounds, `ahead_bytes` bounds planning a row ahead (Worker.plan_ahead), the
    records of a `beside` judge process are passed on while this phase runs, and `spares` (kept between the
    phases of a perf run) gives a slot a worker started early."""
    phase = _Phase(queues, settings, slots, on_record, stop, settle, on_start, beside, spares)
    phase.given = {"tally": tally, "goldens": goldens, "ahead_bytes": ahead_bytes}
    try:
        while (phase.pending() or any(w.case for w in phase.pool)) and not stop.signum:
            phase.step()
    finally:
        phase.close()
    if stop.signum:
        raise Interrupted(stop.signum)


def _take(queue: Any) -> Case | None:
    """The queue's next row; None when there is none (a Claims may lose its last row to the other judge between
    the test and the take)."""
    try:
        return queue.popleft()
    except IndexError:
        return None


class _Phase:
    """run_phase's state: the queues, the live workers (`pool`), the case every fresh worker settles on first."""

    def __init__(self, queues: dict[int, Any], settings: Settings, slots: list[int],
                 on_record: Callable[[Record], None], stop: StopSignals, settle: Case | None,
                 on_start: Callable[[Case], None], beside: Beside | None, spares: Spares | None):
        self.queues, self.settings, self.slots, self.on_record, self.stop = queues, settings, slots, on_record, stop
        self.settling, self.on_start, self.beside, self.spares = settle, on_start, beside, spares
        self.pool: list[Worker] = []
        self.given: dict[str, Any] = {}  # what every worker of the phase is handed: tally, goldens, ahead_bytes

    def pending(self) -> bool:
        return any(self.queues.values())

    def emit(self, w: Worker, record: Record | None) -> None:
        """A finished row's record, naming its device; a settling pass's only when it failed (then the settling
        row leaves the queues: that is its verdict)."""
        if record is None:
            return
        record["device"] = w.device
        if w.settling:
            w.settling = False
            if record["verdict"] not in FAILING:
                return
            case, self.settling = self.settling, None
            for queue in self.queues.values():
                while case in queue:
                    queue.remove(case)
            record["reason"] += " (while settling a fresh worker before the timed rows)"
        self.on_record(record)

    def finish(self, w: Worker, record: Record | None) -> None:
        """The worker leaves the phase (killed unless it already ended), its row's record goes out."""
        self.pool.remove(w)
        if w.status is None:
            w.kill()
        else:
            w.release()
        self.emit(w, record)

    def ahead(self, w: Worker) -> None:
        """Plan the device's next row while `w` runs one (from its job on: the checked call's time too)."""
        queue = self.queues[w.device]
        if self.settings.cpus and w.judge is not None and w.judge.done is None and queue:
            w.plan_ahead(queue[0])

    def feed(self, w: Worker, case: Case) -> None:
        """Hand `case` to `w`; rows that need no call come back at once, and the worker takes the next."""
        if not w.settling:
            self.on_start(case)
        self.emit(w, w.submit(case))
        while w.case is None and not w.settling and w.info is not None \
                and (case := _take(self.queues[w.device])) is not None:
            self.on_start(case)
            self.emit(w, w.submit(case))
        self.ahead(w)

    def step(self) -> None:
        """One turn: idle workers replaced or fed, free slots filled, then whatever arrived handled."""
        for w in [w for w in self.pool if w.case is None and (w.dead() or w.replace)]:
            if not w.replace:  # died after its row was recorded
                print(f"\nwarning: the worker that ran {w.last} died after that row finished "
                      f"({w.how_it_died()}): the operator left something running", file=sys.stderr, flush=True)
            self.finish(w, None)
        for w in self.pool:
            if w.case is None and (case := _take(self.queues[w.device])) is not None:
                self.feed(w, case)
        for device in free_slots(self.slots, [w.device for w in self.pool]):
            self._start(device)
        busy = [w for w in self.pool if w.case is not None]
        if self.spares is not None:
            for w in busy:
                if w.info is not None:
                    self.spares.start(w.device)
        beside, spares = self.beside, self.spares
        ready = wait([x for w in busy for x in w.waitables()] + (beside.waitables() if beside else [])
                     + (spares.waitables() if spares else []), timeout=0.2)
        if beside is not None and beside.conn in ready:
            beside.pump()
        if spares is not None:
            spares.pump(ready)
        now = time.monotonic()
        for w in busy:
            self._watch(w, ready, now)

    def _start(self, device: int) -> None:
        """A worker for a free slot of `device` (a spare where one is ready), fed its first row (or the settling
        one)."""
        queue = self.queues[device]
        first = (self.settling if self.settling is not None else _take(queue)) if queue else None
        if first is None:
            return
        w = (self.spares.take(self.settings, device) if self.spares else None) or Worker(self.settings, device)
        w.tally, w.goldens, w.ahead_bytes = self.given["tally"], self.given["goldens"], self.given["ahead_bytes"]
        self.pool.append(w)
        w.settling = self.settling is not None
        self.feed(w, first)

    def _watch(self, w: Worker, ready: list, now: float) -> None:
        """What `w` sent, or how it ended: a crash, a hang past the row's limit, garbage on its pipe."""
        settings = self.settings
        try:
            if w.conn in ready and (message := w.receive()) is not None:
                self.emit(w, w.handle(*message))
                self.ahead(w)
                if w.replace and w.case is None:
                    self.finish(w, None)
            elif w.dead():
                self.finish(w, w.ended("CRASH", f"the operator killed its worker process ({w.how_it_died()})"))
            elif now - w.since > settings.timeout_s + (0.0 if w.started else STARTUP_GRACE_S):
                partial = f" ({w.frames.partial} had arrived)" if w.frames.partial else ""
                self.finish(w, w.ended("TIMEOUT", f"no result within the per-row limit of {settings.timeout_s:g} s"
                                                  f"{partial}; worker killed", duration_s=settings.timeout_s))
        except Garbage as exc:
            if w.case is None:  # garbage after its row ended: the worker goes, the row stays as judged
                self.finish(w, None)
            elif w.status is not None:  # the pipe broke because the worker died: that is the story
                self.finish(w, w.ended("CRASH", f"the operator killed its worker process ({w.how_it_died()})"))
            elif exc.malformed:
                self.finish(w, w.ended("ERROR", f"the worker sent {exc}; the operator wrote to descriptors it "
                                                "does not own or changed the worker"))
            else:
                self.finish(w, w.ended("CRASH", f"the worker sent protocol garbage ({exc}); the operator wrote to "
                                                "descriptors it does not own or changed the worker"))

    def close(self) -> None:
        """Every worker ended: closed in order, or killed when a signal stopped the run or its row is in flight."""
        for w in self.pool:
            if self.stop.signum or w.case is not None:
                w.kill()
            else:
                w.close()
        if self.spares is not None and self.stop.signum:
            self.spares.kill()


def free_slots(slots: list[int], taken: list[int]) -> list[int]:
    """The entries of `slots` no live worker holds (a multiset difference, in slot order)."""
    left = list(taken)
    free = []
    for device in slots:
        if device in left:
            left.remove(device)
        else:
            free.append(device)
    return free


def devices_of(settings: Settings) -> list[int]:
    """The devices a run uses: Settings.devices, else the one device of the backend options."""
    return list(settings.devices) if settings.devices else [int(settings.backend_options.get("device", 0))]
