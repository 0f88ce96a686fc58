"""The on-disk cache of generated tables, so the test suite's workers, repeated runs and `harness cases generate`
pay for a table once per machine instead of once per process.

An entry is keyed by the operator, the seed and the sha256 of every source file the operator's generator is made
of: its package, and every harness/golden module the generator imports, followed import by import from its
source (so an edit to the generator, its cells, the conditioning measure, the criteria or the golden it measures
with makes a new key), plus the Python, numpy and scipy versions that run it (the golden's BLAS comes with
scipy). A lock file makes concurrent processes generate a missing entry once: the first generates, the others wait
and read. Entries are written atomically, so one that is there is read at once, without waiting. The directory is $HARNESS_CACHE_DIR, else $XDG_CACHE_HOME/ops-blas-harness, else ~/.cache/ops-blas-harness;
deleting it is always safe.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import platform
import sys
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy

from harness.model import filelock
from harness.model import operators as ops

#: The directory holding the harness and golden packages: the sources an import is followed into.
ROOT = Path(__file__).resolve().parents[2]
#: ... and the packages in it: an import of one of them is followed, and their sources key what is cached.
PACKAGES = ("harness", "golden")


def root() -> Path:
    """The harness's cache directory: $HARNESS_CACHE_DIR, else $XDG_CACHE_HOME/ops-blas-harness, else
    ~/.cache/ops-blas-harness (the tables here, the judge's goldens in harness.judge.golden_cache)."""
    base = os.environ.get("HARNESS_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") \
        / "ops-blas-harness"
    return Path(base)


def directory() -> Path:
    return root() / "tables"


def sources(op: str) -> list[Path]:
    """The source files of op's generator: its package's modules and, transitively, every harness/golden module
    one of them imports (at any depth of the code: imports inside functions count)."""
    package = Path(ops.part(op, "generate").__file__).parent
    return closure(sorted(package.glob("*.py")))


def closure(start: list[Path]) -> list[Path]:
    """`start` and, transitively, every harness/golden source file they import."""
    todo = list(start)
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo.extend(_imported(path))
    return sorted(seen)


def _imported(path: Path) -> Iterator[Path]:
    """The harness/golden source files a module imports, with the packages above each (their __init__ runs)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1], base]).strip(".")
            names = [base, *(f"{base}.{a.name}" for a in node.names)]  # `from pkg import module` names a module
        else:
            continue
        for name in names:
            if name.split(".")[0] in PACKAGES:
                parts = name.split(".")
                for depth in range(1, len(parts) + 1):
                    stem = ROOT.joinpath(*parts[:depth])
                    for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
                        if candidate.is_file():
                            yield candidate


def versions() -> str:
    """The versions computed numbers depend on besides the sources: part of every cache key."""
    return f"python {sys.version_info[:2]} numpy {np.__version__} scipy {scipy.__version__} {platform.machine()}"


@lru_cache(maxsize=None)
def digest(op: str) -> str:
    """sha256 over the generator's sources (path and bytes) and the versions its numbers depend on."""
    h = hashlib.sha256(f"{versions()}\n".encode())
    for path in sources(op):
        h.update(f"{path.relative_to(ROOT)}\n".encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _entry(op: str, seed: int) -> Path:
    return directory() / f"{op}-{seed}-{digest(op)[:24]}.json"


def rows(op: str, seed: int, generate: Callable[[], list[dict[str, str]]], fresh: bool = False) \
        -> list[dict[str, str]]:
    """The cached rows of (op, seed), made by `generate` (and stored) when the cache lacks them or when `fresh`
    asks for the generator itself to run. A missing entry is made under its lock, so processes asking meanwhile
    wait for these rows instead of making them again; an entry that is there is read at once (written whole, it
    is never half there), even while a fresh generation of it runs. A cache that cannot be used (a read-only
    home) is skipped: the table is generated as if there were none."""
    entry = _entry(op, seed)
    if not fresh and (cached := _load(entry)) is not None:
        return cached
    if fresh and entry.is_file():  # readers keep reading the entry that is there meanwhile
        made = generate()
        _write(entry, made)
        return made
    try:  # one process generates, the others wait
        held = filelock.lock(entry.with_suffix(".lock"))
    except OSError:
        return generate()
    try:
        cached = None if fresh else _load(entry)  # made by the process this one waited for
        if cached is not None:
            return cached
        made = generate()
        _write(entry, made)
        return made
    finally:
        filelock.unlock(held)


def _load(entry: Path) -> list[dict[str, str]] | None:
    """The entry's rows, or None when it is missing or not what this module writes (a damaged entry is made
    again, never trusted)."""
    try:
        made = json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(made, list) and all(isinstance(r, dict) and all(isinstance(v, str) for v in r.values())
                                      for r in made):
        return made
    return None


def _write(entry: Path, made: list[dict[str, str]]) -> None:
    write_entry(entry, json.dumps(made))


def write_entry(entry: Path, text: str) -> None:
    """Atomically (a reader never sees half an entry); a full or read-only disk leaves the cache without it."""
    tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, entry)
    except OSError:
        tmp.unlink(missing_ok=True)
