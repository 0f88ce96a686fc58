"""The harness's handle on one worker process and the row it runs (pyperf's manager side of a worker): starting
it under its warden, the messages it may send (read as untrusted input), its captured output, how it ended, and
killing it with everything below it. The worker only runs the operator: every row is planned and judged here."""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import pickle
import shutil
import signal
import time
from dataclasses import replace
from multiprocessing import reduction
from multiprocessing.connection import wait
from typing import Any

from harness.backends import fence
from harness.model import untrusted
from harness.run import bwrap, proctree, worker, zygotes
from harness.run.ahead import AHEAD_BYTES, Ahead, row_footprint
from harness.model.case import Case
from harness.run.credibility import Account
from harness.run.row_judge import RowJudge
from harness.run.messages import Malformed, backend_info
from harness.run.library import library_of
from harness.run.process import KEEP, LIVE, fork, oom_note, pidfd_open, worker_env
from harness.run.sandbox import BackendInfo
from harness.model.settings import Settings
from harness.store import job
from harness.model.record import FAILING, VERDICTS, Record

#: The most an orderly close (aclblasDestroy; no unload: the worker ends with _exit, which runs no destructor of the
#: library) may take before the worker is killed, again within the row's limit.
CLOSE_LIMIT_S = 5.0
#: A fresh worker's interpreter start-up (imports, under load) is not the first row's time.
STARTUP_GRACE_S = 30.0
#: What a worker may say.
KINDS = ("started", "ready", "unavailable", "record", "closed", "called", "differs", "sampling", "timed", "end",
          "failed")
#: A row's captured stdout/stderr keeps its first and last bytes (like pytest's captured output, bounded).
OUTPUT_HEAD = 16 << 10
OUTPUT_TAIL = 8 << 10


class Garbage(Exception):
    """A worker sent something that is not a message of the protocol (the row's CRASH), or a message whose fields
    are not what the protocol says (`malformed`: the row's ERROR, naming the field)."""

    def __init__(self, why: str, malformed: bool = False):
        super().__init__(why)
        self.malformed = malformed


