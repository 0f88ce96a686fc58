"""The harness's side of a worker's process: forking without the parent's garbage, pidfds, the signals that stop
a run, and the subreaper state while workers run (harness/run/handle.py holds the handle on one worker)."""
from __future__ import annotations

import gc
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.backends import fence
from harness.run import proctree, worker
from harness.run.ahead import Ahead

#: Live worker pids, and the harness's children that are none of ours (left alone when orphans are swept).
LIVE: set[int] = set()
KEEP: set[int] = set()


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived: dispatching stopped and the rows in flight were killed (not recorded). A
    KeyboardInterrupt, so commands without reports of their own (mutants) end like any Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def python_path() -> str:
    """The worker imports this harness whatever its working directory (the unprivileged worker starts in /)."""
    root = str(Path(__file__).resolve().parents[2])
    rest = os.environ.get("PYTHONPATH", "")
    return f"{root}:{rest}" if rest else root


def worker_env() -> tuple[tuple[str, str], ...]:
    """What a worker's (or zygote's) interpreter starts with beyond the harness's environment: PYTHONPATH
    (python_path) and, unless the user set it, OPENBLAS_NUM_THREADS=1 for its start only. numpy's OpenBLAS starts
    a thread per core when imported, and they spin for a while (0.08 s of CPU per interpreter here, 0.26 -> 0.18 s
    for the worker's imports), though a worker computes no product; the interpreter drops the variable again
    (worker.drop_start_env) before any operator library is loaded, so the operator sees the user's environment."""
    env = [("PYTHONPATH", python_path())]
    if "OPENBLAS_NUM_THREADS" not in os.environ:
        env += [("OPENBLAS_NUM_THREADS", "1"), (worker.START_ONLY_VARIABLE, "OPENBLAS_NUM_THREADS")]
    return tuple(env)


def fork() -> int:
    """os.fork, with the parent's objects frozen in the child: its cyclic garbage (say a sqlite connection of an
    earlier History, or a test's) must never be collected there, where its finalizer would close the parent's
    database from the worker, after the worker closed or reused the descriptors (seen: a worker SIGSEGV in
    libsqlite3 under the pytest plugin). No collection may run between the fork and the freeze either. Never
    while a row is planned in a thread (Ahead): seen, fork() hung in the C library's fork handlers while the
    planning thread was inside a BLAS call."""
    for thread in Ahead.running():
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


def pidfd_open(pid: int) -> int:
    """A descriptor that becomes readable when `pid` ends (Linux >= 5.3); -1 where the kernel has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


def oom_note() -> str:
    """What the cgroup says about out-of-memory kills, where it can tell."""
    try:
        cgroup = Path("/proc/self/cgroup").read_text().strip().splitlines()[-1].split(":", 2)[2]
        events = Path(f"/sys/fs/cgroup{cgroup}/memory.events").read_text()
    except (OSError, IndexError):
        return "check the kernel log"
    kills = dict(line.split() for line in events.splitlines() if line.strip()).get("oom_kill", "?")
    return f"this cgroup has seen {kills} OOM kill(s); check the kernel log"


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

@contextmanager
def subreaper() -> Iterator[None]:
    """While workers run, orphans of a dead worker re-parent to the harness, where Worker.kill finds them, and
    the harness is not dumpable. Fault-note directories a run killed from outside left are removed first."""
    fence.sweep()
    KEEP.update(proctree.children(os.getpid()))
    was = proctree.set_subreaper(True)
    dumpable = proctree.set_dumpable(False)  # a worker of our uid cannot open our /proc/<pid>/fd or mem
    try:
        yield
    finally:
        proctree.set_dumpable(dumpable)
        proctree.set_subreaper(was)
        KEEP.clear()
