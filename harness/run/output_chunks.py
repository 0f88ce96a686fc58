"""A row's outputs judged a chunk at a time, each chunk from the judge's own copy of it: the worker is untrusted and
may write the shared memory while the judge reads it, so every check rests on bytes copied once, and the judge never
holds a whole output beyond the elements its golden judges.

A chunk yields its guard-zone bytes (compared with the guard pattern), its elements outside the written region
(compared with the bytes uploaded there, kept apart from the host data: `Unwritten`) and the elements the golden
judges (gathered into one array). The problems read as `buffers.region_problems` words them for a whole copy.
"""
from __future__ import annotations

import numpy as np

from harness.run.buffers import changed_problem, guard_problem
from harness.tables.layout import Buffer, guard_pattern


class Unwritten:
    """The elements of an output outside its written region, as runs [start, stop) of storage indices, and the
    bytes uploaded there (unsigned words, run after run): what the untouched check compares the operator's output
    with once the host data is let go. A C whose ld and strides leave no gap holds nothing here."""

    def __init__(self, b: Buffer):
        self.word = np.dtype(f"u{b.host.dtype.itemsize}")
        words = b.host.view(self.word)
        written = np.zeros(words.size, bool) if b.written is None else b.written
        bounds = np.concatenate([[0], np.flatnonzero(written[1:] != written[:-1]) + 1, [words.size]]).astype(np.int64)
        free = ~written[bounds[:-1]] if words.size else np.zeros(bounds.size - 1, bool)
        self.starts, self.stops = bounds[:-1][free], bounds[1:][free]
        self.before = np.concatenate([[0], np.cumsum(self.stops - self.starts)]).astype(np.int64)
        self.words = np.concatenate([words[a:z] for a, z in zip(self.starts, self.stops)]) \
            if self.starts.size else np.zeros(0, self.word)

    def changed(self, lo: int, data: np.ndarray) -> np.ndarray:
        """Storage indices of the elements of `data` (the output's elements from `lo` on) outside the written
        region whose bytes differ from those uploaded (NaN payloads included)."""
        hi = lo + data.size
        first, last = np.searchsorted(self.stops, lo, "right"), np.searchsorted(self.starts, hi, "left")
        if first >= last:
            return np.zeros(0, np.int64)
        starts = np.maximum(self.starts[first:last], lo)
        stops = np.minimum(self.stops[first:last], hi)
        lengths = stops - starts
        # every index in the runs, one vector: each run's start repeated, plus the position inside the run
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        index = np.repeat(starts - offsets, lengths) + np.arange(int(lengths.sum()))
        rank = self.before[first] + (starts[0] - self.starts[first])  # the uploaded words of runs before `lo`
        return index[data.view(self.word)[index - lo] != self.words[rank:rank + index.size]]


class OutputChunks:
    """The outputs of one read of the shared memory, fed chunk by chunk (`feed`), judged as region_problems
    judges a whole copy (`problems`); `judged` holds the elements at `index` of the outputs' data one after the
    other (a sampled golden's storage indices), every element where `index` is None, none where `gather` is False.

    `outputs`: per output in plan order, (name, front guard bytes, data bytes, dtype, Unwritten)."""

    def __init__(self, outputs: list[tuple[str, int, int, np.dtype, Unwritten]], index: np.ndarray | None,
                 gather: bool):
        self.outputs = {o[0]: o[1:] for o in outputs}
        self.start: dict[str, int] = {}  # each output's first element in the outputs one after the other
        total = 0
        for name, _, nbytes, dtype, _ in outputs:
            self.start[name], total = total, total + nbytes // dtype.itemsize
        self.written = total - sum(o[4].words.size for o in outputs)  # elements the operator may write
        dtype = outputs[0][3] if outputs else np.dtype(np.float32)
        self.index = index
        if index is not None:
            self.order = np.argsort(index, kind="stable")
            self.sorted = index[self.order]
        self.judged = np.empty(0 if not gather else total if index is None else index.size, dtype)
        self.guards: dict[str, list[int]] = {name: [-1, -1] for name in self.outputs}  # first bad, last bad
        self.changed: dict[str, list[int]] = {name: [0, -1] for name in self.outputs}  # count, first
        self.gather = gather

    def feed(self, name: str, lo: int, part: np.ndarray) -> None:
        """The judge's copy of the bytes [lo, lo + part.size) of output `name`'s slot (guard, data, guard)."""
        front, nbytes, dtype, unwritten = self.outputs[name]
        hi, end = lo + part.size, front + nbytes
        guards = self.guards[name]
        if lo < front:
            bad = np.flatnonzero(part[:front - lo] != guard_pattern(min(front, hi))[lo:])
            if bad.size and guards[0] < 0:
                guards[0] = lo + int(bad[0])
        if hi > end:
            at = max(lo, end)
            bad = np.flatnonzero(part[at - lo:] != guard_pattern(hi - end)[at - end:])
            if bad.size:
                guards[1] = at - end + int(bad[-1])
        a, z = max(lo, front), min(hi, end)
        if a >= z:
            return
        data = part[a - lo:z - lo].view(dtype)
        first = (a - front) // dtype.itemsize
        bad = unwritten.changed(first, data)
        if bad.size:
            count = self.changed[name]
            count[1] = int(bad[0]) if count[0] == 0 else count[1]
            count[0] += int(bad.size)
        if self.gather:
            self._gather(self.start[name] + first, data)

    def _gather(self, first: int, data: np.ndarray) -> None:
        if self.index is None:
            self.judged[first:first + data.size] = data
            return
        i, j = np.searchsorted(self.sorted, [first, first + data.size])
        self.judged[self.order[i:j]] = data[self.sorted[i:j] - first]

    def problems(self, names: list[str] | None = None) -> list[str]:
        """What region_problems would say of the outputs' copies (of those `names`; default all): a guard zone
        overwritten, elements changed outside the written region."""
        problems = []
        for name in self.outputs if names is None else names:
            front = self.outputs[name][0]
            first_bad, last_bad = self.guards[name]
            if first_bad >= 0:
                problems.append(guard_problem(name, "before", front - first_bad))
            elif last_bad >= 0:
                problems.append(guard_problem(name, "after", last_bad + 1))
            count, first = self.changed[name]
            if count:
                problems.append(changed_problem(name, count, first, output=True))
        return problems
