"""The judge's golden cache: a row's inputs are seeded, so two runs of one table need the same goldens, and the second
run of a comparison should cost only the operator's work.

Content-addressed: an entry's key is the sha256 of the operator, the version of the golden code (every source file
the operator package's golden imports, harness and golden alike, followed import by import as the table cache does,
plus the Python, numpy and scipy versions: scipy brings the golden's BLAS), the problem's parameters and every
byte of the buffers the golden reads. The value, the expected output and the float64 truth, carries the sha256 of
its own bytes and its key; an entry whose bytes do not hash to what it says (a torn or edited file) is deleted and
the golden computed again, never trusted. The directory holds at most CAP_BYTES (HARNESS_GOLDEN_CACHE_BYTES); past
it the least recently used entries go.

Only the judge reads and writes it: goldens are computed by the processes that never load operator code
(harness.run.row_judge.RowJudge), and the sandboxed worker may write nothing outside its own fault directory
(harness.run.confine). `harness run --no-golden-cache` (HARNESS_GOLDEN_CACHE=0) computes every golden afresh.
"""
from __future__ import annotations

import hashlib
import inspect
import os
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from harness.model import operators as ops
from harness.tables import cache as table_cache

#: Set to "0" to compute every golden afresh (`harness run --no-golden-cache` sets it for the run's processes).
SWITCH_ENV = "HARNESS_GOLDEN_CACHE"
#: The cache's size cap in bytes (default 2 GiB): past it, the least recently used entries are removed.
CAP_ENV = "HARNESS_GOLDEN_CACHE_BYTES"
DEFAULT_CAP_BYTES = 2 << 30
#: Evicting down to this share of the cap leaves room for the next writes without a scan per write.
EVICT_TO = 0.8
#: One golden bigger than this is not worth a disk copy (it would evict many small ones).
MAX_ENTRY_SHARE = 0.25

_lock = threading.Lock()
_size: dict[str, int] = {}  # the directory's bytes as this process last counted them, per directory


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "1") != "0"


def directory() -> Path:
    return table_cache.root() / "goldens"


def cap_bytes() -> int:
    try:
        return max(0, int(os.environ.get(CAP_ENV, DEFAULT_CAP_BYTES)))
    except ValueError:
        return DEFAULT_CAP_BYTES


@lru_cache(maxsize=None)
def code_version(op: str) -> str:
    """sha256 over the source files of op's golden (its package and everything it imports from harness and golden)
    and the versions its numbers depend on. Following the imports parses each source (~0.07 s of CPU in every
    process that judges); the value is a function of the versions and the bytes of every harness and golden source,
    so it is kept under that digest (a few ms to compute) and read back by the next process."""
    versions = table_cache.versions()
    sources = hashlib.sha256(f"{op}\n{versions}\n".encode())
    for path in sorted(p for package in table_cache.PACKAGES for p in (table_cache.ROOT / package).rglob("*.py")):
        sources.update(f"{path.relative_to(table_cache.ROOT)}\n".encode() + path.read_bytes())
    memo = table_cache.root() / "code-versions" / sources.hexdigest()
    try:
        if len(known := memo.read_text(encoding="ascii")) == 64 and set(known) <= set("0123456789abcdef"):
            return known
    except (OSError, UnicodeDecodeError):
        pass
    value = _code_version(op, versions)
    table_cache.write_entry(memo, value)  # not written (a full disk): the next process follows the imports again
    return value


def _code_version(op: str, versions: str) -> str:
    """code_version computed: the closure of op's golden source followed import by import."""
    spec = ops.get(op)
    start = [Path(inspect.getsourcefile(spec.golden_result) or spec.__file__)]
    h = hashlib.sha256(f"{versions}\n".encode())
    for path in table_cache.closure(start):
        h.update(f"{path.relative_to(table_cache.ROOT)}\n".encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def key(op: str, args: Any, bufs: dict[str, Any]) -> str:
    """The entry's name: the golden code's version, the parameters and every byte (and mask) of every buffer."""
    h = hashlib.sha256(f"{op}\n{code_version(op)}\n{args!r}\n".encode())
    for name in sorted(bufs):
        b = bufs[name]
        h.update(f"{name} {b.null} {b.output} {b.host.dtype.str} {b.host.shape}\n".encode())
        h.update(memoryview(np.ascontiguousarray(b.host)).cast("B"))
        for mask in (b.written, b.never_read):
            h.update(b"-" if mask is None else np.packbits(mask).tobytes())
    return h.hexdigest()


def _value_digest(entry_key: str, arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256(entry_key.encode())
    for name in sorted(arrays):
        h.update(f"{name} {arrays[name].dtype.str} {arrays[name].shape}\n".encode())
        h.update(memoryview(np.ascontiguousarray(arrays[name])).cast("B"))
    return h.hexdigest()


def result(op: str, args: Any, bufs: dict[str, Any], compute: Callable[[Any, dict], tuple]) \
        -> tuple[np.ndarray, np.ndarray | None, bool]:
    """(expected, truth, whether they came from the cache): the cached golden of this problem when there is a sound
    entry, else `compute(args, bufs)`, stored for the next run."""
    if not enabled():
        return (*compute(args, bufs), False)
    entry_key = key(op, args, bufs)
    path = directory() / entry_key[:2] / f"{entry_key}.npz"
    found = load(path, entry_key)
    if found is not None:
        return (*found, True)
    expected, truth = compute(args, bufs)
    store(path, entry_key, expected, truth)
    return expected, truth, False


def load(path: Path, entry_key: str) -> tuple[np.ndarray, np.ndarray | None] | None:
    """The entry's (expected, truth), or None when it is missing or unsound (then it is removed)."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except FileNotFoundError:
        return None
    except Exception:  # a torn or foreign file: zip, header or array errors alike
        path.unlink(missing_ok=True)
        return None
    said = arrays.pop("digest", None)
    if said is None or "expected" not in arrays or str(said) != _value_digest(entry_key, arrays):
        path.unlink(missing_ok=True)
        return None
    try:
        os.utime(path)  # recently used: eviction takes the others first
    except OSError:
        pass
    return arrays["expected"], arrays.get("truth")


def store(path: Path, entry_key: str, expected: np.ndarray, truth: np.ndarray | None) -> None:
    """Write the entry atomically; a full or read-only disk leaves the cache without it."""
    arrays = {"expected": np.asarray(expected), **({"truth": np.asarray(truth)} if truth is not None else {})}
    size = sum(a.nbytes for a in arrays.values())
    cap = cap_bytes()
    if size > cap * MAX_ENTRY_SHARE:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            np.savez(f, digest=np.array(_value_digest(entry_key, arrays)), **arrays)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        return
    _account(path.stat().st_size if path.exists() else size, cap)


def _entries(root: Path) -> list[tuple[float, int, Path]]:
    out = []
    for path in root.glob("*/*.npz"):
        try:
            st = path.stat()
        except OSError:
            continue
        out.append((st.st_mtime, st.st_size, path))
    return out


def _account(added: int, cap: int) -> None:
    """Count the bytes written; past the cap, remove the least recently used entries down to EVICT_TO of it (a
    scan of the directory only then, and once per process to start the count)."""
    root = directory()
    with _lock:
        if str(root) not in _size:
            _size[str(root)] = sum(size for _, size, _ in _entries(root))
        else:
            _size[str(root)] += added
        if _size[str(root)] <= cap:
            return
        entries = sorted(_entries(root))
        total = sum(size for _, size, _ in entries)
        for _, size, path in entries:
            if total <= cap * EVICT_TO:
                break
            path.unlink(missing_ok=True)
            total -= size
        _size[str(root)] = total
