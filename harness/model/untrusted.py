"""Reading what comes from a worker: every byte of it is untrusted input, whatever the operator did to its process.

Four channels lead from a worker to the judge, and each is read here so that no content of it can hang, kill or
deceive the judge: the fault notes its guard-page handler leaves in its note directory (`read_note`: never follows
a link, never opens a FIFO or device, never reads more than a cap), its socket (`Frames`: a frame is taken as far
as it has arrived, never waited for; a length over the limit is refused before anything is allocated), the row's
shared memory (`sealed_memfd`: it can neither shrink nor grow, so no truncation turns the judge's reads into
SIGBUS) and the messages themselves (`clean`: bounded nesting, every string made `printable`). `printable` is the
one function that escapes the operator's text (its last-error message, its stdout/stderr, fault notes) before a
terminal, a report or a log sees it.
"""
from __future__ import annotations

import fcntl
import os
import socket
import stat
import struct
from typing import Any

#: The control characters a terminal acts on (C0, DEL, C1) and the Unicode format characters that reorder or hide
#: text (bidi embeddings, overrides and isolates, marks): each is shown as its escape, e.g. ESC as "\x1b".
_CONTROLS = [*range(0x00, 0x20), *range(0x7f, 0xa0), 0x061c, 0x200e, 0x200f, *range(0x202a, 0x202f),
             *range(0x2066, 0x206a)]
_ESCAPE = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _CONTROLS}
_ESCAPE_KEEP_LINES = {c: e for c, e in _ESCAPE.items() if c not in (0x09, 0x0a)}
#: How deep a worker's message may nest (the deepest real one, a timed row's timing with its scopes, is 7).
MAX_DEPTH = 16
#: The most of a fault note the judge reads (the guard-page handler writes one line of at most a few hundred bytes).
NOTE_BYTES = 1000
#: Notes read from one worker's note directory (the handler writes one per faulting process).
MAX_NOTES = 16


def printable(text: str, lines: bool = False) -> str:
    """`text` with every control character escaped (ESC[2J, an OSC title sequence, a bidi override arrive as
    visible text, not as commands); `lines` keeps newlines and tabs (captured output), else they are escaped too,
    so a reason stays one line."""
    if text.isprintable():  # the common case, in C: no control or format character at all
        return text
    return text.translate(_ESCAPE_KEEP_LINES if lines else _ESCAPE)


def count(text: str) -> int | None:
    """`text` as a whole number written in ASCII digits, else None. Not `text.isdigit()` then `int(text)`: isdigit
    takes "²", which int() refuses, so a name or cell a worker (or anyone) wrote would raise where it is read."""
    return int(text) if text.isascii() and text.isdigit() else None


class Unfit(ValueError):
    """A worker's message whose content breaks the protocol's bounds; the text names the field."""