class Worker:
    """One worker process and the row it runs (state: the warden's pid and pidfd, the pipe, the captured output,
    the backend it reported, the row's RowJudge). The worker only runs the operator: every row is planned and
    judged here, in the harness, from the harness's own copies."""

    def __init__(self, settings: Settings, device: int | None = None, spare: bool = False):
        self.given = settings  # what it was started with (a spare is handed only rows of these settings)
        self.tally: dict | None = None    # harness.store.job's counts (set by run_phase)
        self.goldens: dict | None = None  # perf rows' goldens kept between rounds (set by run_phase)
        self.ahead_bytes: float = AHEAD_BYTES  # the bound of plan_ahead (set by run_phase)
        self.forked = time.monotonic()
        self.device = int(settings.backend_options.get("device", 0)) if device is None else device
        if self.device != settings.backend_options.get("device", 0):
            settings = replace(settings, backend_options={**settings.backend_options, "device": self.device})
        self.library = library_of(settings)
        if self.library is not None:
            settings = replace(settings, backend_options={**settings.backend_options, **self.library.options()})
        self.settings = settings
        self.conn, child = mp.Pipe()
        self.frames = untrusted.Frames(self.conn.fileno(), worker.MAX_MESSAGE)
        life_r, self.lifeline = os.pipe()
        self.capture = os.memfd_create("harness-worker-output", os.MFD_CLOEXEC)
        capture_w = os.open(f"/proc/self/fd/{self.capture}", os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        zygote = zygotes.for_settings(settings) if self.library is not None else None
        launch = worker.Launch(conn=child.fileno(), lifeline=life_r, capture=capture_w,
                               keep=(self.library.fd,) if self.library is not None else (),
                               env=worker_env(),
                               bwrap=bwrap.choose(settings)[0] if self.library is not None and not zygote else "",
                               zygote=zygote.control.fileno() if zygote else -1, notes=zygote.notes if zygote else "")
        parent = os.getpid()
        # a spare starts up off its rows' cores (one may be timing a row) and moves there before its first row
        startup = os.sched_getaffinity(0) - set(settings.cpus) if spare else set(settings.cpus)
        self.pin = bool(spare and settings.cpus and startup)
        self.pid = fork()
        if self.pid == 0:
            self.conn.close()
            os.close(self.lifeline)
            if self.pin or (settings.cpus and not spare):
                os.sched_setaffinity(0, startup)
            worker.warden(launch, parent)
        child.close()
        os.close(life_r)
        os.close(capture_w)
        self.notes = f"{zygote.notes}x{self.pid}/" if zygote else ""  # a zygote's child's note directory
        # whose work the kernel's account of the timed calls counts: the worker's tree, or for a zygote's child
        # (not below its warden) the zygote's whole tree, which holds it beside idle spares
        self.accounted = zygote.pid if zygote else self.pid
        self.pidfd = pidfd_open(self.pid)
        LIVE.add(self.pid)
        # the worker runs calls, not verdicts: what only the judge uses (baselines) stays here
        self.conn.send_bytes(pickle.dumps(replace(settings, baselines=None)))
        self.case: Case | None = None
        self.judge: RowJudge | None = None
        self.ahead: Ahead | None = None  # the next row, planned while this one was timed
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
        #: the kernel's account of the worker as the judge's clock opened ("sampling"): proctree.cpu_account
        self.account_open: tuple[float, float | None] | None = None

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
        if self.ahead is None and self.rows and self.info is not None and row_footprint(self.case) \
                + row_footprint(case) <= self.ahead_bytes:
            self.ahead = Ahead(case, lambda: self._judge_for(case), self.judge_cpus)

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
        """The next message, None while it has not arrived whole (untrusted.Frames: never a wait); Garbage for
        anything that is not [kind, payload] JSON within the size limit, malformed where it nests too deep. Every
        string in it is made printable here, where the worker's text enters the harness."""
        try:
            frame = self.frames.pull()
            if frame is None:
                return None
            message = json.loads(frame)
        except (EOFError, OSError, ValueError, RecursionError) as exc:
            self.exited(0.5)  # the pipe ended because the worker died: then that is the story
            raise Garbage(f"{type(exc).__name__}: {untrusted.printable(str(exc)[:80])}") from exc
        if not isinstance(message, list) or len(message) != 2:
            raise Garbage(f"not a message: {untrusted.printable(str(message)[:40])!r}")
        kind, payload = message
        if kind not in KINDS:
            raise Garbage(f"unknown message {untrusted.printable(str(kind)[:40])!r}")
        try:
            return kind, untrusted.clean(payload, kind)
        except untrusted.Unfit as exc:
            raise Garbage(f"a malformed {kind!r} message: {exc}", malformed=True) from None

    def handle(self, kind: str, payload: Any) -> Record | None:
        """One message of the row in flight; the row's record when it has ended. Garbage when the message is
        not what the protocol allows at this point."""
        try:
            return self._handle(kind, payload)
        except (Malformed, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise Garbage(f"a malformed {kind!r} message: {str(exc)[:160]}", malformed=True) from None

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
            return self._row_done(service_record(case, payload))
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
        if kind == "sampling":  # the judge's clock opens as the samples are let begin, and the worker's CPU account
            answer = self.judge.on_sampling(payload)
            cpu, waited = proctree.cpu_account(self.accounted)
            self.account_open = cpu, None if waited is None else waited + proctree.waited_self()
            self._send(answer)
            return None
        if kind == "timed":
            account = self._account()
            self._timed_cores(True)
            self.judge.on_timed(payload, account)
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

    def _account(self) -> Account | None:
        """The kernel's account of the worker since the judge's clock opened: CPU seconds, seconds waited for a core
        (None where unknown), and the cores it may run on (its affinity)."""
        if self.account_open is None:
            return None
        cpu, waited = proctree.cpu_account(self.accounted)
        waited = None if waited is None else waited + proctree.waited_self()  # the judge's own waits are in its clock
        try:
            cores = len(os.sched_getaffinity(self.accounted))
        except OSError:
            cores = os.cpu_count() or 1
        was_cpu, was_waited = self.account_open
        return Account(cpu - was_cpu, None if waited is None or was_waited is None else waited - was_waited, cores)

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
        self.case, self.judge, self.account_open = None, None, None
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
        LIVE.discard(self.pid)
        # the tree dies from the top (under bwrap: warden, bwrap, bwrap's init, worker): a process whose parent
        # died first re-parents to the harness a moment later, where the sweep below must find it
        settled = time.monotonic() + 1.0
        while any(proctree.parent_of(p) not in (0, os.getpid()) for p in tree) and time.monotonic() < settled:
            time.sleep(0.005)
        for pid in proctree.children(os.getpid()):
            if pid not in LIVE and pid not in KEEP:
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
        if self.notes:
            shutil.rmtree(self.notes, ignore_errors=True)
        ahead, self.ahead = self.ahead, None
        for judge in (self.judge, ahead.take(set()) if ahead is not None else None):
            if judge is not None:
                judge.close()

    def close(self) -> None:
        """Orderly end: destroy the handle, exit; killed if it does not within a few seconds."""
        self._send(None)
        self.exited(min(CLOSE_LIMIT_S, self.settings.timeout_s))
        self.kill()

    def how_it_died(self) -> str:
        self.dead()
        code = self.status
        if code is None:
            return "it is still running"
        if code == -signal.SIGKILL and not self.killed:
            return ("signal SIGKILL, which the harness did not send: possibly the kernel's out-of-memory killer "
                    f"({oom_note()})")
        if code == worker.BROKEN:
            return f"exit code {code}: the worker itself failed, e.g. the operator closed or broke its pipe"
        if code >= 0:
            return f"exit code {code}"
        # what the cpu backend's guard pages saw, naming the buffer
        if self.notes:
            note = next((n for n in untrusted.read_notes(self.notes) if n), "")
        else:
            note = fence.fault_note(self.pid)
        return f"signal {worker.signal_name(-code)}" + (f": {note}" if note else "")


def service_record(case: Case, payload: Any, depth: int = 0) -> Record:
    """A record from a service's worker (harness ab), rebuilt from this case's own record: only the keys a
    service may set, each of its type; Garbage otherwise."""
    if not isinstance(payload, dict) or payload.get("verdict") not in VERDICTS \
            or (payload.get("case_name"), payload.get("table"), payload.get("line")) != (case.name, case.table,
                                                                                         case.line):
        raise Garbage("a record that is not this row's")
    rec = case.new_record()
    kinds = {"verdict": str, "status": (int, type(None)), "reason": str, "timing": (dict, type(None)),
             "flops": (int, float), "duration_s": (int, float)}
    for key, kind in kinds.items():
        if key in payload:
            if not isinstance(payload[key], kind) or isinstance(payload[key], bool):
                raise Garbage(f"a record whose {key!r} is a {type(payload[key]).__name__}")
            rec[key] = payload[key]
    if rec["timing"] is not None:
        from harness.run.messages import checked_timing as _timing

        try:
            _timing(rec["timing"])
        except Malformed as exc:
            raise Garbage(str(exc)) from None
    if "pair" in payload:
        pair = payload["pair"]
        if depth or not isinstance(pair, list) or len(pair) != 2:
            raise Garbage("a record whose 'pair' is not two records")
        rec["pair"] = [service_record(case, side, depth + 1) for side in pair]
    return rec
