"""Guard pages for the cpu backend (fence.c): buffers between inaccessible pages, and a fault note naming the buffer.

The worker that runs an operator installs the handler; when a stray access hits a fence the handler writes one line
to `note_path(pid)` and the worker dies of SIGSEGV. The parent, which sees only the dead worker, reads the line back
with `fault_note(pid)` and puts it in the row's CRASH reason.
"""
from __future__ import annotations

import ctypes
import hashlib
import mmap
import os
import re
import shutil
import subprocess
import tempfile
from ctypes import c_char_p, c_int, c_size_t, c_void_p
from functools import lru_cache
from pathlib import Path

from harness.backends.build import REPO_ROOT, BuildError
from harness.model import untrusted

SOURCE = Path(__file__).with_name("fence.c")
CACHE_DIR = REPO_ROOT / "build" / "fence"
PAGE = mmap.PAGESIZE
#: Each fence is at least this large, so a stray write far beyond a small buffer still lands on it.
MIN_FENCE_BYTES = 1 << 20
#: ... and at most this large (address space only: fences are never backed by memory).
MAX_FENCE_BYTES = 1 << 32


#: Set by the runner for each worker: its notes' prefix (the worker's own pid, appended by the handler, is its pid in
#: its PID namespace, which the harness does not see, and its uid may be another than the harness's).
PREFIX_VARIABLE = "HARNESS_FAULT_NOTE_PREFIX"
#: No pid is larger (linux/threads.h PID_MAX_LIMIT on 64-bit: 4 * 1024 * 1024, the most /proc/sys/kernel/pid_max
#: takes): a note named by a larger number, which anyone may write in /tmp, has no owner.
PID_MAX_LIMIT = 1 << 22


def note_prefix() -> str:
    """Where fault notes go: the worker's own prefix when the runner gave it one, else by uid and pid."""
    return os.environ.get(PREFIX_VARIABLE) or os.path.join(tempfile.gettempdir(), f"harness-fault-{os.getuid()}-")


def worker_prefix(pid: int, judge: int = 0) -> str:
    """The prefix (a directory of its own, the only place it may write) of the worker whose warden is `pid`, forked
    by `judge` (default: this process), which reads its notes once the warden has ended: the name carries the judge
    so that `sweep` in a concurrent run keeps them until the judge is gone, however long ago the warden died."""
    name = f"harness-fault-{os.getuid()}-w{pid}-j{judge or os.getpid()}"
    return os.path.join(tempfile.gettempdir(), name) + os.sep


def note_path(pid: int) -> Path:
    return Path(f"{note_prefix()}{pid}")


def fault_note(pid: int) -> str:
    """The fault line a dead worker left (and remove it); "" when it left none. Read as untrusted input
    (harness.model.untrusted.read_note: no link followed, regular files only, at most NOTE_BYTES, made printable)."""
    legacy = str(note_path(pid))
    notes = [untrusted.read_note(legacy), *untrusted.read_notes(worker_prefix(pid))]
    try:
        os.unlink(legacy)
    except OSError:
        pass
    forget(pid)
    return next((n for n in notes if n), "")


def forget(pid: int) -> None:
    """Remove a finished worker's note directory."""
    shutil.rmtree(worker_prefix(pid), ignore_errors=True)


#: The names `sweep` knows after the stem: a worker's note (its pid), a worker's note directory (its warden's pid,
#: then its judge's); ASCII digits only (`\d` would take any script's).
_SWEPT = re.compile(r"(\d+)|w\d+-j(\d+)", re.ASCII)


def sweep() -> list[str]:
    """Remove the notes and note directories of this uid that a run killed from outside left behind (returns
    their paths): only those whose reader (the judge named in a directory's name; the worker itself for a note)
    is gone, or is a later process that reused the pid (it started after the note was last written). Any name
    may be there (anyone can write in /tmp): one that is not the harness's is left alone."""
    tmp = tempfile.gettempdir()
    stem = f"harness-fault-{os.getuid()}-"
    removed = []
    for name in os.listdir(tmp):
        if not name.startswith(stem) or not (owner := _SWEPT.fullmatch(name[len(stem):])):
            continue
        path = os.path.join(tmp, name)
        try:
            written = os.lstat(path).st_mtime
        except OSError:
            continue
        if _alive_since(int(owner[1] or owner[2]), written):
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                continue
        removed.append(path)
    return removed


