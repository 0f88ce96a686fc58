"""The worker side of the trust boundary: the only kind of process that loads the operator library.

A worker owns nothing of the harness's but its pipe: every other descriptor is pointed at /dev/null and the history
database's shared memory (its -shm mapping) is unmapped before the library is loaded, so whatever the operator
writes to descriptors or memory cannot reach a file the harness keeps. It dies with the harness (parent-death
signal, and a lifeline pipe whose end of file makes it kill its whole tree), it is a subreaper so processes the
operator forks cannot slip away, and after every row it puts back what the operator changed in the process (timers,
signal dispositions and mask, working directory, environment, umask, resource limits) and charges the change to
that row. Records go back as JSON, never pickle: a worker is untrusted, and the parent must not execute what it sends.
"""
from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import pickle
import resource
import signal
import sys
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from harness import proctree

#: The largest message a worker may send (a perf row's samples are well under 1 MiB).
MAX_MESSAGE = 64 << 20
#: Exit status of a worker whose own code failed (its pipe closed under it, an interpreter error): EX_SOFTWARE.
BROKEN = 70
_SIGNALS = [s for s in range(1, signal.NSIG) if s not in (signal.SIGKILL, signal.SIGSTOP, 32, 33)]
_TIMERS = {"ITIMER_REAL": signal.ITIMER_REAL, "ITIMER_VIRTUAL": signal.ITIMER_VIRTUAL,
           "ITIMER_PROF": signal.ITIMER_PROF}
_LIMITS = {name: getattr(resource, name) for name in ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_FSIZE",
                                                      "RLIMIT_NOFILE", "RLIMIT_STACK", "RLIMIT_NPROC")}
_SIGACTION_BYTES = 256  # >= sizeof(struct sigaction) on every glibc target
_SA_RESTORER = 0x04000000

_libc = ctypes.CDLL(None, use_errno=True)
_libc.setenv.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]


def _sigaction(signum: int, new: bytes | None = None) -> bytes:
    """The raw `struct sigaction` of a signal (and install `new` first when given): what the C library sees,
    which Python's signal.getsignal does not know about when C code changed it."""
    old = ctypes.create_string_buffer(_SIGACTION_BYTES)
    new_buf = ctypes.create_string_buffer(new, _SIGACTION_BYTES) if new is not None else None
    _libc.sigaction(signum, new_buf, old)
    return old.raw


def _disposition(raw: bytes) -> tuple[bytes, int]:
    """The parts of a `struct sigaction` that matter: handler, the first 64 mask bits, flags without SA_RESTORER
    (glibc adds that flag itself, and leaves the rest of the 1024-bit mask as it found it)."""
    return raw[:16], int.from_bytes(raw[136:140], sys.byteorder) & ~_SA_RESTORER


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"SIGRTMIN+{signum - signal.SIGRTMIN}"


def _environ() -> list[bytes]:
    env = ctypes.POINTER(ctypes.c_char_p).in_dll(_libc, "environ")
    out, i = [], 0
    while env and env[i] is not None:
        out.append(env[i])
        i += 1
    return out


@dataclass
class ProcessState:
    """What an operator can change in its process that would leak into the next row."""

    cwd: str
    umask: int
    environ: list[bytes]
    sigactions: dict[int, bytes]
    sigmask: set
    limits: dict[str, tuple[int, int]]


def snapshot() -> ProcessState:
    mask = os.umask(0)
    os.umask(mask)
    return ProcessState(os.getcwd(), mask, _environ(), {s: _sigaction(s) for s in _SIGNALS},
                        signal.pthread_sigmask(signal.SIG_BLOCK, []),
                        {name: resource.getrlimit(res) for name, res in _LIMITS.items()})


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return "(a deleted directory)"


