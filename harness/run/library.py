"""Which library ran: the operator library opened and hashed once by the harness, loaded by every worker from that
descriptor, and watched for changes on disk during the run."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.backends import fence
from harness.backends.build import BuildError
from harness.model.settings import Settings


@dataclass
class LibraryFile:
    """The operator library of a run, opened once by the harness: every worker loads it from this descriptor
    (/proc/self/fd/N), so what ran is the file that was hashed; a change on disk afterwards is noticed."""

    path: str
    fd: int
    sha256: str
    stamp: tuple
    twin: bool

    @staticmethod
    def open(path: str, twin: bool) -> "LibraryFile":
        import hashlib

        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return LibraryFile(path, fd, digest.hexdigest(), _stamp(fd, path), twin)

    def options(self) -> dict[str, Any]:
        return {"operator_lib": f"/proc/self/fd/{self.fd}", "twin": self.twin, "library_path": self.path,
                "library_sha256": self.sha256}

    def changed(self) -> str:
        """"" while the file on disk holds the bytes hashed at the start (a rebuild by a concurrent run that
        replaced it with the same bytes is no change); else why the row cannot be evidence."""
        stamp = _stamp(self.fd, self.path)
        if stamp == self.stamp:
            return ""
        if _sha256_of(self.path) == self.sha256 and _sha256_of(f"/proc/self/fd/{self.fd}") == self.sha256:
            self.stamp = stamp
            return ""
        return (f"the operator library {self.path} changed on disk during the run (sha256 {self.sha256[:16]}... at "
                "the start): rows after the change are not evidence of the library the report names")


def _sha256_of(path: str) -> str:
    import hashlib

    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return ""


def _stamp(fd: int, path: str) -> tuple:
    opened = os.fstat(fd)
    try:
        now = os.stat(path)
        on_disk = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns)
    except OSError:
        on_disk = None
    return opened.st_size, opened.st_mtime_ns, on_disk


_LIBRARIES: dict[tuple[str, bool], LibraryFile] = {}


def library_of(settings: Settings) -> LibraryFile | None:
    """The cpu backend's library, opened once per run (the twin is built first); None for other backends and
    services, which open their own."""
    if settings.backend != "cpu" or getattr(settings, "service", None) is not None:
        return None
    try:
        fence.library()  # built here: the confined worker may not write the build directory
    except BuildError:
        pass  # the worker says why (BackendUnavailable)
    given = settings.backend_options.get("operator_lib")
    if given and str(given).startswith("/proc/self/fd/"):
        return None
    if given:
        path, twin = str(Path(given).resolve()), False
    else:
        from harness.backends.build import BuildError, build_twin

        try:
            path, twin = str(build_twin()), True
        except BuildError:
            return None  # the worker says why (BackendUnavailable)
    key = (path, twin)
    if key not in _LIBRARIES:
        try:
            _LIBRARIES[key] = LibraryFile.open(path, twin)
        except OSError:
            return None  # the worker says why
    return _LIBRARIES[key]


def library_provenance(settings: Settings) -> dict[str, str]:
    """The library's path and sha256 as the harness read them (what report.json records)."""
    lib = library_of(settings)
    return {} if lib is None else {"library": lib.path, "library_sha256": lib.sha256}