def _alive_since(pid: int, written: float) -> bool:
    """Whether process `pid` exists and started no later than `written` (a wall-clock time)."""
    if not 0 < pid <= PID_MAX_LIMIT:  # os.kill would raise for one past a C int, and kill(0) means our own group
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        started = boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, StopIteration):
        return True  # cannot tell: it may be the owner
    if fields[0] in ("Z", "X"):  # dead, not yet reaped (a warden of a killed run, reparented): writes no more
        return False
    return started <= written + 1.0  # btime has a resolution of 1 s


def round_pages(nbytes: int) -> int:
    return -(-nbytes // PAGE) * PAGE


def fence_bytes(data_bytes: int) -> int:
    """Fence size for a buffer: at least the buffer itself (a whole batch or column off is still on the fence)."""
    return min(MAX_FENCE_BYTES, max(MIN_FENCE_BYTES, round_pages(data_bytes)))


@lru_cache(maxsize=1)
def library() -> ctypes.CDLL:
    """fence.c compiled with the system C compiler (cached by source hash) and loaded."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    target = CACHE_DIR / digest / "libfence.so"
    if not target.exists():
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise BuildError("no C compiler ('cc') to build the guard-page helper")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".libfence.{os.getpid()}.so")
        proc = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(tmp), str(SOURCE)], capture_output=True,
                              text=True)
        if proc.returncode != 0:
            raise BuildError(f"building the guard-page helper failed: {proc.stderr.strip()[:300]}")
        os.replace(tmp, target)
    lib = ctypes.CDLL(str(target))
    lib.fence_install.argtypes, lib.fence_install.restype = [c_char_p], c_int
    lib.fence_alloc.argtypes, lib.fence_alloc.restype = [c_size_t, c_size_t, c_char_p, c_size_t, c_size_t], c_void_p
    lib.fence_map.argtypes = [c_int, c_size_t, c_size_t, c_size_t, c_char_p, c_size_t, c_size_t]
    lib.fence_map.restype = c_void_p
    lib.fence_free.argtypes, lib.fence_free.restype = [c_void_p], c_int
    lib.fence_release_freed.argtypes, lib.fence_release_freed.restype = [], None
    return lib


def install() -> None:
    """(Re)install the fault handler: whoever set SIGSEGV's handler since (faulthandler.disable() restores the one
    it found) must not leave a worker without it."""
    if library().fence_install(note_prefix().encode()) != 0:
        raise BuildError("cannot install the guard-page fault handler")


def alloc(nbytes: int, name: str, span: tuple[int, int] | None = None) -> int:
    """Page-rounded read-write memory for nbytes between two fences; returns its start address. Fault notes
    measure distances from `span` (offset, length: the operator's data inside the allocation)."""
    install()
    data = round_pages(max(nbytes, 1))
    offset, length = span if span is not None else (0, nbytes)
    addr = library().fence_alloc(data, fence_bytes(data), name.encode(errors="replace"), offset, length)
    if not addr:
        raise MemoryError(f"cannot map {data} bytes with guard pages for {name or 'a buffer'}")
    return addr


def map_shared(fd: int, offset: int, nbytes: int, name: str, span: tuple[int, int]) -> int:
    """`alloc` whose pages are those of file `fd` from `offset` (a page multiple), mapped shared: writes through
    the returned address are the file's bytes, and no private copy of them exists."""
    install()
    if offset % PAGE:
        raise ValueError(f"{name}: offset {offset} in the shared memory is not page-aligned")
    data = round_pages(max(nbytes, 1))
    addr = library().fence_map(fd, offset, data, fence_bytes(data), name.encode(errors="replace"), *span)
    if not addr:
        raise MemoryError(f"cannot map {data} bytes of shared memory with guard pages for {name or 'a buffer'}")
    return addr


def free(addr: int) -> None:
    """Quarantine: the buffer's pages become inaccessible (and are returned to the system)."""
    library().fence_free(addr)


def release() -> None:
    """Unmap every quarantined buffer."""
    library().fence_release_freed()