def restore(before: ProcessState) -> list[str]:
    """Put the process back as `before` describes it; one phrase per thing the operator had changed."""
    changed = []
    for name, which in _TIMERS.items():
        left, interval = signal.setitimer(which, 0)
        if left or interval:
            changed.append(f"left a timer armed ({name}, {left:.3g} s to go{' repeating' if interval else ''}: "
                           "alarm()/setitimer())")
    moved = [s for s in _SIGNALS if _disposition(_sigaction(s)) != _disposition(before.sigactions[s])]
    for s in moved:
        _sigaction(s, before.sigactions[s])
    if moved:
        changed.append(f"changed the disposition of {', '.join(map(signal_name, moved))}")
    mask = signal.pthread_sigmask(signal.SIG_SETMASK, before.sigmask)
    if mask != before.sigmask:
        changed.append(f"changed the signal mask ({', '.join(sorted(s.name for s in mask ^ before.sigmask))})")
    if (cwd := _cwd()) != before.cwd:
        os.chdir(before.cwd)
        changed.append(f"changed the working directory to {cwd}")
    if (mask_now := os.umask(before.umask)) != before.umask:
        changed.append(f"changed the umask from {before.umask:03o} to {mask_now:03o}")
    env = _environ()
    if env != before.environ:
        names = sorted({e.partition(b"=")[0].decode(errors="replace") for e in set(env) ^ set(before.environ)})
        _libc.clearenv()
        for entry in before.environ:
            key, _, value = entry.partition(b"=")
            _libc.setenv(key, value, 1)
        changed.append(f"changed the environment ({', '.join(names)})")
    for name, res in _LIMITS.items():
        now = resource.getrlimit(res)
        if now != before.limits[name]:
            try:
                resource.setrlimit(res, before.limits[name])
            except (ValueError, OSError):
                pass  # a lowered hard limit cannot be raised again: the next rows run under it, and say so here
            changed.append(f"changed {name} to {now}")
    return changed


def _isolate_descriptors(keep: set[int]) -> None:
    """Point every descriptor but `keep` at /dev/null (closing them would let a stale Python file object close a
    reused number later) and unmap the history database's shared memory inherited from the harness."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep and fd != devnull:
            try:
                os.dup2(devnull, fd, inheritable=False)
            except OSError:
                pass
    os.dup2(devnull, 0)
    os.close(devnull)
    _libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    with open("/proc/self/maps") as maps:
        spans = [line.split()[0] for line in maps if _is_sqlite_shm(line.split())]
    for span in spans:
        lo, hi = (int(x, 16) for x in span.split("-"))
        _libc.munmap(lo, hi - lo)


def _is_sqlite_shm(fields: list[str]) -> bool:
    """A shared mapping of an SQLite WAL index (`*-shm`): the history database's shared memory, which a stray
    write would corrupt. Other shared mappings stay (libffi maps its ctypes trampolines shared)."""
    return len(fields) >= 6 and fields[1][3] == "s" and fields[5].endswith("-shm")


def _die_with_tree() -> NoReturn:
    proctree.kill_descendants(os.getpid())
    os._exit(1)


def _watch_lifeline(fd: int) -> None:
    """End of file on the lifeline means the harness is gone (even by SIGKILL): take the operator's processes
    along. A thread, because the main thread may be stuck in an operator's busy loop (ctypes releases the GIL)."""
    while True:
        try:
            if not os.read(fd, 1):
                _die_with_tree()
        except InterruptedError:
            continue
        except OSError:
            _die_with_tree()


def send(conn: Connection, kind: str, payload: Any) -> None:
    conn.send_bytes(json.dumps([kind, payload], default=_plain).encode())


def _plain(obj: Any) -> Any:
    for attr in ("tolist", "item"):
        if hasattr(obj, attr):
            return getattr(obj, attr)()
    return str(obj)


