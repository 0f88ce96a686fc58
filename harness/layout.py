"""Where an operator may read and write: column-major regions, batch strides, guard zones and poison.

A backend buffer is laid out as `guard | data | guard`. Guards hold a fixed byte pattern; the bytes of `data` that the
operator must never read (the unreferenced triangle of a symmetric A, the ld padding of inputs, gaps between
batches) hold a NaN "poison", so an operator that reads them produces NaN where the golden does not. After the call,
every byte outside the written region must be exactly what was uploaded.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GUARD_BYTES = 256
GUARD_PATTERN = np.frombuffer(b"\xa5\x5a\xc3\x3c" * (GUARD_BYTES // 4), dtype=np.uint8)
#: A quiet float32 NaN with a payload of our own, so a leaked poison value is recognisable in a dump.
POISON_F32 = np.frombuffer(np.uint32(0x7FC0_BEEF).tobytes(), dtype=np.float32)[0]


@dataclass
class Buffer:
    """One operator argument: its host contents and the masks that say what the operator may touch."""

    name: str
    host: np.ndarray           # 1-D float32 or complex64 storage, as uploaded
    null: bool = False         # pass a NULL pointer instead of this buffer
    output: bool = False       # C: the operator writes `written`
    written: np.ndarray | None = None   # bool mask over host elements the operator may write
    never_read: np.ndarray | None = None  # bool mask over host elements the operator must not read

    @property
    def nbytes(self) -> int:
        return int(self.host.nbytes)


def region_mask(total: int, rows: int, cols: int, ld: int, offset: int = 0,
                mask: np.ndarray | None = None) -> np.ndarray:
    """Mark the rows x cols column-major block at `offset` (leading dimension ld) in a bool mask of `total`."""
    if mask is None:
        mask = np.zeros(total, dtype=bool)
    if rows <= 0 or cols <= 0:
        return mask
    idx = (offset + np.arange(rows)[:, None] + ld * np.arange(cols)[None, :]).ravel()
    mask[idx[(idx >= 0) & (idx < total)]] = True  # invalid ld (<= 0) rows must still plan, not crash
    return mask


def triangle_mask(total: int, order: int, ld: int, upper: bool) -> np.ndarray:
    """Elements of the order x order column-major matrix in the upper (i <= j) or lower (i >= j) triangle."""
    mask = np.zeros(total, dtype=bool)
    if order <= 0:
        return mask
    i = np.arange(order)[:, None]
    j = np.arange(order)[None, :]
    keep = (i <= j) if upper else (i >= j)
    idx = (i + ld * j)[keep]
    mask[idx[(idx >= 0) & (idx < total)]] = True
    return mask


def poison(host: np.ndarray, never_read: np.ndarray | None) -> np.ndarray:
    """A copy of host with every never-read element set to the NaN poison (both parts for complex)."""
    out = host.copy()
    if never_read is not None and never_read.any():
        if np.iscomplexobj(out):
            out[never_read] = complex(POISON_F32, POISON_F32)
        else:
            out[never_read] = POISON_F32
    return out


def with_guards(host: np.ndarray) -> np.ndarray:
    """The bytes to upload: guard, data, guard."""
    return np.concatenate([GUARD_PATTERN, host.view(np.uint8).ravel(), GUARD_PATTERN])


def split_guards(raw: np.ndarray, nbytes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(front guard, data bytes, back guard) of a downloaded buffer."""
    return raw[:GUARD_BYTES], raw[GUARD_BYTES:GUARD_BYTES + nbytes], raw[GUARD_BYTES + nbytes:]


def changed_outside(before: np.ndarray, after: np.ndarray, written: np.ndarray | None) -> np.ndarray:
    """Indices of elements outside `written` whose bytes differ (NaN payloads included)."""
    itemsize = before.dtype.itemsize
    b = before.view(np.uint8).reshape(-1, itemsize)
    a = after.view(np.uint8).reshape(-1, itemsize)
    diff = (a != b).any(axis=1)
    if written is not None:
        diff &= ~written
    return np.flatnonzero(diff)