def clean(value: Any, where: str = "message", depth: int = 0) -> Any:
    """A decoded message with every string (keys too) made printable; Unfit, naming the field, where it nests
    deeper than MAX_DEPTH."""
    if depth > MAX_DEPTH:
        raise Unfit(f"{where} is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [clean(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {printable(str(k)): clean(v, f"{where}.{printable(str(k))[:40]}", depth + 1) for k, v in value.items()}
    return value


def read_note(name: str, dir_fd: int | None = None, cap: int = NOTE_BYTES) -> str:
    """The first `cap` bytes of the fault note `name` as printable text; "" unless it is a regular file with one
    link. Opened without following a link (O_PATH | O_NOFOLLOW), checked, and only then opened for reading
    through that very inode: a FIFO, a device, a symlink to a file only root may read or to the harness's own
    /proc/self/environ, a hard link to another file, or a 200 GiB sparse file is never read or read past `cap`."""
    try:
        where = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return ""
    try:
        info = os.fstat(where)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            return ""
        fd = os.open(f"/proc/self/fd/{where}", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return ""
    finally:
        os.close(where)
    try:
        data = b""
        while len(data) < cap and (chunk := os.read(fd, cap - len(data))):
            data += chunk
    except OSError:
        return ""
    finally:
        os.close(fd)
    # the handler writes a C string: what follows a NUL (a sparse file's zeros) is no part of it
    return printable(data.split(b"\0", 1)[0].decode(errors="replace").strip())[:cap]


def read_notes(directory: str, cap: int = NOTE_BYTES) -> list[str]:
    """The notes of a worker's note directory (at most MAX_NOTES, each read_note), removed once read; [] when
    `directory` is not a directory of its own (a link is not followed)."""
    try:
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        names = []
        with os.scandir(dfd) as entries:
            for entry in entries:
                names.append(entry.name)
                if len(names) >= MAX_NOTES:
                    break
        notes = []
        for name in sorted(names):
            notes.append(read_note(name, dfd, cap))
            try:
                os.unlink(name, dir_fd=dfd)
            except OSError:
                pass
        return [n for n in notes if n]
    finally:
        os.close(dfd)


def sealed_memfd(name: str, size: int) -> int:
    """A memfd of `size` bytes sealed against shrinking, growing and further seals before any worker sees it:
    a worker's ftruncate fails (EPERM) instead of turning the judge's reads of its mapping into SIGBUS."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, size)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
    except BaseException:
        os.close(fd)
        raise
    return fd


class Frames:
    """multiprocessing.Connection's frames (a 4-byte big-endian length, or -1 and an 8-byte one) read from a
    worker's socket without ever blocking (state: the frame in progress): `pull` takes what has arrived and keeps
    a partial frame until its rest comes, so a header promising 1000 bytes followed by 10 leaves the judge's loop
    free and the row's time limit running. A length over `limit` is refused before anything is allocated. Reads
    go through a duplicate of the descriptor with MSG_DONTWAIT: the Connection's own blocking mode is untouched."""

    def __init__(self, fd: int, limit: int):
        self.limit = limit
        self.sock = socket.socket(fileno=os.dup(fd))
        self.head = bytearray()
        self.body: bytearray | None = None
        self.got = 0

    @property
    def partial(self) -> str:
        """What has arrived of a frame not yet whole, in words ("" when nothing has)."""
        if self.body is not None:
            return f"{self.got} of the {len(self.body)} bytes of a message"
        return f"{len(self.head)} bytes of a message's length" if self.head else ""

    def pull(self) -> bytes | None:
        """The next whole frame if it has arrived, else None. EOFError at the end of the stream, Unfit for a
        length the protocol does not allow."""
        while True:
            if self.body is None:
                want = 4 if len(self.head) < 4 else 12 if self.head[:4] == b"\xff\xff\xff\xff" else 4
                if len(self.head) == want:
                    self._open_body(want)
                    continue
                chunk = self._recv(want - len(self.head))
                if chunk is None:
                    return None
                self.head += chunk
            elif self.got == len(self.body):
                frame = bytes(self.body)
                self.head, self.body, self.got = bytearray(), None, 0
                return frame
            else:
                try:
                    n = self.sock.recv_into(memoryview(self.body)[self.got:], 0, socket.MSG_DONTWAIT)
                except (BlockingIOError, InterruptedError):
                    return None
                if n == 0:
                    raise EOFError(f"the stream ended after {self.partial}")
                self.got += n

    def _open_body(self, head_bytes: int) -> None:
        size = struct.unpack("!i", self.head[:4])[0] if head_bytes == 4 else struct.unpack("!Q", self.head[4:])[0]
        if size < 0 or size > self.limit:
            raise Unfit(f"a frame header promising {size} bytes (the limit is {self.limit})")
        self.body = bytearray(size)

    def _recv(self, n: int) -> bytes | None:
        try:
            chunk = self.sock.recv(n, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return None
        if not chunk:
            raise EOFError("the stream ended" + (f" {len(self.head)} bytes into a frame header" if self.head else ""))
        return chunk

    def close(self) -> None:
        self.sock.close()
