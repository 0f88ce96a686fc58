"""Process trees on Linux: who descends from whom, killing a whole tree, and the prctl switches that keep an
operator's processes from outliving the run (parent-death signal, child subreaper).

Read from /proc rather than tracked, because the processes that matter are the ones an untrusted operator started
behind the harness's back (forked children, double-forked daemons that left the process group).
"""
from __future__ import annotations

import ctypes
import os
import signal
import time

_PR_SET_PDEATHSIG = 1
_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37

_libc = ctypes.CDLL(None, use_errno=True)


def prctl(option: int, value: int) -> int:
    return _libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                       ctypes.c_ulong(0))


def set_parent_death_signal(signum: int) -> None:
    """The kernel sends `signum` to this process when the thread that forked it exits (even by SIGKILL)."""
    prctl(_PR_SET_PDEATHSIG, signum)


def set_subreaper(on: bool) -> bool:
    """Orphaned descendants re-parent to this process instead of init, so they can still be found and killed;
    returns the previous setting."""
    was = ctypes.c_int(0)
    _libc.prctl(ctypes.c_int(_PR_GET_CHILD_SUBREAPER), ctypes.byref(was), ctypes.c_ulong(0), ctypes.c_ulong(0),
                ctypes.c_ulong(0))
    prctl(_PR_SET_CHILD_SUBREAPER, int(on))
    return bool(was.value)


def set_dumpable(on: bool) -> bool:
    """PR_SET_DUMPABLE: off, processes of the same uid without CAP_SYS_PTRACE cannot open this process's
    /proc/<pid>/fd, mem or environ (nor ptrace it); returns the previous setting."""
    was = _libc.prctl(ctypes.c_int(_PR_GET_DUMPABLE), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0),
                      ctypes.c_ulong(0))
    prctl(_PR_SET_DUMPABLE, int(on))
    return was == 1


def _stat_fields(pid: int) -> list[bytes]:
    """/proc/<pid>/stat's fields after the command name (state first); empty when the process is gone. The
    command name, the process's to choose, may contain spaces and parentheses: it is skipped."""
    text = _read(f"/proc/{pid}/stat")
    return text[text.rfind(b")") + 2:].split() if text else []


def _stat(pid: int) -> tuple[int, str] | None:
    """(ppid, state letter) of a live process; None when it is gone."""
    fields = _stat_fields(pid)
    return (int(fields[1]), fields[0].decode()) if fields else None


def parent_of(pid: int) -> int:
    """The parent's pid as /proc names it (0 when `pid` is gone)."""
    info = _stat(pid)
    return info[0] if info is not None else 0


def parents() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, state) of every process visible in /proc."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (info := _stat(int(entry))) is not None:
            out[int(entry)] = info
    return out


def children(pid: int) -> list[int]:
    """Direct children of `pid`, zombies included (they still need reaping). Read from the kernel's per-thread
    children lists, which cost what the tree costs; a full /proc scan where the kernel lacks them."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out += [int(c) for c in f.read().split()]
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue  # the thread ended meanwhile
            return [child for child, (ppid, _) in parents().items() if ppid == pid]
        except OSError:
            continue
    return out


#: Whether this kernel keeps per-thread scheduler statistics (CONFIG_SCHED_INFO).
_SCHEDSTAT = os.path.exists("/proc/self/schedstat")


def cpu_account(pid: int) -> tuple[float, float | None]:
    """The kernel's account of `pid` and every process below it: CPU seconds (user and system, reaped children's
    included) and seconds its threads waited runnable for a core (schedstat's run delay; None where the kernel
    keeps no schedstat). Neither a patched timer nor the worker can change them; load lengthens the second, not the
    first, so together they tell a loaded machine's waits from time nobody accounts for."""
    cpu, waited = 0, 0
    for one in [pid, *descendants(pid, live_only=False)]:
        try:
            cpu += sum(int(x) for x in _stat_fields(one)[11:15])  # utime, stime, cutime, cstime
        except ValueError:
            continue
        try:
            tasks = os.listdir(f"/proc/{one}/task") if _SCHEDSTAT else []
        except OSError:
            continue
        for tid in tasks:  # a thread gone meanwhile reads empty
            stat = _read(f"/proc/{one}/task/{tid}/schedstat").split()
            waited += int(stat[1]) if len(stat) > 1 and stat[1].isdigit() else 0
    return cpu / os.sysconf("SC_CLK_TCK"), waited / 1e9 if _SCHEDSTAT else None


def waited_self() -> float:
    """Seconds the calling thread has waited runnable for a core (schedstat's run delay; 0 where not kept)."""
    stat = _read("/proc/thread-self/schedstat").split()
    return int(stat[1]) / 1e9 if len(stat) > 1 and stat[1].isdigit() else 0.0


def _read(path: str) -> bytes:
    """A small /proc file's bytes; empty when the process is gone."""
    try:
        with open(path, "rb") as f:
            return f.read(4096)
    except OSError:
        return b""


def descendants(pid: int, live_only: bool = True) -> list[int]:
    """Every process below `pid` (children first); zombies (already dead, waiting to be reaped) only when asked."""
    out, frontier = [], [pid]
    while frontier:
        nxt = [c for p in frontier for c in children(p)]
        out.extend(nxt)
        frontier = nxt
    if live_only:
        out = [p for p in out if (info := _stat(p)) is not None and info[1] not in "ZX"]
    return out


def kill(pid: int, signum: int = signal.SIGKILL) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def kill_descendants(pid: int, passes: int = 5) -> int:
    """SIGKILL everything below `pid`, repeating while new processes appear (a forking loop); returns how many
    live processes were found on the first pass."""
    first = None
    for _ in range(passes):
        found = descendants(pid)
        if first is None:
            first = len(found)
        if not found:
            break
        for p in found:
            kill(p, signal.SIGSTOP)  # stopped processes cannot fork while the rest are being killed
        for p in found:
            kill(p)
    return first or 0


def reap_children(deadline_s: float = 1.0) -> None:
    """Collect every exited child of this process (call only where this process has no child it waits for
    elsewhere: the worker, between rows)."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if not descendants(os.getpid(), live_only=False) or time.monotonic() > end:
                return
            time.sleep(0.005)


def reap(pid: int) -> None:
    """Collect one killed child without blocking for long (it may belong to a subprocess that already reaped)."""
    for _ in range(200):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            return
        time.sleep(0.005)

