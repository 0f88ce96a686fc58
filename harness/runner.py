"""Runs many cases in isolated worker processes, so one crashing, hanging or hostile operator costs one row, not the
run, and never the harness's own files.

The operator library is loaded only in workers (harness/worker.py), never here: even the backend check runs in a
probe worker with a time limit. Each worker runs cases sent over its pipe. A worker that dies mid-case (segfault,
abort, exit, a SIGKILL we did not send) yields CRASH for that row; one that exceeds the per-row limit is killed and
yields TIMEOUT; one that sends something that is not a well-formed record yields CRASH; either way its whole process
tree is killed and a fresh worker takes the next row. Death is seen through a pidfd (or waitpid polling on kernels
before 5.3), never through the pipe, so a child the operator forked holding the pipe open cannot turn a crash into a
timeout. Each worker is bound to one device (Settings.devices: one worker per device, or `workers` on a single
device) and every record names its device. Precision rows are spread over all workers; perf rows afterwards, one
per device at a time, so timing never shares a device with another row. Every finished record goes to `on_record`
at once. SIGINT/SIGTERM stop dispatching, kill the running rows and raise Interrupted.
"""
from __future__ import annotations

import gc
import json
import multiprocessing as mp
import os
import pickle
import signal
import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable

from harness import ops, proctree, worker
from harness.backends import BackendUnavailable, fence
from harness.engine import DEFAULT_MEMORY_CAP, Case
from harness.record import VERDICTS, Record

#: How long the backend check may take to load the library, create a handle and destroy it.
PROBE_LIMIT_S = 120.0
_CLOSE_LIMIT_S = 5.0
#: Live worker pids, and the harness's children that are none of ours (left alone when orphans are swept).
_LIVE: set[int] = set()
_KEEP: set[int] = set()


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
    devices: list[int] = field(default_factory=list)  # one worker per device; empty: backend_options["device"]
    service: Any = None  # what a worker does with each case (harness.worker.Rows when None); picklable


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived: dispatching stopped and the rows in flight were killed (not recorded). A
    KeyboardInterrupt, so commands without reports of their own (mutants) end like any Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _Garbage(Exception):
    """A worker sent something that is not a message of the protocol."""