def enter(conn: Connection, lifeline: int, parent: int) -> None:
    """First thing in a fresh worker: cut it loose from the harness's files and tie its life to the harness."""
    faulthandler.disable()  # a crashing operator is reported as CRASH by the parent, not dumped here
    os.setpgid(0, 0)
    proctree.set_parent_death_signal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: _die_with_tree())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    if os.getppid() != parent:
        os._exit(1)
    proctree.set_subreaper(True)
    _isolate_descriptors({1, 2, conn.fileno(), lifeline})
    threading.Thread(target=_watch_lifeline, args=(lifeline,), daemon=True).start()


class Rows:
    """The worker's usual service: one backend, each case run through the engine (what `harness run`, `harness
    baseline` and the pytest plugin ask for). Another service (`harness ab` times two libraries side by side) comes
    in `settings.service` with the same three methods, so it gets the same isolation."""

    def open(self, settings: Any) -> dict:
        from harness.backends import open_backend

        self.backend = open_backend(settings.backend, **settings.backend_options)
        return self.backend.describe()

    def run(self, case: Any, settings: Any) -> dict:
        from harness.engine import run_case

        return run_case(case, self.backend, use_poison=settings.poison, memory_cap=settings.memory_cap,
                        timing_config=settings.timing, baselines=settings.baselines)

    def close(self) -> None:
        self.backend.close()


def serve(conn: Connection, settings: Any) -> None:
    """Open the service's backend(s), say "ready" with their description, then run cases until told to stop
    (None)."""
    from harness.backends import BackendUnavailable

    service = getattr(settings, "service", None) or Rows()
    try:
        info = service.open(settings)
    except BackendUnavailable as exc:
        send(conn, "unavailable", str(exc))
        return
    baseline = snapshot()
    send(conn, "ready", info)
    while (case := conn.recv()) is not None:
        record = service.run(case, settings)
        _charge_leftovers(record, restore(baseline), proctree.kill_descendants(os.getpid()))
        proctree.reap_children()
        send(conn, "record", record)
    service.close()
    send(conn, "closed", None)


def _charge_leftovers(record: dict, changed: list[str], processes: int) -> None:
    """What the operator left behind is its row's fault: a PASS becomes FAIL, any other verdict gets the note."""
    if processes:
        changed.append(f"left {processes} process(es) running after it returned (killed)")
    if not changed:
        return
    note = "the operator " + "; ".join(changed)
    if record["verdict"] == "PASS":
        record.update(verdict="FAIL", reason=note)
    else:
        record["reason"] = f"{record['reason']}; {note}" if record["reason"] else note


def run_forked(conn: Connection, lifeline: int, parent: int, settings: Any) -> NoReturn:
    """Body of a worker forked from the harness (cpu backend: nothing device-side to inherit)."""
    code = 0
    try:
        enter(conn, lifeline, parent)
        serve(conn, settings)
    except BaseException:  # noqa: BLE001 - the parent reports a dead worker; nothing may unwind into its code
        code = BROKEN
    os._exit(code)


def exec_fresh(conn: Connection, lifeline: int, parent: int) -> NoReturn:
    """Body of a worker for device backends, whose runtimes cannot be used in a process forked from one that may
    have touched them: isolate, then replace this process by a fresh interpreter (`python -m harness.worker`)."""
    try:
        enter(conn, lifeline, parent)
        os.set_inheritable(conn.fileno(), True)
        os.set_inheritable(lifeline, True)
        os.execv(sys.executable, [sys.executable, "-m", "harness.worker", str(conn.fileno()), str(lifeline),
                                  str(parent)])
    finally:
        os._exit(BROKEN)


def main(argv: list[str]) -> NoReturn:
    """Entry of an exec'ed worker: the settings arrive as the first message (pickled by the trusted parent)."""
    conn = Connection(int(argv[0]))
    lifeline, parent = int(argv[1]), int(argv[2])
    code = 0
    try:
        enter(conn, lifeline, parent)
        serve(conn, pickle.loads(conn.recv_bytes()))
    except BaseException:  # noqa: BLE001
        code = BROKEN
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
