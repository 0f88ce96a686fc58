"""Exclusive locks on files, between processes: a cache entry or a build product that several processes need at
once is made by the first, and the others wait for it and read what it wrote (harness.tables.cache,
harness.backends.build). flock locks belong to the open file, so the kernel releases one when its process dies."""
from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


def lock(path: Path, wait: bool = True) -> int | None:
    """An exclusive lock on the file `path` (created, with its folder): its descriptor, which `unlock` releases;
    None without `wait` when another process holds it. OSError where the file cannot be made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def unlock(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """`lock(path)` held for the block."""
    fd = lock(path)
    try:
        yield
    finally:
        unlock(fd)
