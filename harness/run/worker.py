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

from harness.model import codec
from harness.run import proctree

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
    nice: int
    affinity: set


def snapshot() -> ProcessState:
    mask = os.umask(0)
    os.umask(mask)
    return ProcessState(os.getcwd(), mask, _environ(), {s: _sigaction(s) for s in _SIGNALS},
                        signal.pthread_sigmask(signal.SIG_BLOCK, []),
                        {name: resource.getrlimit(res) for name, res in _LIMITS.items()},
                        os.getpriority(os.PRIO_PROCESS, 0), os.sched_getaffinity(0))


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
    if (nice := os.getpriority(os.PRIO_PROCESS, 0)) != before.nice:
        try:
            os.setpriority(os.PRIO_PROCESS, 0, before.nice)
        except OSError:
            pass  # a lower nice value needs a privilege: the worker is replaced after this row
        changed.append(f"changed its scheduling priority (nice {before.nice} -> {nice})")
    if (cpus := os.sched_getaffinity(0)) != before.affinity:
        try:
            os.sched_setaffinity(0, before.affinity)
        except OSError:
            pass
        changed.append(f"changed its CPU affinity to {sorted(cpus)}")
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


def own_pid() -> int:
    """This process's pid as /proc (the harness's namespace) names it: in a PID namespace os.getpid() is 1 or 2,
    and /proc/1 would be the machine's init."""
    try:
        return int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return os.getpid()


def _die_with_tree() -> NoReturn:
    proctree.kill_descendants(own_pid())
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
    conn.send_bytes(codec.message([kind, payload]))


# -- the warden: the trusted processes between the harness and the worker ----------------------------------------
_CLONE_NEWPID = 0x20000000


@dataclass(frozen=True)
class Launch:
    """How the warden starts a worker: descriptors it keeps, the user it becomes, its environment."""

    conn: int
    lifeline: int
    capture: int                       # the worker's stdout and stderr (the runner reads it per row)
    keep: tuple[int, ...] = ()          # e.g. the operator library, opened once by the harness
    env: tuple[tuple[str, str], ...] = ()
    bwrap: str = ""                     # the bwrap binary that confines the worker (harness.run.bwrap); "" for none
    zygote: int = -1                    # the run's zygote's control socket: the worker is forked there instead
    notes: str = ""                     # with `zygote`: the zygote's note directory (the worker's is one inside)
    module: str = "harness.run.worker"  # what the interpreter runs (harness.run.zygote for a zygote)