class _Worker:
    """One worker process (state: its pid, pidfd, pipe, and the case it runs since when)."""

    def __init__(self, settings: Settings, device: int | None = None):
        self.device = int(settings.backend_options.get("device", 0)) if device is None else device
        if self.device != settings.backend_options.get("device", 0):
            settings = replace(settings, backend_options={**settings.backend_options, "device": self.device})
        self.conn, child = mp.Pipe()
        life_r, self.lifeline = os.pipe()
        parent = os.getpid()
        self.pid = _fork()
        if self.pid == 0:
            self.conn.close()
            os.close(self.lifeline)
            if settings.backend == "cpu":  # the CPU twin: nothing device-side to inherit, fork is enough
                worker.run_forked(child, life_r, parent, settings)
            worker.exec_fresh(child, life_r, parent)  # device runtimes want a fresh interpreter
        child.close()
        os.close(life_r)
        self.pidfd = _pidfd_open(self.pid)
        _LIVE.add(self.pid)
        if settings.backend != "cpu":
            self.conn.send_bytes(pickle.dumps(settings))
        self.case: Case | None = None
        self.last = ""
        self.since = time.monotonic()
        self.status: int | None = None
        self.killed = False
        self.settling = False

    def submit(self, case: Case) -> None:
        """Hand over a case; a worker already dead takes it down with it (its pidfd reports the crash)."""
        self.case, self.since, self.last = case, time.monotonic(), case.id
        try:
            self.conn.send(case)
        except OSError:
            pass

    def receive(self) -> tuple[str, Any]:
        """The next message; _Garbage for anything that is not [kind, payload] JSON within the size limit."""
        try:
            message = json.loads(self.conn.recv_bytes(worker.MAX_MESSAGE))
        except (EOFError, OSError, ValueError) as exc:
            self.exited(0.5)  # the pipe ended because the worker died: then that is the story
            raise _Garbage(f"{type(exc).__name__}: {str(exc)[:80]}") from exc
        if not isinstance(message, list) or len(message) != 2:
            raise _Garbage(f"not a message: {str(message)[:40]!r}")
        kind, payload = message
        if kind not in ("ready", "unavailable", "record", "closed"):
            raise _Garbage(f"unknown message {str(kind)[:40]!r}")
        return kind, payload

    def waitables(self) -> list:
        return [self.conn] + [self.pidfd] * (self.pidfd >= 0)

    def exited(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the worker to end; whether it did."""
        end = time.monotonic() + timeout
        while not self.dead() and (left := end - time.monotonic()) > 0:
            if self.pidfd >= 0:
                wait([self.pidfd], timeout=left)
            else:
                time.sleep(min(left, 0.02))
        return self.dead()

    def dead(self) -> bool:
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
        return self.status is not None

    def kill(self) -> None:
        """SIGKILL the worker and everything below it: its tree, its process group, and processes of a dead
        worker that re-parented to the harness (a subreaper while it runs cases)."""
        alive = self.status is None  # once reaped, the pid may belong to someone else
        self.killed = self.killed or alive
        tree = proctree.descendants(self.pid) if alive else []
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in [self.pid] * alive + tree:
            proctree.kill(pid)
        self.wait()
        _LIVE.discard(self.pid)
        for pid in proctree.children(os.getpid()):
            if pid not in _LIVE and pid not in _KEEP:
                proctree.kill_descendants(pid)
                proctree.kill(pid)
                proctree.reap(pid)

    def wait(self) -> None:
        if self.status is None:
            _, status = os.waitpid(self.pid, 0)
            self.status = os.waitstatus_to_exitcode(status)
        self.release()

    def release(self) -> None:
        for fd in (self.pidfd, self.lifeline):
            if fd >= 0:
                os.close(fd)
        self.pidfd = self.lifeline = -1
        self.conn.close()

    def close(self) -> None:
        """Orderly end: destroy the handle, exit; killed if it does not within a few seconds."""
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.exited(_CLOSE_LIMIT_S)
        self.kill()

    def how_it_died(self) -> str:
        self.dead()
        code = self.status
        if code is None:
            return "it is still running"
        if code == -signal.SIGKILL and not self.killed:
            return ("signal SIGKILL, which the harness did not send: possibly the kernel's out-of-memory killer "
                    f"({_oom_note()})")
        if code == worker.BROKEN:
            return f"exit code {code}: the worker itself failed, e.g. the operator closed or broke its pipe"
        if code >= 0:
            return f"exit code {code}"
        note = fence.fault_note(self.pid)  # what the cpu backend's guard pages saw, naming the buffer
        return f"signal {worker.signal_name(-code)}" + (f": {note}" if note else "")


def _fork() -> int:
    """os.fork, with the parent's objects frozen in the child: its cyclic garbage (say a sqlite connection of an
    earlier History, or a test's) must never be collected there, where its finalizer would close the parent's
    database from the worker, after the worker closed or reused the descriptors (seen: a worker SIGSEGV in
    libsqlite3 under the pytest plugin). No collection may run between the fork and the freeze either."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        pid = os.fork()
    except BaseException:
        if enabled:
            gc.enable()
        raise
    if pid == 0:
        gc.freeze()
        gc.enable()
    elif enabled:
        gc.enable()
    return pid


def _pidfd_open(pid: int) -> int:
    """A descriptor that becomes readable when `pid` ends (Linux >= 5.3); -1 where the kernel has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


def _oom_note() -> str:
    """What the cgroup says about out-of-memory kills, where it can tell."""
    try:
        cgroup = Path("/proc/self/cgroup").read_text().strip().splitlines()[-1].split(":", 2)[2]
        events = Path(f"/sys/fs/cgroup{cgroup}/memory.events").read_text()
    except (OSError, IndexError):
        return "check the kernel log"
    kills = dict(line.split() for line in events.splitlines() if line.strip()).get("oom_kill", "?")
    return f"this cgroup has seen {kills} OOM kill(s); check the kernel log"


def _crash(case: Case, why: str) -> Record:
    rec = case.new_record()
    rec.update(verdict="CRASH", reason=why)
    return rec


def _timed_out(case: Case, limit: float) -> Record:
    rec = case.new_record()
    rec.update(verdict="TIMEOUT", reason=f"no result within the per-row limit of {limit:g} s; worker killed",
               duration_s=limit)
    return rec


def _checked(case: Case, payload: Any) -> Record:
    """A record from a worker, if it is one for this case; _Garbage otherwise."""
    if not isinstance(payload, dict) or payload.get("verdict") not in VERDICTS \
            or (payload.get("case_name"), payload.get("table"), payload.get("line")) != (case.name, case.table,
                                                                                         case.line):
        raise _Garbage("a record that is not this row's")
    return payload


class StopSignals:
    """SIGINT/SIGTERM handlers for the length of a run: remember the signal; the loop acts on it (and report
    writing, which must not be cut in half, simply finishes)."""

    def __init__(self) -> None:
        self.signum = 0
        self._old: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                self._old[signum] = signal.signal(signum, self._note)
            except ValueError:  # not the main thread: the caller keeps its own handling
                pass
        return self

    def _note(self, signum: int, _frame: Any) -> None:
        self.signum = self.signum or signum

    def __exit__(self, *exc: Any) -> None:
        for signum, handler in self._old.items():
            signal.signal(signum, handler)


def _run_phase(queues: dict[int, deque[Case]], settings: Settings, slots: list[int],
               on_record: Callable[[Record], None], stop: StopSignals, settle: Case | None = None,
               on_start: Callable[[Case], None] = lambda case: None) -> None:
    """Run the queued cases on one worker per entry of `slots` (a device id each: a device listed twice gets two
    workers); a worker on device d takes its rows from queues[d] (one deque shared by every device spreads the rows
    over all of them). With `settle`, every fresh worker runs that case first and its record is dropped.
    `on_start` hears of each row handed to a worker (the progress display's row being timed)."""
    pool: list[_Worker] = []

    def emit(w: _Worker, record: Record) -> None:
        if w.settling:
            w.settling = False
            return
        record["device"] = w.device
        on_record(record)

    def finish(w: _Worker, record: Record | None) -> None:
        pool.remove(w)
        if w.status is None:
            w.kill()
        else:
            w.release()
        if record is not None:
            emit(w, record)

    def pending() -> bool:
        return any(queues.values())

    try:
        while (pending() or any(w.case for w in pool)) and not stop.signum:
            for w in [w for w in pool if w.case is None and w.dead()]:  # died after its row was recorded
                print(f"\nwarning: the worker that ran {w.last} died after that row finished "
                      f"({w.how_it_died()}): the operator left something running", file=sys.stderr, flush=True)
                finish(w, None)
            for w in pool:
                if w.case is None and queues[w.device]:
                    w.submit(queues[w.device].popleft())
                    on_start(w.case)
            for device in _free_slots(slots, [w.device for w in pool]):
                if queues[device]:
                    w = _Worker(settings, device)
                    pool.append(w)
                    w.settling = settle is not None
                    w.submit(settle if settle is not None else queues[device].popleft())
                    if not w.settling:
                        on_start(w.case)
            busy = [w for w in pool if w.case is not None]
            ready = wait([x for w in busy for x in w.waitables()], timeout=0.2)
            now = time.monotonic()
            for w in busy:
                case = w.case
                try:
                    if w.conn in ready:
                        kind, payload = w.receive()
                        if kind == "record":
                            w.case = None
                            emit(w, _checked(case, payload))
                        elif kind != "ready":  # "ready" only says the library loaded: the record follows
                            rec = case.new_record()
                            rec.update(verdict="ERROR", reason=f"the worker cannot open the backend: {payload}")
                            finish(w, rec)
                    elif w.dead():
                        finish(w, _crash(case, f"the operator killed its worker process ({w.how_it_died()})"))
                    elif now - w.since > settings.timeout_s:
                        finish(w, _timed_out(case, settings.timeout_s))
                except _Garbage as exc:
                    if w.status is not None:  # the pipe broke because the worker died: that is the story
                        finish(w, _crash(case, f"the operator killed its worker process ({w.how_it_died()})"))
                    else:
                        finish(w, _crash(case, f"the worker sent protocol garbage ({exc}); the operator wrote to "
                                               "descriptors it does not own"))
    finally:
        for w in pool:
            if stop.signum or w.case is not None:
                w.kill()
            else:
                w.close()
    if stop.signum:
        raise Interrupted(stop.signum)


def _free_slots(slots: list[int], taken: list[int]) -> list[int]:
    """The entries of `slots` no live worker holds (a multiset difference, in slot order)."""
    left = list(taken)
    free = []
    for device in slots:
        if device in left:
            left.remove(device)
        else:
            free.append(device)
    return free


def _devices_of(settings: Settings) -> list[int]:
    """The devices a run uses: Settings.devices, else the one device of the backend options."""
    return list(settings.devices) if settings.devices else [int(settings.backend_options.get("device", 0))]


def run(cases: list[Case], settings: Settings, on_record: Callable[[Record], None],
        on_start: Callable[[Case], None] = lambda case: None) -> None:
    """Precision phase in parallel over every device, then the perf phase (one row per device at a time, devices in
    parallel); records are handed out as they finish, each naming its device, and `on_start` hears of each row
    handed to a worker. Raises Interrupted (after killing every worker) when SIGINT or SIGTERM arrives."""
    precision = [c for c in cases if not c.is_perf]
    perf = [c for c in cases if c.is_perf]
    devices = _devices_of(settings)
    slots = devices * max(1, settings.workers) if len(devices) == 1 else devices
    with _subreaper(), StopSignals() as stop:
        if precision:
            shared = deque(precision)
            _run_phase({d: shared for d in devices}, settings, slots, on_record, stop, on_start=on_start)
        if perf:
            _run_perf(perf, settings, devices, on_record, stop, on_start)


def run_in_order(cases: list[Case], settings: Settings, on_record: Callable[[Record], None]) -> None:
    """Each case once, in order, on one isolated worker, perf rows included and not in rounds: for callers that
    time nothing here (the pytest plugin runs one item at a time)."""
    device = _devices_of(settings)[0]
    with _subreaper(), StopSignals() as stop:
        _run_phase({device: deque(cases)}, settings, [device], on_record, stop)


@contextmanager
def _subreaper() -> Iterator[None]:
    """While workers run, orphans of a dead worker re-parent to the harness, where _Worker.kill finds them."""
    _KEEP.update(proctree.children(os.getpid()))
    was = proctree.set_subreaper(True)
    try:
        yield
    finally:
        proctree.set_subreaper(was)
        _KEEP.clear()


def _run_perf(perf: list[Case], settings: Settings, devices: list[int], on_record: Callable[[Record], None],
              stop: StopSignals, on_start: Callable[[Case], None] = lambda case: None) -> None:
    """Perf rows in up to `timing.rounds` rounds, each round a fresh worker process (like pyperf), rounds in table
    order so slow machine drift spreads over every row. A row stops early once it has spent its time budget
    (harness.timing.more_rounds: three rounds while a round fits the row's cap, one when a single round does
    not). Its record goes out after its last round, rounds merged and judged once
    (harness.perf.merge_round_records); a row that fails, crashes or is not timed leaves at once. Each row keeps
    one device for all its rounds (rows dealt over the devices in table order), and each device runs one row at a
    time: rows never share a device, and the precision phase has ended before."""
    from harness.perf import merge_round_records, round_decides
    from harness.timing import more_rounds

    config = settings.timing
    rounds = config.rounds if config is not None else 1
    per_round = replace(settings, timing=config.per_round()) if config is not None else settings
    by_id = {c.id: c for c in perf}
    taken: dict[str, list[Record]] = {c.id: [] for c in perf}

    def finish(key: str) -> None:
        on_record(merge_round_records(taken.pop(key), by_id[key], config, settings.baselines, settings.hardware))

    home = {c.id: devices[i % len(devices)] for i, c in enumerate(perf)}

    def collect(rec: Record) -> None:
        key = f"{Path(rec['table']).name}::{rec['case_name']}"
        taken[key].append(rec)
        if round_decides(rec):
            finish(key)
    todo = list(perf)
    for r in range(rounds):
        if not todo:
            break
        # A fresh process's first row pays for page faults, thread start-up and caches (measured on the twin: the
        # first row of a round ran ~20 % slow); each round's worker opens with the cheapest row once, untimed.
        settle = min(todo, key=lambda c: (sum(rec.get("duration_s") or 0.0 for rec in taken[c.id]),
                                          ops.get(c.op).flops(c.args) if c.args is not None and ops.get(c.op) else 0))
        queues = {d: deque(c for c in todo if home[c.id] == d) for d in devices}
        _run_phase(queues, per_round, devices, collect, stop, settle=settle, on_start=on_start)
        for case in [c for c in todo if c.id in taken]:
            spent = sum(rec.get("duration_s") or 0.0 for rec in taken[case.id])
            if r == rounds - 1 or not more_rounds(len(taken[case.id]), spent, config):
                finish(case.id)
        todo = [c for c in todo if c.id in taken]


def check_backend(settings: Settings) -> dict[str, Any]:
    """Load the library, create a handle and destroy it in a probe worker, within PROBE_LIMIT_S: a library that
    crashes, exits or hangs doing so is one BackendUnavailable line (exit 3), and the harness never loads it."""
    if settings.backend == "cpu" and not settings.backend_options.get("operator_lib"):
        ensure_twin()  # compiling is not loading: done here, so the probe's time limit is the library's alone
    limit = min(PROBE_LIMIT_S, max(settings.timeout_s, 5.0))
    with _subreaper():
        return _probe(settings, limit)


def ensure_twin() -> None:
    """Build the CPU twin if it is missing or stale (here, or on each Ray host before its first row)."""
    from harness.backends.build import BuildError, build_twin

    try:
        build_twin()
    except BuildError as exc:
        raise BackendUnavailable(f"cpu backend: {exc}") from exc


def _probe(settings: Settings, limit: float) -> dict[str, Any]:
    w = _Worker(settings)
    stage = "loading the library and creating a handle"
    try:
        deadline = time.monotonic() + limit
        w.conn.send(None)  # after "ready": close the backend (aclblasDestroy) and report "closed"
        info: dict = {}
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BackendUnavailable(f"{settings.backend} backend: the operator library did not finish "
                                         f"{stage} within {limit:g} s")
            if w.conn not in wait(w.waitables(), timeout=min(left, 0.2)):
                if w.dead():
                    raise BackendUnavailable(f"{settings.backend} backend: the operator library killed the probe "
                                             f"worker while {stage} ({w.how_it_died()})")
                continue
            try:
                kind, payload = w.receive()
            except _Garbage as exc:
                why = w.how_it_died() if w.status is not None else f"protocol garbage: {exc}"
                raise BackendUnavailable(f"{settings.backend} backend: the operator library killed the probe "
                                         f"worker while {stage} ({why})") from None
            if kind == "unavailable":
                raise BackendUnavailable(str(payload))
            if kind == "ready":
                info = payload if isinstance(payload, dict) else {}
                stage = "destroying its handle (aclblasDestroy)"
            elif kind == "closed":
                return info
    finally:
        w.kill()
