"""Where an operator may read and write: column-major regions, batch strides, guard zones and poison.

A backend buffer is laid out as `guard | data | guard`. Guards hold a fixed byte pattern, large enough for the common
mistakes (one column or one batch off) on device backends; on the `cpu` backend, whose buffers sit between
inaccessible pages, they stay small and the back guard runs to the page end. The bytes of `data` that the
operator must never read (the unreferenced triangle of a symmetric A, the ld padding of inputs, gaps between
batches) hold a NaN "poison", so an operator that reads them produces NaN where the golden does not. After the call,
every byte outside the written region must be exactly what was uploaded. A pointer-array operator's matrices are
buffers of their own (own guards, own poison) and its pointer arrays are buffers that point at them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GUARD_BYTES = 256
#: Device guard zones cover one column or one batch of the buffer, up to this many bytes each side.
MAX_GUARD_BYTES = 64 << 20
_PATTERN = b"\xa5\x5a\xc3\x3c"
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
    reach: int = 0             # elements a common indexing mistake lands off the buffer: a column (ld), a batch
    #: A device array of pointers (uint64): entry i is the device address of buffer points_to[i], NULL for None.
    #: Its host is filled when the buffers are uploaded (engine.prepare_call), and checked unchanged afterwards.
    points_to: tuple[str | None, ...] | None = None

    @property
    def nbytes(self) -> int:
        return int(self.host.nbytes)


def span(rows: int, cols: int, ld: int) -> int:
    """Elements a column-major rows x cols matrix with leading dimension ld occupies (ld * cols, or less padding
    where ld < rows); 0 for an empty or impossible shape. A row-major matrix is the column-major cols x rows one."""
    return max(ld * cols, (rows - 1) + (cols - 1) * ld + 1) if rows > 0 and cols > 0 and ld > 0 else 0


def region_mask(total: int, rows: int, cols: int, ld: int, offset: int = 0,
                mask: np.ndarray | None = None) -> np.ndarray:
    """Mark the rows x cols column-major block at `offset` (leading dimension ld) in a bool mask of `total`."""
    if mask is None:
        mask = np.zeros(total, dtype=bool)
    if rows <= 0 or cols <= 0:
        return mask
    if ld >= rows and offset >= 0 and offset + (cols - 1) * ld + rows <= total:
        # columns apart and inside the mask: the block is a strided view of it (an index per element cost ~40 ns
        # each, 0.7 s for one 4096^2 matrix, on every perf row's every round)
        step = mask.strides[0]
        np.lib.stride_tricks.as_strided(mask[offset:], shape=(cols, rows), strides=(ld * step, step),
                                        writeable=True)[:] = True
        return mask
    idx = (offset + np.arange(rows)[:, None] + ld * np.arange(cols)[None, :]).ravel()
    mask[idx[(idx >= 0) & (idx < total)]] = True  # invalid ld (<= 0) rows must still plan, not crash
    return mask


def triangle_mask(total: int, order: int, ld: int, upper: bool) -> np.ndarray:
    """Elements of the order x order column-major matrix in the upper (i <= j) or lower (i >= j) triangle."""
    mask = np.zeros(total, dtype=bool)
    if order <= 0:
        return mask
    if ld >= order:  # columns apart: column j's triangle is one run of storage (a row of `np.tri` each)
        columns = np.zeros((order, ld), dtype=bool)
        columns[:, :order] = np.tri(order, dtype=bool) if upper else ~np.tri(order, k=-1, dtype=bool)  # no transpose
        kept = min(total, columns.size)
        mask[:kept] = columns.ravel()[:kept]
        return mask
    i = np.arange(order)[:, None]
    j = np.arange(order)[None, :]
    keep = (i <= j) if upper else (i >= j)
    idx = (i + ld * j)[keep]
    mask[idx[(idx >= 0) & (idx < total)]] = True
    return mask


def poison(host: np.ndarray, never_read: np.ndarray | None) -> np.ndarray:
    """host with every never-read element set to the NaN poison (both parts for complex): in place where it is
    writable (the buffers are planned afresh for each row; a poisoned copy beside them was the planning's peak)."""
    out = host if host.flags.writeable else host.copy()
    if never_read is not None and never_read.any():
        if np.iscomplexobj(out):
            out[never_read] = complex(POISON_F32, POISON_F32)
        else:
            out[never_read] = POISON_F32
    return out


def guard_zones(buf: Buffer, fenced: bool, granule: int = 1) -> tuple[int, int]:
    """(front, back) guard bytes of a buffer. Behind guard pages (`fenced`) a zone is GUARD_BYTES; otherwise it
    covers one column or batch (`reach`), 64-byte aligned so the data stays aligned. The back zone runs up to a
    multiple of `granule` (the page size on `cpu`), so no byte next to the data goes unchecked."""
    itemsize = buf.host.dtype.itemsize
    zone = GUARD_BYTES if fenced else min(MAX_GUARD_BYTES, max(GUARD_BYTES, -(-buf.reach * itemsize // 64) * 64))
    return zone, zone + (-(2 * zone + buf.nbytes)) % granule


def guard_pattern(nbytes: int) -> np.ndarray:
    return np.frombuffer(_PATTERN * (nbytes // len(_PATTERN) + 1), dtype=np.uint8)[:nbytes]


def with_guards(host: np.ndarray, zones: tuple[int, int] = (GUARD_BYTES, GUARD_BYTES)) -> np.ndarray:
    """The bytes to upload: guard, data, guard."""
    return np.concatenate([guard_pattern(zones[0]), host.view(np.uint8).ravel(), guard_pattern(zones[1])])


def split_guards(raw: np.ndarray, nbytes: int,
                 front: int = GUARD_BYTES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(front guard, data bytes, back guard) of a downloaded buffer."""
    return raw[:front], raw[front:front + nbytes], raw[front + nbytes:]


def changed_outside(before: np.ndarray, after: np.ndarray, written: np.ndarray | None) -> np.ndarray:
    """Indices of elements outside `written` whose bytes differ (NaN payloads included)."""
    word = np.dtype(f"u{before.dtype.itemsize}")  # one integer compare per element (8: complex64, 4: float32)
    diff = before.view(word) != after.view(word)
    if written is not None:
        diff &= ~written
    return np.flatnonzero(diff)
