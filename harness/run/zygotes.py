"""The harness's handle on a run's zygote (harness/run/zygote.py): started under bwrap like a worker, once per run
and bwrap binary, for the perf phase's workers (each times one row); killed when the run's workers end. Where it
cannot be used (no bwrap, another backend, a service's workers, HARNESS_NO_ZYGOTE=1) workers start as fresh
interpreters, as before."""
from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harness.backends import fence
from harness.run import bwrap, proctree, worker
from harness.run.process import KEEP, fork, subreaper, worker_env

#: Set to 1 to start every worker as a fresh interpreter (no zygote).
OFF_VARIABLE = "HARNESS_NO_ZYGOTE"


class Zygote:
    """One zygote process (state: its warden's pid, the control socket wardens send requests on, the lifeline)."""

    def __init__(self, binary: str):
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        life_r, self.lifeline = os.pipe()
        quiet = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
        launch = worker.Launch(conn=theirs.fileno(), lifeline=life_r, capture=quiet,
                               env=worker_env(), bwrap=binary, module="harness.run.zygote")
        parent = os.getpid()
        self.pid = fork()
        if self.pid == 0:
            self.control.close()
            os.close(self.lifeline)
            worker.warden(launch, parent)
        theirs.close()
        os.close(life_r)
        os.close(quiet)
        KEEP.add(self.pid)  # not an orphan to sweep when a worker is killed
        self.notes = fence.worker_prefix(self.pid)  # made by its warden, bound writable into its sandbox

    def alive(self) -> bool:
        try:
            return os.waitpid(self.pid, os.WNOHANG)[0] == 0
        except ChildProcessError:
            return False

    def kill(self) -> None:
        os.close(self.lifeline)  # its warden kills the sandbox on the end of its lifeline
        proctree.kill_descendants(self.pid)
        proctree.kill(self.pid)
        proctree.reap(self.pid)
        self.control.close()
        KEEP.discard(self.pid)
        fence.forget(self.pid)


_RUNNING: dict[str, Zygote] = {}


def for_settings(settings: Any) -> Zygote | None:
    """The run's zygote for a worker of `settings` (started now if it has none, or it died); None where workers of
    these settings start as fresh interpreters: all but the perf phase's (each of which times one row), those of
    backends and services that do not run under bwrap, or with HARNESS_NO_ZYGOTE=1."""
    if os.environ.get(OFF_VARIABLE) == "1" or not getattr(settings, "timed_rows", False):
        return None
    binary = bwrap.choose(settings)[0]
    if not binary:
        return None
    zygote = _RUNNING.get(binary)
    if zygote is None or not zygote.alive():
        if zygote is not None:
            zygote.kill()
        zygote = _RUNNING[binary] = Zygote(binary)
    return zygote


@contextmanager
def running() -> Iterator[None]:
    """While a run's workers run (harness.run.process.subreaper); its zygotes end with it."""
    with subreaper():
        try:
            yield
        finally:
            while _RUNNING:
                _RUNNING.popitem()[1].kill()
