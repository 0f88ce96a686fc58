"""harness/run/output_chunks.py: outputs judged a chunk at a time say what region_problems says of a whole copy, and
gather exactly the elements a golden judges."""
from __future__ import annotations

import numpy as np
import pytest

from harness.run.buffers import region_problems
from harness.run.output_chunks import OutputChunks, Unwritten
from harness.tables.layout import Buffer, guard_pattern, region_mask


def _output(name: str, dtype, rows: int, cols: int, ld: int, batches: int, seed: int) -> Buffer:
    """A column-major C of `batches` rows x cols blocks (ld padding, a column's gap between batches)."""
    stride = ld * (cols + 1)
    total = stride * batches
    written = np.zeros(total, bool)
    for b in range(batches):
        region_mask(total, rows, cols, ld, b * stride, written)
    host = np.random.default_rng(seed).standard_normal(total * np.dtype(dtype).itemsize // 4).astype(np.float32)
    return Buffer(name, host.view(dtype), output=True, written=written)


def _slot(b: Buffer, zones: tuple[int, int]) -> np.ndarray:
    return np.concatenate([guard_pattern(zones[0]), b.host.view(np.uint8), guard_pattern(zones[1])])


def _fed(outputs: list[tuple[Buffer, tuple[int, int], np.ndarray]], chunk: int, index, gather=True) -> OutputChunks:
    judged = OutputChunks([(b.name, z[0], b.nbytes, b.host.dtype, Unwritten(b)) for b, z, _ in outputs], index,
                          gather)
    for b, _, raw in outputs:
        for lo in range(0, raw.size, chunk):
            judged.feed(b.name, lo, raw[lo:lo + chunk].copy())
    return judged


MUTATIONS = {
    "none": lambda raw, b, z: None,
    "inside the written region": lambda raw, b, z: raw.__setitem__(z[0] + int(np.flatnonzero(b.written)[3]) *
                                                                   b.host.itemsize, 0x11),
    "ld padding": lambda raw, b, z: [raw.__setitem__(z[0] + int(i) * b.host.itemsize + 1, 0x22)
                                     for i in np.flatnonzero(~b.written)[[2, 5, -1]]],
    "guard before": lambda raw, b, z: raw.__setitem__(z[0] - 7, 0),
    "guard after": lambda raw, b, z: raw.__setitem__(raw.size - 3, 0),
    "both guards": lambda raw, b, z: [raw.__setitem__(1, 0), raw.__setitem__(raw.size - 1, 0)],
}


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("mutation", list(MUTATIONS))
@pytest.mark.parametrize("chunk", [64, 200 * 8, 1 << 20])
def test_chunks_say_what_a_whole_copy_says(dtype, mutation, chunk):
    b = _output("C", dtype, rows=13, cols=7, ld=16, batches=3, seed=1)
    zones = (256, 256 + 40)
    raw = _slot(b, zones)
    MUTATIONS[mutation](raw, b, zones)
    whole = region_problems({"C": b}, {"C": raw}, {"C": zones})
    assert bool(whole) == (mutation not in ("none", "inside the written region"))  # the mutations are seen
    assert _fed([(b, zones, raw)], chunk, None).problems() == whole


@pytest.mark.parametrize("chunk", [64, 1000 * 8, 1 << 20])
def test_the_golden_elements_are_gathered_across_chunks_and_outputs(chunk):
    outs = [_output(f"C{i}", np.complex64, rows=9, cols=5, ld=11, batches=2, seed=i) for i in range(3)]
    zones = (256, 256)
    fed = [(b, zones, _slot(b, zones)) for b in outs]
    everything = np.concatenate([b.host for b in outs])
    index = np.random.default_rng(3).permutation(everything.size)[:40]  # any order, as a sample's index is
    assert np.array_equal(_fed(fed, chunk, index).judged, everything[index])
    assert np.array_equal(_fed(fed, chunk, None).judged, everything)
    assert _fed(fed, chunk, None, gather=False).judged.size == 0
    assert _fed(fed, chunk, None).written == sum(int(b.written.sum()) for b in outs)


def test_a_c_without_gaps_keeps_no_uploaded_bytes():
    b = _output("C", np.float32, rows=16, cols=7, ld=16, batches=1, seed=0)
    b.host, b.written = b.host[:16 * 7], b.written[:16 * 7]
    assert Unwritten(b).words.size == 0
    padded = _output("C", np.float32, rows=13, cols=7, ld=16, batches=1, seed=0)
    assert Unwritten(padded).words.size == int((~padded.written).sum())
