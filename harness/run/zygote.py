"""The zygote: one process per run inside the workers' sandbox (bwrap) that has imported what a timed worker
imports (numpy, the worker and sandbox code, the timing code) and never loads the operator library; it forks one
worker per perf row-round, and that child loads the library, times its one row and exits. A perf round's worker
then starts in a fork instead of a fresh interpreter (benchmarks/worker_start.py).

It is trusted code in the sandbox: requests come only from the harness's wardens, over a SOCK_SEQPACKET control
socket, each with the worker's descriptors (pipe, lifeline, output capture, the library) and a status channel back
to its warden: the zygote sends the worker's wait status there when it ends, and kills the worker when the warden's
end closes (the harness killed the warden, or died). Processes an operator left behind that re-parent here are
killed. It is not dumpable, so a worker of the same uid cannot trace it or read its memory; on kernels with
Landlock ABI 6 a worker cannot signal it either (harness.run.confine). Run as `python -m harness.run.zygote
CONTROL LIFELINE`.
"""
from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import socket
import sys
from typing import NoReturn

from harness.run import proctree, worker

#: A request's bytes and descriptors at most: the worker's pipe, lifeline, capture, status channel, kept ones.
REQUEST_BYTES = 4096
MAX_FDS = 16
#: Received descriptors are moved at or above this before the kept ones take their numbers (the harness's).
_HIGH_FD = 1000


def main(argv: list[str]) -> NoReturn:
    control, lifeline = socket.socket(fileno=int(argv[0])), int(argv[1])
    try:
        worker.drop_start_env()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        proctree.set_parent_death_signal(signal.SIGKILL)
        proctree.set_subreaper(True)
        proctree.set_dumpable(False)
        worker._isolate_descriptors({1, 2, control.fileno(), lifeline})
        _preload()
        _serve(control, lifeline)
    finally:
        os._exit(0)


def _preload() -> None:
    """What a timed worker imports before "started" (harness.run.worker._preload) and its backend's module; no
    library is opened."""
    from harness.backends import cpu, fence  # noqa: F401
    from harness.perf import stats, timing  # noqa: F401
    from harness.run import confine, fpenv, sandbox  # noqa: F401


def _serve(control: socket.socket, lifeline: int) -> NoReturn:
    """Fork a worker per request until the harness's lifeline or the control socket ends; then every child dies."""
    children: dict[int, tuple[int, socket.socket]] = {}  # pid -> (pidfd, status channel to its warden)
    while True:
        watch = [control, lifeline, *(s for _, s in children.values()), *(p for p, _ in children.values())]
        ready = set(select.select(watch, [], [], 1.0)[0])
        if lifeline in ready and not _read_byte(lifeline):
            _end(children)
        if control in ready:
            try:
                message, fds, _, _ = socket.recv_fds(control, REQUEST_BYTES, MAX_FDS)
            except OSError:
                _end(children)
            if not message:
                _end(children)
            _spawn(message, fds, children)
        for pid, (_, status) in list(children.items()):
            if status in ready:  # its warden is gone (or wrote, which it never does): the worker goes too
                _kill(pid)
        _reap(children)


def _read_byte(fd: int) -> bytes:
    try:
        return os.read(fd, 1) or b""
    except OSError:
        return b""


def _spawn(message: bytes, fds: list[int], children: dict[int, tuple[int, socket.socket]]) -> None:
    """Fork the worker a request asks for; a malformed request's descriptors are closed (its warden sees the end
    of its status channel and ends as a broken worker)."""
    try:
        request = json.loads(message)
        keep = [int(x) for x in request["keep"]]
        if len(fds) != 4 + len(keep):
            raise ValueError("descriptors missing")
    except (ValueError, KeyError, TypeError):
        for fd in fds:
            os.close(fd)
        return
    conn, life, capture, status, *kept = fds
    pid = os.fork()
    if pid == 0:
        _become(request, [conn, life, capture, *kept], keep)
    for fd in (conn, life, capture, *kept):
        os.close(fd)
    children[pid] = (os.pidfd_open(pid), socket.socket(fileno=status))


def _become(request: dict, fds: list[int], keep: list[int]) -> NoReturn:
    """In the forked child: the descriptors at the numbers the harness gave them, output into the capture, its
    own note directory, the warden's cores; then the worker's usual life (harness.run.worker.main)."""
    try:
        os.setpgid(0, 0)
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, _HIGH_FD) for fd in fds]
        for fd in fds:
            os.close(fd)
        conn, life, capture, *kept = moved
        for fd, target in zip(kept, keep):
            os.dup2(fd, target)
            os.close(fd)
        os.dup2(capture, 1)
        os.dup2(capture, 2)
        os.close(capture)
        from harness.backends import fence

        notes = str(request["notes"])
        os.makedirs(notes, mode=0o700, exist_ok=True)
        os.environ[fence.PREFIX_VARIABLE] = notes
        os.sched_setaffinity(0, [int(c) for c in request["cpus"]])
        worker.FORKED = True
        worker.main([str(conn), str(life), "0", ",".join(map(str, keep))])
    finally:
        os._exit(worker.BROKEN)


def _kill(pid: int) -> None:
    proctree.kill_descendants(pid)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    proctree.kill(pid)


def _reap(children: dict[int, tuple[int, socket.socket]]) -> None:
    """Every child that ended: its status to its warden; orphans an operator left (re-parented here) killed."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if not pid:
            break
        if pid in children:
            pidfd, channel = children.pop(pid)
            try:
                channel.send(status.to_bytes(4, "little", signed=True))
            except OSError:
                pass
            channel.close()
            os.close(pidfd)
    for pid in proctree.children(os.getpid()):
        if pid not in children:
            _kill(pid)


def _end(children: dict[int, tuple[int, socket.socket]]) -> NoReturn:
    for pid in children:
        _kill(pid)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