def warden(launch: Launch, parent: int) -> NoReturn:
    """Body of the process the runner forks for each worker (it runs no operator code). In a new PID namespace
    where the kernel allows one, its child is the namespace's init, and the worker that init's child: when init
    ends, the kernel kills everything left in the namespace, however the operator's processes detached themselves.
    Under bwrap, bwrap makes the namespaces (and their init) itself and the warden's child runs bwrap. The warden
    watches the harness's lifeline (end of file: kill the namespace) and ends as the worker ended."""
    code = BROKEN
    try:
        os.setpgid(0, 0)
        proctree.set_parent_death_signal(signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _isolate_descriptors({launch.conn, launch.lifeline, launch.capture, *launch.keep, launch.zygote})
        if launch.zygote >= 0:
            _from_zygote(launch)
        from harness.backends import fence

        notes = fence.worker_prefix(os.getpid(), parent)
        os.makedirs(notes, mode=0o700, exist_ok=True)  # the one place the confined worker may write
        os.environ[fence.PREFIX_VARIABLE] = notes
        status_r, status_w = os.pipe()
        namespaced = not launch.bwrap and _libc.unshare(_CLONE_NEWPID) == 0
        child = os.fork()
        if child == 0:
            os.close(status_r)
            if namespaced:  # the namespace's init: start the worker, reap orphans, tell the warden how it ended
                proctree.set_parent_death_signal(signal.SIGKILL)
                worker = os.fork()
                if worker == 0:
                    _become_worker(launch)
                os.write(status_w, _await(worker, launch.lifeline).to_bytes(4, "little", signed=True))
                os._exit(0)
            _become_worker(launch, notes)
        os.close(status_w)
        status = _await(child, launch.lifeline)
        if launch.bwrap:
            from harness.run import bwrap

            status = bwrap.exit_status(status)
        told = os.read(status_r, 4)
        _end_as(int.from_bytes(told, "little", signed=True) if len(told) == 4 else status)
    except BaseException:  # noqa: BLE001 - nothing may unwind into the harness's code in this process
        pass
    os._exit(code)


def _from_zygote(launch: Launch) -> NoReturn:
    """A warden whose worker the run's zygote forks (harness.run.zygote): it hands the zygote the worker's
    descriptors and a status channel, then ends as the worker ended (the status the zygote sends back), or as a
    broken worker when the zygote went away. Its own end (killed by the harness, or the harness gone: the lifeline)
    closes the channel, on which the zygote kills the worker."""
    import select
    import socket

    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    request = {"keep": list(launch.keep), "notes": f"{launch.notes}x{os.getpid()}/",
               "cpus": sorted(os.sched_getaffinity(0))}
    socket.send_fds(socket.socket(fileno=launch.zygote), [json.dumps(request).encode()],
                    [launch.conn, launch.lifeline, launch.capture, theirs.fileno(), *launch.keep])
    theirs.close()
    for fd in (launch.conn, launch.capture, *launch.keep):
        os.close(fd)
    while True:
        ready, _, _ = select.select([mine, launch.lifeline], [], [])
        if launch.lifeline in ready:
            try:
                gone = not os.read(launch.lifeline, 1)
            except OSError:
                gone = True
            if gone:
                os._exit(BROKEN)
        if mine in ready:
            told = mine.recv(16)
            _end_as(int.from_bytes(told, "little", signed=True) if len(told) == 4 else BROKEN << 8)


def _await(pid: int, lifeline: int) -> int:
    """Wait for `pid` to end (its raw wait status); end of file on the lifeline first kills it."""
    import select

    watch = [os.pidfd_open(pid), lifeline]
    while True:
        ready, _, _ = select.select(watch, [], [])
        if lifeline in ready:
            try:
                gone = not os.read(lifeline, 1)
            except OSError:
                gone = True
            if gone:
                os.kill(pid, signal.SIGKILL)
                watch.remove(lifeline)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            while True:  # orphans re-parented to us (the namespace's init) are reaped, not left as zombies
                try:
                    if os.waitpid(-1, os.WNOHANG)[0] == 0:
                        break
                except ChildProcessError:
                    break
            return status


def _end_as(status: int) -> NoReturn:
    """End this process the way a wait status says its child ended (the runner reads the warden's status)."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        if signum not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(signum, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else BROKEN)


def _become_worker(launch: Launch, notes: str = "") -> NoReturn:
    """In the worker-to-be: stdout/stderr into the capture file, then a fresh interpreter (nothing of the
    harness's memory, goldens included, survives the exec; the worker confines itself: harness.run.confine),
    inside bwrap when the launch names it (its parent is then bwrap's init: the parent check is left to bwrap's
    --die-with-parent)."""
    try:
        os.setpgid(0, 0)
        os.dup2(launch.capture, 1)
        os.dup2(launch.capture, 2)
        for fd in (launch.conn, launch.lifeline, *launch.keep):
            os.set_inheritable(fd, True)
        env = {**os.environ, **dict(launch.env)}
        argv = [sys.executable, "-m", launch.module, str(launch.conn), str(launch.lifeline),
                "0" if launch.bwrap else str(os.getppid()), ",".join(map(str, launch.keep))]
        if launch.bwrap:
            from harness.run import bwrap

            argv = bwrap.command(launch.bwrap, notes, argv)
        os.execve(argv[0], argv, env)
    finally:
        os._exit(BROKEN)


# -- the worker ----------------------------------------------------------------------------------------------------
#: Names (comma-separated) of the variables the harness set for this interpreter's start only
#: (harness.run.process.worker_env), dropped before any operator library is loaded.
START_ONLY_VARIABLE = "HARNESS_START_ONLY"


def drop_start_env() -> None:
    """Remove the variables the harness set for the interpreter's start (its imports are done): the operator's
    environment is the user's."""
    for name in os.environ.pop(START_ONLY_VARIABLE, "").split(","):
        if name:
            os.environ.pop(name, None)


def enter(conn: Connection, lifeline: int, parent: int, keep: tuple[int, ...] = ()) -> None:
    """First thing in a fresh worker: cut it loose from the harness's files and tie its life to the harness."""
    drop_start_env()
    faulthandler.disable()  # a crashing operator is reported as CRASH by the parent, not dumped here
    proctree.set_parent_death_signal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: _die_with_tree())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    if parent and os.getppid() != parent:
        os._exit(1)
    proctree.set_subreaper(True)
    _isolate_descriptors({1, 2, conn.fileno(), lifeline, *keep})
    threading.Thread(target=_watch_lifeline, args=(lifeline,), daemon=True).start()


class Rows:
    """The worker's usual service: one backend, each row's job run in the sandbox (what `harness run`, `harness
    baseline` and the pytest plugin ask for). Another service (`harness ab` times two libraries side by side)
    comes in `settings.service` with `open`, `run(case, settings) -> record` and `close`, and the same isolation."""

    def open(self, settings: Any) -> dict:
        from dataclasses import asdict

        from harness.backends import open_backend
        from harness.run.sandbox import BackendInfo

        self.backend = open_backend(settings.backend, **settings.backend_options)
        return {**self.backend.describe(), "judge": asdict(BackendInfo.of(self.backend))}

    def close(self) -> None:
        self.backend.close()


def serve(conn: Connection, settings: Any) -> None:
    """Open the service's backend(s), say "ready" with their description (and what loading the library did to
    the floating-point environment), then run rows until told to stop (None)."""
    from harness.run import fpenv
    from harness.backends import BackendUnavailable

    service = getattr(settings, "service", None) or Rows()
    _preload(service, settings)  # interpreter start-up (STARTUP_GRACE_S), not the library's time
    send(conn, "started", None)  # the interpreter is up: the library's time limits run from here
    layers = _confine(settings)
    env_before = fpenv.read()
    try:
        info = service.open(settings)
    except BackendUnavailable as exc:
        send(conn, "unavailable", str(exc))
        return
    loaded = fpenv.describe(env_before, fpenv.read())  # kept: it is how the library runs in any program
    baseline = snapshot()
    send(conn, "ready", {**info, "load_fpenv": loaded, "confinement": layers})
    while (job := conn.recv()) is not None:
        if isinstance(job, tuple) and job[:1] == (PIN,):
            _pin(job[1])
            baseline = snapshot()  # the cores it was started on are not an operator's change
            continue
        if isinstance(service, Rows):
            end = _run_job(conn, service.backend, job)
            send(conn, "end", {**end, "leftovers": _leftovers(baseline)})
        else:
            record = service.run(job, settings)
            _charge_leftovers(record, _leftovers(baseline))
            send(conn, "record", record)
    service.close()
    send(conn, "closed", None)


#: Sent before a spare worker's first row (harness.run.spares.Spares) as (PIN, cpus): the cores its rows run on.
#: It started up on the judge's cores, so that its imports never shared a core with a row being timed. A plain
#: tuple: this module runs as __main__ in the worker, so a class of it would not unpickle as itself.
PIN = "pin"


def _pin(cpus: tuple[int, ...]) -> None:
    """Every thread of this process onto `cpus` (sched_setaffinity(0) would move the calling thread only); the
    operator's threads, started by its calls later, inherit it."""
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:  # a thread that ended meanwhile
            pass


def _preload(service: Any, settings: Any) -> None:
    """What every row of the usual service imports, imported with the interpreter, before "started": otherwise a
    fresh worker's first row pays for it (numpy via the sandbox; the timing and statistics code for the perf
    phase's workers, each of which times one row: a spare takes their start-up off the timed core where they have
    cores of their own, harness.run.spares.Spares). Other workers (the probe, precision rows) do not import the
    timing code."""
    if not isinstance(service, Rows):
        return
    from harness.run import sandbox  # noqa: F401
    if getattr(settings, "timing", None) is not None and (getattr(settings, "cpus", None)
                                                          or getattr(settings, "timed_rows", False)):
        from harness.perf import stats, timing  # noqa: F401


def _confine(settings: Any) -> list[str]:
    """The worker confines itself before the library is loaded (harness.run.confine), on the cpu backend: device
    runtimes write logs and caches of their own (e.g. ~/ascend/log) that a write rule would have to know."""
    from harness.run import confine
    from harness.backends import fence

    if settings.backend != "cpu" or os.environ.get(confine.OFF_VARIABLE) == "1":
        return []
    notes = os.environ.get(fence.PREFIX_VARIABLE, "")
    return confine.apply([notes] if notes.endswith("/") else [])


def _run_job(conn: Connection, backend: Any, job: Any) -> dict:
    """One row in the sandbox, on the shared memory whose descriptor follows the job."""
    import mmap
    from multiprocessing import reduction

    from harness.run import sandbox

    fd = reduction.recv_handle(conn)

    def exchange(kind: str, payload: dict) -> Any:
        send(conn, kind, payload)
        return bool(conn.recv()) if kind in sandbox.ANSWERED else None

    try:
        with mmap.mmap(fd, job.size) as view:
            return sandbox.execute(job, backend, view, exchange, fd)
    except Exception as exc:  # noqa: BLE001 - a harness bug on this side ends the row as ERROR, with its reason
        import traceback

        where = traceback.extract_tb(exc.__traceback__)[-1]
        send(conn, "failed", f"harness error in the worker: {type(exc).__name__}: {str(exc)[:300]} "
                             f"({os.path.basename(where.filename)}:{where.lineno})")
        return {"late": [], "threads_left": 0, "peak_growth": None}
    finally:
        os.close(fd)


#: Set in a worker the run's zygote forked (harness.run.zygote): its parent's other children are other rows'
#: workers, and the zygote kills orphans itself.
FORKED = False


def _leftovers(baseline: ProcessState) -> list[str]:
    changed = restore(baseline)
    me = own_pid()
    processes = proctree.kill_descendants(me)
    # in a PID namespace an orphan that escaped our subreaper re-parents to the namespace's init, our parent
    parent = 0 if FORKED else proctree.parent_of(me)
    for pid in [p for p in proctree.children(parent) if p != me] if parent else []:
        processes += 1 + proctree.kill_descendants(pid)
        proctree.kill(pid)
    proctree.reap_children()
    if processes:
        changed.append(f"left {processes} process(es) running after it returned (killed)")
    return changed


def _charge_leftovers(record: dict, changed: list[str]) -> None:
    """What the operator left behind is its row's fault: a PASS becomes FAIL, any other verdict gets the note."""
    if not changed:
        return
    note = "the operator " + "; ".join(changed)
    if record["verdict"] == "PASS":
        record.update(verdict="FAIL", reason=note)
    else:
        record["reason"] = f"{record['reason']}; {note}" if record["reason"] else note


def main(argv: list[str]) -> NoReturn:
    """Entry of a worker: the settings arrive as the first message (pickled by the trusted parent)."""
    conn = Connection(int(argv[0]))
    lifeline, parent = int(argv[1]), int(argv[2])
    keep = tuple(int(x) for x in argv[3].split(",") if x) if len(argv) > 3 else ()
    code = 0
    try:
        enter(conn, lifeline, parent, keep)
        serve(conn, pickle.loads(conn.recv_bytes()))
    except BaseException:  # noqa: BLE001 - the traceback goes to the captured output the parent keeps
        code = BROKEN
        import traceback

        traceback.print_exc()
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
