"""Runs many cases in isolated worker processes, so one crashing, hanging or hostile operator costs one row, not the
run, and never the harness's own files.

The operator library is loaded only in workers (harness/run/worker.py), never here: even the backend check runs in a
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
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from multiprocessing import reduction
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable, NoReturn

from harness.model import operators as ops
from harness.store import job
from harness.run import bwrap, proctree, worker
from harness.model import codec, untrusted
from harness.backends import BackendUnavailable, fence
from harness.backends.build import BuildError
from harness.model.case import Case
from harness.run.messages import Malformed, backend_info
from harness.run.row_judge import RowJudge
from harness.run.buffers import footprint_bytes
from harness.run.sandbox import BackendInfo
from harness.model.settings import Settings
from harness.model.record import FAILING, VERDICTS, Record

#: How long the backend check may take to load the library, create a handle and destroy it.
PROBE_LIMIT_S = 120.0
_CLOSE_LIMIT_S = 5.0
#: Live worker pids, and the harness's children that are none of ours (left alone when orphans are swept).
_LIVE: set[int] = set()
_KEEP: set[int] = set()
#: A fresh worker's interpreter start-up (imports, under load) is not the first row's time.
STARTUP_GRACE_S = 30.0
#: What a worker may say.
_KINDS = ("started", "ready", "unavailable", "record", "closed", "called", "differs", "sampling", "timed", "end",
          "failed")
#: A row's captured stdout/stderr keeps its first and last bytes (like pytest's captured output, bounded).
OUTPUT_HEAD = 16 << 10
OUTPUT_TAIL = 8 << 10
#: A row is planned ahead only while its footprint and that of the row being timed fit in this together (two rows'
#: buffers are then held at once), or in the footprint of the perf phase's largest row where that is more
#: (ahead_bytes): the run's peak memory stays that of its largest row.
AHEAD_BYTES = 1 << 30


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived: dispatching stopped and the rows in flight were killed (not recorded). A
    KeyboardInterrupt, so commands without reports of their own (mutants) end like any Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _Garbage(Exception):
    """A worker sent something that is not a message of the protocol (the row's CRASH), or a message whose fields
    are not what the protocol says (`malformed`: the row's ERROR, naming the field)."""

    def __init__(self, why: str, malformed: bool = False):
        super().__init__(why)
        self.malformed = malformed


class _Worker:
    """One worker process and the row it runs (state: the warden's pid and pidfd, the pipe, the captured output,
    the backend it reported, the row's RowJudge). The worker only runs the operator: every row is planned and
    judged here, in the harness, from the harness's own copies."""

    def __init__(self, settings: Settings, device: int | None = None, spare: bool = False):
        self.given = settings  # what it was started with (a spare is handed only rows of these settings)
        self.tally: dict | None = None    # harness.store.job's counts (set by _run_phase)
        self.goldens: dict | None = None  # perf rows' goldens kept between rounds (set by _run_phase)
        self.ahead_bytes: float = AHEAD_BYTES  # the bound of plan_ahead (set by _run_phase)
        self.forked = time.monotonic()
        self.device = int(settings.backend_options.get("device", 0)) if device is None else device
        if self.device != settings.backend_options.get("device", 0):
            settings = replace(settings, backend_options={**settings.backend_options, "device": self.device})
        self.library = _library_of(settings)
        if self.library is not None:
            settings = replace(settings, backend_options={**settings.backend_options, **self.library.options()})
        self.settings = settings
        self.conn, child = mp.Pipe()
        self.frames = untrusted.Frames(self.conn.fileno(), worker.MAX_MESSAGE)
        life_r, self.lifeline = os.pipe()
        self.capture = os.memfd_create("harness-worker-output", os.MFD_CLOEXEC)
        capture_w = os.open(f"/proc/self/fd/{self.capture}", os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        launch = worker.Launch(conn=child.fileno(), lifeline=life_r, capture=capture_w,
                               keep=(self.library.fd,) if self.library is not None else (),
                               env=(("PYTHONPATH", _python_path()),),
                               bwrap=bwrap.choose(settings)[0] if self.library is not None else "")
        parent = os.getpid()
        # a spare starts up off its rows' cores (one may be timing a row) and moves there before its first row
        startup = os.sched_getaffinity(0) - set(settings.cpus) if spare else set(settings.cpus)
        self.pin = bool(spare and settings.cpus and startup)
        self.pid = _fork()
        if self.pid == 0:
            self.conn.close()
            os.close(self.lifeline)
            if self.pin or (settings.cpus and not spare):
                os.sched_setaffinity(0, startup)
            worker.warden(launch, parent)
        child.close()
        os.close(life_r)
        os.close(capture_w)
        self.pidfd = _pidfd_open(self.pid)
        _LIVE.add(self.pid)
        # the worker runs calls, not verdicts: what only the judge uses (baselines) stays here
        self.conn.send_bytes(pickle.dumps(replace(settings, baselines=None)))
        self.case: Case | None = None
        self.judge: RowJudge | None = None
        self.ahead: _Ahead | None = None  # the next row, planned while this one was timed
        # the judge's own cores: the timed ones (Settings.cpus) left out, also while the judge is on them (_timed_cores)
        self.judge_cpus = os.sched_getaffinity(0) - set(settings.cpus) or os.sched_getaffinity(0)
        self.info: BackendInfo | None = None
        self.rows = getattr(settings, "service", None) is None  # the usual service: rows judged here
        self.load_notes: list[str] = []
        self.started = False  # the worker's interpreter is up (its start-up is nobody's row time)
        self.replace = False  # the operator changed something in its process: a fresh worker for the next row
        self.last = ""
        self.since = time.monotonic()
        self.status: int | None = None
        self.killed = False
        self.settling = False

    def submit(self, case: Case) -> Record | None:
        """Hand over a case; the record at once when the row needs no operator call (SKIP, ERROR, refused)."""
        self.case, self.since, self.last = case, time.monotonic(), case.id
        if not self.rows:
            self._send(case)
            return None
        return self._start() if self.info is not None else None

    def _judge_for(self, case: Case, timed: bool = True) -> RowJudge:
        """The row's judge; not `timed`: a settling pass, its checked call only and no golden (a worker times one
        row, the next; that row is judged in full on its turn)."""
        settings = self.settings
        return RowJudge(case, self.info, use_poison=settings.poison, memory_cap=settings.memory_cap,
                        timing_config=settings.timing if timed else None, baselines=settings.baselines,
                        golden=timed, goldens=self.goldens)

    def plan_ahead(self, case: Case) -> None:
        """Plan `case` (buffers, golden, shared memory) while the worker times the row in flight, in a thread on
        the judge's cores while the timed calls run on their own (Settings.cpus), so the judge's work for the next
        row is not added to the perf phase's; only while both rows' footprints fit in `ahead_bytes` together."""
        if self.ahead is None and self.rows and self.info is not None and _footprint(self.case) \
                + _footprint(case) <= self.ahead_bytes:
            self.ahead = _Ahead(case, lambda: self._judge_for(case), self.judge_cpus)

    def _start(self) -> Record | None:
        case = self.case
        changed = self.library.changed() if self.library is not None else ""
        ahead, self.ahead = self.ahead, None
        # no row is timed now: a plan still running may finish on the timed cores too
        planned = ahead.take(set(self.settings.cpus)) if ahead is not None else None
        if planned is not None and ahead.case is case:
            self.judge = planned
            planned.resume()
        else:
            if planned is not None:
                planned.close()
            self.judge = self._judge_for(case, timed=not self.settling)
        if changed and self.judge.done is None:
            self.judge.ended_early("ERROR", changed)
        if self.judge.done is not None:
            return self._row_done(self.judge.done)
        if self.pin:
            self.pin = False
            self._send((worker.PIN, tuple(self.settings.cpus)))
        self._send(self.judge.job)
        try:
            reduction.send_handle(self.conn, self.judge.fd, self.pid)
        except OSError:
            pass
        self.since = time.monotonic()
        return None

    def _send(self, obj: Any) -> None:
        try:
            self.conn.send(obj)
        except OSError:  # a worker already dead takes the row down with it (its pidfd reports the crash)
            pass

    def receive(self) -> tuple[str, Any] | None:
        """The next message, None while it has not arrived whole (untrusted.Frames: never a wait); _Garbage for
        anything that is not [kind, payload] JSON within the size limit, malformed where it nests too deep. Every
        string in it is made printable here, where the worker's text enters the harness."""
        try:
            frame = self.frames.pull()
            if frame is None:
                return None
            message = json.loads(frame)
        except (EOFError, OSError, ValueError, RecursionError) as exc:
            self.exited(0.5)  # the pipe ended because the worker died: then that is the story
            raise _Garbage(f"{type(exc).__name__}: {untrusted.printable(str(exc)[:80])}") from exc
        if not isinstance(message, list) or len(message) != 2:
            raise _Garbage(f"not a message: {untrusted.printable(str(message)[:40])!r}")
        kind, payload = message
        if kind not in _KINDS:
            raise _Garbage(f"unknown message {untrusted.printable(str(kind)[:40])!r}")
        try:
            return kind, untrusted.clean(payload, kind)
        except untrusted.Unfit as exc:
            raise _Garbage(f"a malformed {kind!r} message: {exc}", malformed=True) from None

    def handle(self, kind: str, payload: Any) -> Record | None:
        """One message of the row in flight; the row's record when it has ended. _Garbage when the message is
        not what the protocol allows at this point."""
        try:
            return self._handle(kind, payload)
        except (Malformed, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise _Garbage(f"a malformed {kind!r} message: {str(exc)[:160]}", malformed=True) from None

    def _handle(self, kind: str, payload: Any) -> Record | None:
        case = self.case
        if kind == "started":
            if self.started:
                raise Malformed("a second 'started'")
            self.started, self.since = True, time.monotonic()
            return None
        if kind == "ready":
            if self.info is not None or not isinstance(payload, dict):
                raise Malformed("a second or malformed 'ready'")
            self.load_notes = [str(x)[:200] for x in payload.get("load_fpenv") or []][:8]
            self.info = backend_info(payload.get("judge")) if self.rows else BackendInfo()
            if self.tally is not None:
                self.tally["worker_starts"] += 1
                self.tally["worker_start_s"] += time.monotonic() - self.forked
            return self._start() if self.rows and case is not None else None
        if kind == "unavailable":
            rec = case.new_record()
            rec.update(verdict="ERROR", reason=f"the worker cannot open the backend: {str(payload)[:300]}")
            return self._row_done(rec, kill=True)
        if not self.rows:
            if kind != "record":
                raise Malformed(f"{kind!r} from a service that answers with records")
            return self._row_done(_checked(case, payload))
        if self.judge is None or self.judge.done is not None:
            raise Malformed(f"{kind!r} with no row in flight")
        if kind == "called":
            go = self.judge.begin_called(payload)
            self.replace = self.replace or bool(payload.get("fpenv"))
            self._timed_cores(False)
            self._send(go)  # the sandbox times the row while its checked call is judged here
            self.judge.end_called()
            return None
        if kind == "differs":  # a call's other bytes, judged while the sandbox waits
            self._send(self.judge.on_differs(payload))
            return None
        if kind == "sampling":  # the judge's clock opens as the samples are let begin
            self._send(self.judge.on_sampling(payload))
            return None
        if kind == "timed":
            self._timed_cores(True)
            self.judge.on_timed(payload)
            # a worker times one row: whatever its library patched in this process never times another
            self.replace = True
            return None
        if kind == "failed":
            return self._row_done(self.judge.ended_early("ERROR", str(payload)[:500]), kill=True)
        if kind == "end":
            rec = self.judge.on_end(payload)
            self.replace = self.replace or bool(payload.get("leftovers"))
            return self._row_done(rec)
        raise Malformed(f"{kind!r} while a row runs")

    def _timed_cores(self, idle: bool) -> None:
        """The judge's main thread also on the timed cores while no row is timed there (from a row's "timed" to
        the next row's go: judging, records, the next row's start), on its own cores otherwise. In the main job's
        first perf round that judging shared the judge's core with the precision rows while the timed core waited."""
        if self.settings.cpus:
            os.sched_setaffinity(0, self.judge_cpus | set(self.settings.cpus) if idle else self.judge_cpus)

    def ended(self, verdict: str, reason: str, **extra: Any) -> Record:
        """The row in flight ends without its worker's last word (crash, hang, garbage)."""
        if self.judge is not None and self.judge.done is None:
            rec = self.judge.ended_early(verdict, reason)
        else:
            rec = self.case.new_record()
            rec.update(verdict=verdict, reason=reason)
        rec.update(extra)
        return self._row_done(rec)

    def _row_done(self, rec: Record, kill: bool = False) -> Record:
        output = self.take_output()
        if output is not None:
            rec["captured"] = output
        if self.load_notes:
            note = ("the library changed the floating-point environment when it was loaded ("
                    + "; ".join(self.load_notes) + "): built with -ffast-math?")
            rec["process_notes"] = [note]
            if rec["verdict"] not in ("PASS", "SKIP"):
                rec["reason"] = f"{rec['reason']}; {note}" if rec["reason"] else note
        if self.judge is not None:
            self.judge.close()
            if self.tally is not None:
                job.add_row(self.tally, self.case, self.judge)
        self.case, self.judge = None, None
        # a failed row may have left the worker changed in ways no check sees (its Python patched, say)
        self.replace = self.replace or kill or rec["verdict"] in FAILING
        return rec

    def take_output(self) -> dict | None:
        """What the worker wrote to stdout/stderr since the last row (bounded, like pytest's captured output)."""
        try:
            size = os.fstat(self.capture).st_size
            if not size:
                return None
            head = os.pread(self.capture, OUTPUT_HEAD, 0)
            tail = os.pread(self.capture, OUTPUT_TAIL, max(len(head), size - OUTPUT_TAIL)) if size > len(head) else b""
            os.ftruncate(self.capture, 0)
        except OSError:
            return None
        text = untrusted.printable(head.decode(errors="replace"), lines=True)
        if tail:
            skipped = size - len(head) - len(tail)
            text += (f"\n[... {skipped} bytes not kept ...]\n" if skipped > 0 else "") \
                + untrusted.printable(tail.decode(errors="replace"), lines=True)
        return {"bytes": size, "text": text}

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
        """SIGKILL the worker and everything below it: its warden, the namespace's init (which takes the whole
        namespace along), its tree, its process group, and processes of a dead worker that re-parented to the
        harness (a subreaper while it runs cases)."""
        alive = self.status is None  # once reaped, the pid may belong to someone else
        self.killed = self.killed or alive
        tree = proctree.descendants(self.pid) if alive else []
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in tree + [self.pid] * alive:
            proctree.kill(pid)
        self.wait()
        _LIVE.discard(self.pid)
        # the tree dies from the top (under bwrap: warden, bwrap, bwrap's init, worker): a process whose parent
        # died first re-parents to the harness a moment later, where the sweep below must find it
        settled = time.monotonic() + 1.0
        while any(proctree.parent_of(p) not in (0, os.getpid()) for p in tree) and time.monotonic() < settled:
            time.sleep(0.005)
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
        for fd in (self.pidfd, self.lifeline, self.capture):
            if fd >= 0:
                os.close(fd)
        self.pidfd = self.lifeline = self.capture = -1
        self.conn.close()
        self.frames.close()
        fence.forget(self.pid)
        ahead, self.ahead = self.ahead, None
        for judge in (self.judge, ahead.take(set()) if ahead is not None else None):
            if judge is not None:
                judge.close()

    def close(self) -> None:
        """Orderly end: destroy the handle, exit; killed if it does not within a few seconds."""
        self._send(None)
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


class _Ahead:
    """The next row's RowJudge, made in a thread of the judge while the row before it is timed (state: the
    thread and what it made). The thread runs on the judge's own cores (`cpus`, set by the thread: the main thread
    may be on the timed cores too just then); `take` lets a plan that is still running onto the timed cores as
    well, for the rest of it, once no row is timed there (the worker waits for this very row). In the main job's
    first perf round the judge's planning (a large row's golden: seconds) took one core shared with the precision
    rows while the timed core waited idle."""

    THREAD = "plan-ahead"

    @staticmethod
    def running() -> list[threading.Thread]:
        """The threads planning a row now."""
        return [t for t in threading.enumerate() if t.name == _Ahead.THREAD]

    def __init__(self, case: Case, make: Callable[[], RowJudge], cpus: set[int]):
        self.case = case
        self.judge: RowJudge | None = None
        self.thread = threading.Thread(target=self._make, args=(make, cpus), name=self.THREAD, daemon=True)
        self.thread.start()

    def _make(self, make: Callable[[], RowJudge], cpus: set[int]) -> None:
        os.sched_setaffinity(0, cpus)  # the judge's cores, whatever the thread that started it had just then
        self.judge = make()  # RowJudge turns every planning error into its row's ERROR record

    def take(self, idle_cpus: set[int]) -> RowJudge | None:
        """The planned RowJudge once the thread has made it (None if the thread failed), the thread allowed onto
        `idle_cpus` meanwhile."""
        if idle_cpus and self.thread.is_alive():
            try:
                os.sched_setaffinity(self.thread.native_id, os.sched_getaffinity(0) | idle_cpus)
            except OSError:  # it ended in between
                pass
        self.thread.join()
        return self.judge


class _Spares:
    """The next worker of each device, started early: while a row is timed, a spare forked on the judge's cores
    does its interpreter start-up, imports and backend open (nothing that depends on a row), so the next round, or
    the worker replacing a failed one, begins on a ready process instead of ~4 s of start-up with the timed core
    idle. A spare has run no operator call before its row (rounds stay fresh processes). It is started only once
    its device's worker has said "ready" (the library loaded and was checked the same way), holds no row's buffers
    (within --memory-cap like any idle worker), is bounded like a row's start-up (timeout + STARTUP_GRACE_S) and is
    killed with the run. One that dies unused is replaced silently; after MAX_DEATHS in a row, spares stop (said
    once) and workers start at hand-over as before, where a worker that cannot start fails its row as ever."""

    MAX_DEATHS = 3

    def __init__(self, settings: Settings, tally: dict | None, goldens: dict, ahead: float):
        self.settings, self.tally, self.goldens, self.ahead = settings, tally, goldens, ahead
        self.idle: dict[int, _Worker] = {}
        self.deaths = 0

    @staticmethod
    def allowed(settings: Settings) -> bool:
        """Where timed workers have cores of their own and the judge others to start a spare on."""
        return (bool(settings.cpus) and getattr(settings, "service", None) is None
                and bool(os.sched_getaffinity(0) - set(settings.cpus)))

    def start(self, device: int) -> None:
        """A spare for `device`, unless it has one, or a row is being planned (_fork would wait for it: the next
        call, a loop turn later, starts it)."""
        if self.deaths < self.MAX_DEATHS and device not in self.idle and not _Ahead.running():
            w = self.idle[device] = _Worker(self.settings, device, spare=True)
            w.tally, w.goldens, w.ahead_bytes = self.tally, self.goldens, self.ahead

    def take(self, settings: Settings, device: int) -> _Worker | None:
        """The device's spare for a row of `settings`, if it is alive (then the next one may be started)."""
        w = self.idle.pop(device, None)
        if w is not None and (w.given is not settings or w.dead()):
            self._drop(w)
            return None
        if w is not None:
            self.deaths = 0
        return w

    def waitables(self) -> list:
        return [x for w in self.idle.values() for x in w.waitables()]

    def pump(self, ready: list) -> None:
        """The spares' start-up messages ("started", "ready"); one that says anything else, dies or takes longer
        than a row's start-up may is dropped."""
        now = time.monotonic()
        for w in list(self.idle.values()):
            try:
                if w.conn in ready and (message := w.receive()) is not None:
                    w.handle(*message)
                elif not w.dead() and now - w.since <= self.settings.timeout_s + (0 if w.started else
                                                                                    STARTUP_GRACE_S):
                    continue
                else:
                    self._drop(w)
            except _Garbage:
                self._drop(w)

    def _drop(self, w: _Worker) -> None:
        self.idle.pop(w.device, None)
        self.deaths += 1
        if self.deaths == self.MAX_DEATHS:
            print(f"\nwarning: {self.deaths} spare workers in a row ended before their first row "
                  f"(the last: {w.how_it_died()}); workers start when a row needs one instead", file=sys.stderr,
                  flush=True)
        w.kill()

    def kill(self) -> None:
        for w in list(self.idle.values()):
            w.kill()
        self.idle.clear()


@dataclass
class LibraryFile:
    """The operator library of a run, opened once by the harness: every worker loads it from this descriptor
    (/proc/self/fd/N), so what ran is the file that was hashed; a change on disk afterwards is noticed."""

    path: str
    fd: int
    sha256: str
    stamp: tuple
    twin: bool

    @staticmethod
    def open(path: str, twin: bool) -> "LibraryFile":
        import hashlib

        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return LibraryFile(path, fd, digest.hexdigest(), _stamp(fd, path), twin)

    def options(self) -> dict[str, Any]:
        return {"operator_lib": f"/proc/self/fd/{self.fd}", "twin": self.twin, "library_path": self.path,
                "library_sha256": self.sha256}

    def changed(self) -> str:
        """"" while the file on disk holds the bytes hashed at the start (a rebuild by a concurrent run that
        replaced it with the same bytes is no change); else why the row cannot be evidence."""
        stamp = _stamp(self.fd, self.path)
        if stamp == self.stamp:
            return ""
        if _sha256_of(self.path) == self.sha256 and _sha256_of(f"/proc/self/fd/{self.fd}") == self.sha256:
            self.stamp = stamp
            return ""
        return (f"the operator library {self.path} changed on disk during the run (sha256 {self.sha256[:16]}... at "
                "the start): rows after the change are not evidence of the library the report names")


def _sha256_of(path: str) -> str:
    import hashlib

    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return ""


def _stamp(fd: int, path: str) -> tuple:
    opened = os.fstat(fd)
    try:
        now = os.stat(path)
        on_disk = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns)
    except OSError:
        on_disk = None
    return opened.st_size, opened.st_mtime_ns, on_disk


_LIBRARIES: dict[tuple[str, bool], LibraryFile] = {}


def _library_of(settings: Settings) -> LibraryFile | None:
    """The cpu backend's library, opened once per run (the twin is built first); None for other backends and
    services, which open their own."""
    if settings.backend != "cpu" or getattr(settings, "service", None) is not None:
        return None
    try:
        fence.library()  # built here: the confined worker may not write the build directory
    except BuildError:
        pass  # the worker says why (BackendUnavailable)
    given = settings.backend_options.get("operator_lib")
    if given and str(given).startswith("/proc/self/fd/"):
        return None
    if given:
        path, twin = str(Path(given).resolve()), False
    else:
        from harness.backends.build import BuildError, build_twin

        try:
            path, twin = str(build_twin()), True
        except BuildError:
            return None  # the worker says why (BackendUnavailable)
    key = (path, twin)
    if key not in _LIBRARIES:
        try:
            _LIBRARIES[key] = LibraryFile.open(path, twin)
        except OSError:
            return None  # the worker says why
    return _LIBRARIES[key]


def library_provenance(settings: Settings) -> dict[str, str]:
    """The library's path and sha256 as the harness read them (what report.json records)."""
    lib = _library_of(settings)
    return {} if lib is None else {"library": lib.path, "library_sha256": lib.sha256}


def _python_path() -> str:
    """The worker imports this harness whatever its working directory (the unprivileged worker starts in /)."""
    root = str(Path(__file__).resolve().parents[2])
    rest = os.environ.get("PYTHONPATH", "")
    return f"{root}:{rest}" if rest else root


def _fork() -> int:
    """os.fork, with the parent's objects frozen in the child: its cyclic garbage (say a sqlite connection of an
    earlier History, or a test's) must never be collected there, where its finalizer would close the parent's
    database from the worker, after the worker closed or reused the descriptors (seen: a worker SIGSEGV in
    libsqlite3 under the pytest plugin). No collection may run between the fork and the freeze either. Never
    while a row is planned in a thread (_Ahead): seen, fork() hung in the C library's fork handlers while the
    planning thread was inside a BLAS call."""
    for thread in _Ahead.running():
        thread.join()
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


def _checked(case: Case, payload: Any, depth: int = 0) -> Record:
    """A record from a service's worker (harness ab), rebuilt from this case's own record: only the keys a
    service may set, each of its type; _Garbage otherwise."""
    if not isinstance(payload, dict) or payload.get("verdict") not in VERDICTS \
            or (payload.get("case_name"), payload.get("table"), payload.get("line")) != (case.name, case.table,
                                                                                         case.line):
        raise _Garbage("a record that is not this row's")
    rec = case.new_record()
    kinds = {"verdict": str, "status": (int, type(None)), "reason": str, "timing": (dict, type(None)),
             "flops": (int, float), "duration_s": (int, float)}
    for key, kind in kinds.items():
        if key in payload:
            if not isinstance(payload[key], kind) or isinstance(payload[key], bool):
                raise _Garbage(f"a record whose {key!r} is a {type(payload[key]).__name__}")
            rec[key] = payload[key]
    if rec["timing"] is not None:
        from harness.run.messages import checked_timing as _timing

        try:
            _timing(rec["timing"])
        except Malformed as exc:
            raise _Garbage(str(exc)) from None
    if "pair" in payload:
        pair = payload["pair"]
        if depth or not isinstance(pair, list) or len(pair) != 2:
            raise _Garbage("a record whose 'pair' is not two records")
        rec["pair"] = [_checked(case, side, depth + 1) for side in pair]
    return rec


class StopSignals:
    """SIGINT/SIGTERM/SIGHUP handlers for the length of a run: remember the signal; the loop acts on it (and report
    writing, which must not be cut in half, simply finishes)."""

    def __init__(self) -> None:
        self.signum = 0
        self._old: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
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


def _run_phase(queues: dict[int, Any], settings: Settings, slots: list[int],
               on_record: Callable[[Record], None], stop: StopSignals, settle: Case | None = None,
               on_start: Callable[[Case], None] = lambda case: None, tally: dict | None = None,
               goldens: dict | None = None, beside: _Beside | None = None,
               ahead_bytes: float = AHEAD_BYTES, spares: _Spares | None = None) -> None:
    """Run the queued cases on one worker per entry of `slots` (a device id each: a device listed twice gets two
    workers); a worker on device d takes its rows from queues[d] (one deque shared by every device spreads the rows
    over all of them). With `settle`, every fresh worker runs that case first and its record is dropped, unless
    the row failed (FAIL, ERROR, CRASH, TIMEOUT): then that is its verdict, it leaves the queues and no later
    worker settles (a failed row replaces its worker, which would settle again, forever). `on_start` hears of
    each row handed to a worker (the progress display's row being timed). A queue is a deque or a _Claims (rows
    shared with another judge process); `tally` gets harness.store.job's counts, `goldens` keeps perf rows' goldens
    between rounds, `ahead_bytes` bounds planning a row ahead (_Worker.plan_ahead), the
    records of a `beside` judge process are passed on while this phase runs, and `spares` (kept between the
    phases of a perf run) gives a slot a worker started early."""
    pool: list[_Worker] = []
    settling = [settle]

    def emit(w: _Worker, record: Record | None) -> None:
        if record is None:
            return
        record["device"] = w.device
        if w.settling:
            w.settling = False
            if record["verdict"] not in FAILING:
                return
            case, settling[0] = settling[0], None
            for queue in queues.values():
                while case in queue:
                    queue.remove(case)
            record["reason"] += " (while settling a fresh worker before the timed rows)"
        on_record(record)

    def finish(w: _Worker, record: Record | None) -> None:
        pool.remove(w)
        if w.status is None:
            w.kill()
        else:
            w.release()
        emit(w, record)

    def pending() -> bool:
        return any(queues.values())

    def ahead(w: _Worker) -> None:
        """Plan the device's next row while `w` runs one (from its job on: the checked call's time too)."""
        if settings.cpus and w.judge is not None and w.judge.done is None and queues[w.device]:
            w.plan_ahead(queues[w.device][0])

    def feed(w: _Worker, case: Case) -> None:
        """Hand `case` to `w`; rows that need no call come back at once, and the worker takes the next."""
        if not w.settling:
            on_start(case)
        emit(w, w.submit(case))
        while w.case is None and queues[w.device] and not w.settling and w.info is not None:
            case = queues[w.device].popleft()
            on_start(case)
            emit(w, w.submit(case))
        ahead(w)

    try:
        while (pending() or any(w.case for w in pool)) and not stop.signum:
            for w in [w for w in pool if w.case is None and (w.dead() or w.replace)]:
                if not w.replace:  # died after its row was recorded
                    print(f"\nwarning: the worker that ran {w.last} died after that row finished "
                          f"({w.how_it_died()}): the operator left something running", file=sys.stderr, flush=True)
                finish(w, None)
            for w in pool:
                if w.case is None and queues[w.device]:
                    feed(w, queues[w.device].popleft())
            for device in _free_slots(slots, [w.device for w in pool]):
                if queues[device]:
                    w = (spares.take(settings, device) if spares else None) or _Worker(settings, device)
                    w.tally, w.goldens, w.ahead_bytes = tally, goldens, ahead_bytes
                    pool.append(w)
                    w.settling = settling[0] is not None
                    feed(w, settling[0] if w.settling else queues[device].popleft())
            busy = [w for w in pool if w.case is not None]
            if spares is not None:
                for w in busy:
                    if w.info is not None:
                        spares.start(w.device)
            ready = wait([x for w in busy for x in w.waitables()] + (beside.waitables() if beside else [])
                         + (spares.waitables() if spares else []), timeout=0.2)
            if beside is not None and beside.conn in ready:
                beside.pump()
            if spares is not None:
                spares.pump(ready)
            now = time.monotonic()
            for w in busy:
                try:
                    if w.conn in ready and (message := w.receive()) is not None:
                        emit(w, w.handle(*message))
                        ahead(w)
                        if w.replace and w.case is None:
                            finish(w, None)
                    elif w.dead():
                        finish(w, w.ended("CRASH", f"the operator killed its worker process ({w.how_it_died()})"))
                    elif now - w.since > settings.timeout_s + (0.0 if w.started else STARTUP_GRACE_S):
                        partial = f" ({w.frames.partial} had arrived)" if w.frames.partial else ""
                        finish(w, w.ended("TIMEOUT", f"no result within the per-row limit of "
                                                     f"{settings.timeout_s:g} s{partial}; worker killed",
                                          duration_s=settings.timeout_s))
                except _Garbage as exc:
                    if w.case is None:  # garbage after its row ended: the worker goes, the row stays as judged
                        finish(w, None)
                    elif w.status is not None:  # the pipe broke because the worker died: that is the story
                        finish(w, w.ended("CRASH", f"the operator killed its worker process ({w.how_it_died()})"))
                    elif exc.malformed:
                        finish(w, w.ended("ERROR", f"the worker sent {exc}; the operator wrote to descriptors it "
                                                   "does not own or changed the worker"))
                    else:
                        finish(w, w.ended("CRASH", f"the worker sent protocol garbage ({exc}); the operator wrote "
                                                   "to descriptors it does not own or changed the worker"))
    finally:
        for w in pool:
            if stop.signum or w.case is not None:
                w.kill()
            else:
                w.close()
        if spares is not None and stop.signum:
            spares.kill()
    if stop.signum:
        raise Interrupted(stop.signum)


def ahead_bytes(cases: list[Case], memory_cap: int) -> float:
    """The bound of planning a row ahead in a phase of `cases`: AHEAD_BYTES, or the largest footprint of a row
    within `memory_cap` (a row over it is refused unplanned) where that is more, so the two rows held at once
    never need more memory than that row alone. On the main job 1 GiB left 11 of its 405 pairs of consecutive
    perf rows planned one after the other, 3-5 s of the judge's planning (golden) per large row with the timed
    core idle."""
    return max([AHEAD_BYTES, *(f for f in map(_footprint, cases) if f <= memory_cap)])


def _footprint(case: Case | None) -> float:
    """A row's estimated harness footprint (harness.run.memory); infinite for one that cannot be planned."""
    try:
        if case is not None and case.args is not None and not case.skip and not case.errors:
            return footprint_bytes(case)
    except (ValueError, OverflowError, AttributeError, TypeError):
        pass
    return float("inf")


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
        on_start: Callable[[Case], None] = lambda case: None) -> dict[str, Any]:
    """Precision phase in parallel over every device, then the perf phase (one row per device at a time, devices in
    parallel); on the cpu backend with two workers or more on two cores or more, the precision rows run beside
    the perf phase instead (_beside_allowed). Records are handed out as they finish, each naming its device, and
    `on_start` hears of each row handed to a worker. Returns the run's tally (harness.store.job). Raises Interrupted
    (after killing every worker) when SIGINT or SIGTERM arrives."""
    precision = [c for c in cases if not c.is_perf]
    perf = [c for c in cases if c.is_perf]
    devices = _devices_of(settings)
    slots = devices * max(1, settings.workers) if len(devices) == 1 else devices
    tally = job.new_tally()
    with _subreaper(), StopSignals() as stop:
        if precision and perf and _beside_allowed(settings, devices):
            _run_beside(precision, perf, settings, devices[0], on_record, stop, on_start, tally)
            return job.close(tally)
        if precision:
            shared = deque(precision)
            with job.phase(tally, "precision"):
                _run_phase({d: shared for d in devices}, settings, slots, on_record, stop, on_start=on_start,
                           tally=tally)
        if perf:
            with job.phase(tally, "perf"):
                _run_perf(perf, settings, devices, on_record, stop, on_start, tally)
    return job.close(tally)


def _beside_allowed(settings: Settings, devices: list[int]) -> bool:
    """Whether the precision rows may run beside the perf phase: on the cpu backend, where a "device" is emulated
    in the worker's host threads and what timing must not share is a core, not a device, so a timed worker pinned
    to cores of its own shares nothing with the precision rows on the others (docs/architecture.md, "Where a run's
    work goes"); with workers >= 2 (the run may use more than one core) on one device, and at least two cores to
    split."""
    return (settings.backend == "cpu" and len(devices) == 1 and settings.workers >= 2 and settings.timing is not None
            and getattr(settings, "service", None) is None and len(os.sched_getaffinity(0)) >= 2)


def _run_beside(precision: list[Case], perf: list[Case], settings: Settings, device: int,
                on_record: Callable[[Record], None], stop: StopSignals, on_start: Callable[[Case], None],
                tally: dict) -> None:
    """The precision rows in a judge process beside this one (_Beside) on the first half of the cores, while this
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

    beside = _Beside(_Claims(precision, bounds, front=True), replace(settings, workers=1), device, judge_cpus, stop,
                     precision_record)
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, judge_cpus)  # this judge too: only the timed worker runs on the timed cores
    try:
        with job.phase(tally, "perf"):
            _run_perf(perf, settings, [device], on_record, stop, on_start, tally, beside, timed_cpus)
        os.sched_setaffinity(0, mine)  # nothing is timed now: the precision rows left take any core
        rest = _Claims(precision, bounds, front=False)
        _run_phase({device: rest}, settings, [device], precision_record, stop, tally=tally, beside=beside)
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
        _run_phase({device: deque(lost)}, settings, [device], on_record, stop, tally=tally)


class _Claims:
    """Precision rows shared by two judge processes (a queue for _run_phase): one takes them from the front, the
    other from the back, each row once. Truth claims the next row, so a true queue always has one to pop."""

    def __init__(self, cases: list[Case], bounds: Any, front: bool):
        self.cases, self.bounds, self.front = cases, bounds, front
        self.held: Case | None = None

    def __bool__(self) -> bool:
        if self.held is None:
            with self.bounds.get_lock():
                low, high = self.bounds[0], self.bounds[1]
                if low < high:
                    index = low if self.front else high - 1
                    self.bounds[0 if self.front else 1] = low + 1 if self.front else high - 1
                    self.held = self.cases[index]
        return self.held is not None

    def popleft(self) -> Case:
        if not self:
            raise IndexError("no rows left")
        case, self.held = self.held, None
        return case


class _Beside:
    """A judge process beside this one, forked from it (trusted: it runs the harness's own code and never loads
    the operator library) and pinned to `cpus` with its worker: it runs the precision rows it claims and sends
    each record over a pipe, as JSON; `pump` hands them to `on_record` here, the one process that writes files."""

    def __init__(self, claims: _Claims, settings: Settings, device: int, cpus: set[int], stop: StopSignals,
                 on_record: Callable[[Record], None]):
        self.on_record, self.reported, self.tally, self.eof = on_record, set(), {}, False
        self.conn, child = mp.Pipe(duplex=False)
        self.pid = _fork()
        if self.pid == 0:
            self.conn.close()
            _beside_main(claims, settings, device, cpus, stop, child)
        child.close()
        _KEEP.add(self.pid)

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
        _KEEP.discard(self.pid)


def _beside_main(claims: _Claims, settings: Settings, device: int, cpus: set[int], stop: StopSignals,
                 conn: Any) -> NoReturn:
    """The body of the judge process beside: its rows on one worker, on `cpus`; never returns (os._exit, so
    nothing of the parent's, its buffered output or its database, is flushed or closed twice)."""
    code = 1
    try:
        os.sched_setaffinity(0, cpus)
        _LIVE.clear()
        _KEEP.clear()
        proctree.set_subreaper(True)
        tally = job.new_tally()

        def send(rec: Record) -> None:
            conn.send_bytes(codec.message(["record", rec]))

        try:
            _run_phase({device: claims}, settings, [device], send, stop, tally=tally)
        except Interrupted:  # Ctrl-C reached this process too: the parent ends the run
            os._exit(1)
        conn.send_bytes(json.dumps(["tally", {k: tally[k] for k in job.SUMMED}]).encode())
        code = 0
    except BaseException:  # noqa: BLE001 - the parent runs what this process took and did not report
        traceback.print_exc()
    finally:
        os._exit(code)


def run_in_order(cases: list[Case], settings: Settings, on_record: Callable[[Record], None]) -> None:
    """Each case once, in order, on one isolated worker, perf rows included and not in rounds: for callers that
    time nothing here (the pytest plugin runs one item at a time)."""
    device = _devices_of(settings)[0]
    with _subreaper(), StopSignals() as stop:
        _run_phase({device: deque(cases)}, settings, [device], on_record, stop)


@contextmanager
def _subreaper() -> Iterator[None]:
    """While workers run, orphans of a dead worker re-parent to the harness, where _Worker.kill finds them, and
    the harness is not dumpable. Fault-note directories a run killed from outside left are removed first."""
    fence.sweep()
    _KEEP.update(proctree.children(os.getpid()))
    was = proctree.set_subreaper(True)
    dumpable = proctree.set_dumpable(False)  # a worker of our uid cannot open our /proc/<pid>/fd or mem
    try:
        yield
    finally:
        proctree.set_dumpable(dumpable)
        proctree.set_subreaper(was)
        _KEEP.clear()


def _run_perf(perf: list[Case], settings: Settings, devices: list[int], on_record: Callable[[Record], None],
              stop: StopSignals, on_start: Callable[[Case], None] = lambda case: None, tally: dict | None = None,
              beside: _Beside | None = None, cpus: set[int] | None = None) -> None:
    """Perf rows in up to `timing.rounds` rounds, each round a fresh worker process (like pyperf), rounds in table
    order so slow machine drift spreads over every row. A row stops early once it has spent its time budget
    (harness.perf.timing.more_rounds: three rounds while a round fits the row's cap, one when a single round does
    not). Its record goes out after its last round, rounds merged and judged once
    (harness.perf.verdict.merge_round_records); a row that fails, crashes or is not timed leaves at once. Each row keeps
    one device for all its rounds (rows dealt over the devices in table order), and each device runs one row at a
    time: rows never share a device, and the precision phase has ended before, or runs `beside` on other cores
    than `cpus`, which the timed workers are pinned to. Each row's golden is computed once and kept for its later
    rounds (the judge plans every round's buffers from the row's seed: the same inputs)."""
    from harness.perf.verdict import merge_round_records, round_decides
    from harness.perf.timing import more_rounds

    config = settings.timing
    rounds = config.rounds if config is not None else 1
    per_round = replace(settings, timing=config.per_round(), timed_rows=True) if config is not None else settings
    if cpus:
        per_round = replace(per_round, cpus=sorted(cpus))
    goldens: dict = {}
    ahead = ahead_bytes(perf, settings.memory_cap)
    by_id = {c.id: c for c in perf}
    taken: dict[str, list[Record]] = {c.id: [] for c in perf}

    def finish(key: str) -> None:
        goldens.pop(key, None)
        on_record(merge_round_records(taken.pop(key), by_id[key], config, settings.baselines, settings.hardware))

    home = {c.id: devices[i % len(devices)] for i, c in enumerate(perf)}

    def spent(key: str) -> float:
        return sum(rec.get("duration_s") or 0.0 for rec in taken[key])

    def last_round(key: str) -> bool:
        """Whether the rounds the row has run are all it gets (harness.perf.timing.more_rounds)."""
        return config is None or not more_rounds(len(taken[key]), spent(key), config)

    def collect(rec: Record) -> None:
        key = f"{Path(rec['table']).name}::{rec['case_name']}"
        if key not in taken:  # a row already finished (its settling pass did not end)
            return
        taken[key].append(rec)
        # decided as soon as its round ends, not at the round's end: its golden is no longer held while the
        # rows after it keep theirs (KEPT_GOLDENS_BYTES), and its record goes out at once
        if round_decides(rec) or last_round(key):
            finish(key)
    todo = list(perf)
    spares = _Spares(per_round, tally, goldens, ahead) if _Spares.allowed(per_round) else None
    try:
        for r in range(rounds):
            if not todo:
                break
            # A fresh process's first row pays for page faults, thread start-up and caches (measured on the twin:
            # the first row of a round ran ~20 % slow); each round's worker opens with the cheapest row once, untimed.
            settle = min(todo, key=lambda c: (spent(c.id), ops.get(c.op).flops(c.args)
                                              if c.args is not None and ops.get(c.op) else 0))
            queues = {d: deque(c for c in todo if home[c.id] == d) for d in devices}
            _run_phase(queues, per_round, devices, collect, stop, settle=settle, on_start=on_start, tally=tally,
                       goldens=goldens, beside=beside, ahead_bytes=ahead, spares=spares)
            for case in [c for c in todo if c.id in taken]:  # rows this round brought no record
                if r == rounds - 1 or last_round(case.id):
                    finish(case.id)
            todo = [c for c in todo if c.id in taken]
    finally:
        if spares is not None:
            spares.kill()


def check_backend(settings: Settings) -> dict[str, Any]:
    """Load the library, create a handle and destroy it in a probe worker, within PROBE_LIMIT_S: a library that
    crashes, exits or hangs doing so is one BackendUnavailable line (exit 3), and the harness never loads it.
    SIGINT/SIGTERM meanwhile end the probe (its worker and note directory gone) and raise Interrupted."""
    if settings.backend == "cpu" and not settings.backend_options.get("operator_lib"):
        ensure_twin()  # compiling is not loading: done here, so the probe's time limit is the library's alone
    limit = min(PROBE_LIMIT_S, max(settings.timeout_s, 5.0))
    with _subreaper(), StopSignals() as stop:
        return _probe(settings, limit, stop)


#: The reasons for running without bubblewrap already said on the console (ab and mutants probe several libraries).
_SAID: set[str] = set()


def _isolation(settings: Settings, layers: Any) -> dict[str, Any]:
    """The run's `isolation` (harness.run.bwrap.isolation) with the layers the probe worker says it applied to
    itself; said once on the console where a cpu run's workers fall back to those layers alone."""
    said = [str(x)[:200] for x in layers][:8] if isinstance(layers, list) else []
    isolation = bwrap.isolation(settings, said)
    if isolation["sandbox"] == "fallback" and settings.backend == "cpu" and isolation["reason"] not in _SAID:
        _SAID.add(isolation["reason"])
        print(f"note: workers run without bubblewrap ({isolation['reason']}); confined by: "
              f"{'; '.join(said) or 'nothing'}", file=sys.stderr, flush=True)
    return isolation


def ensure_twin() -> None:
    """Build the CPU twin if it is missing or stale (here, or on each Ray host before its first row)."""
    from harness.backends.build import BuildError, build_twin

    try:
        build_twin()
    except BuildError as exc:
        raise BackendUnavailable(f"cpu backend: {exc}") from exc


def _probe(settings: Settings, limit: float, stop: StopSignals) -> dict[str, Any]:
    w = _Worker(settings)
    stage = "loading the library and creating a handle"
    try:
        deadline = time.monotonic() + limit + STARTUP_GRACE_S
        w.conn.send(None)  # after "ready": close the backend (aclblasDestroy) and report "closed"
        info: dict = {}
        while True:
            if stop.signum:
                raise Interrupted(stop.signum)
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
                message = w.receive()
                if message is None:
                    continue
                kind, payload = message
            except _Garbage as exc:
                why = w.how_it_died() if w.status is not None else f"protocol garbage: {exc}"
                raise BackendUnavailable(f"{settings.backend} backend: the operator library killed the probe "
                                         f"worker while {stage} ({why})") from None
            if kind == "started":
                deadline = time.monotonic() + limit
            elif kind == "unavailable":
                raise BackendUnavailable(str(payload)[:500])
            elif kind == "ready":
                info = dict(payload) if isinstance(payload, dict) else {}
                info.pop("judge", None)
                info.update(library_provenance(settings))  # as the harness read the file, not as the worker says
                info["isolation"] = _isolation(settings, info.get("confinement"))
                stage = "destroying its handle (aclblasDestroy)"
            elif kind == "closed":
                return info
    finally:
        w.kill()
