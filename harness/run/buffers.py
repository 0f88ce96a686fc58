"""A row's host buffers as the judge plans them (the footprint refused before anything is allocated, never-read
regions poisoned) and the bytes the operator must not have touched afterwards."""
from __future__ import annotations

import numpy as np

from golden import sample
from harness.model import operators as ops
from harness.model.case import Case
from harness.model.settings import DEFAULT_MEMORY_CAP
from harness.run import memory as footprint
from harness.tables.layout import Buffer, changed_outside, guard_pattern, poison, split_guards


def outputs(bufs: dict[str, Buffer]) -> list[str]:
    """Names of the buffers the operator writes (C, or C_0..C_{b-1} of a pointer-array operator), in plan order."""
    return [name for name, b in bufs.items() if b.output]


def written_mask(bufs: dict[str, Buffer]) -> np.ndarray:
    """The outputs' written masks, concatenated like RowJudge.output."""
    masks = [bufs[n].written for n in outputs(bufs)]
    return masks[0] if len(masks) == 1 else np.concatenate(masks) if masks else np.zeros(0, bool)


def footprint_bytes(case: Case, fenced: bool = True) -> int:
    """The harness's estimated peak bytes for a case (buffers, copies, golden, truth, masks), before allocating;
    `fenced`: the backend has guard pages (small guard zones)."""
    spec = ops.get(case.op)
    sampled = case.is_perf and spec.flops(case.args) > sample.BUDGET_FLOPS
    return footprint.estimate(spec.buffer_bytes(case.args), sampled=sampled, device_zones=not fenced)


def plan(case: Case, use_poison: bool = True, memory_cap: int = DEFAULT_MEMORY_CAP,
         fenced: bool = True) -> dict[str, Buffer]:
    """Host buffers for a case, with never-read regions poisoned; refuses cases whose footprint would exceed the
    cap before allocating anything."""
    spec = ops.get(case.op)
    need = footprint_bytes(case, fenced)
    if need > memory_cap:
        raise MemoryError(f"the row needs an estimated {need / 2**30:.2f} GiB (buffers "
                          f"{spec.bytes_needed(case.args) / 2**30:.2f} GiB, plus copies, golden and truth), over "
                          f"the {memory_cap / 2**30:.2f} GiB cap")
    bufs = spec.buffers(case.args, case.seed)
    for b in bufs.values():
        if use_poison:
            b.host = poison(b.host, b.never_read)
        b.never_read = None  # poisoned now, and nothing after planning reads it: a byte per element not kept
    return bufs


def region_problems(bufs: dict[str, Buffer], after: dict[str, np.ndarray],
                    zones: dict[str, tuple[int, int]]) -> list[str]:
    """Bytes the operator must not have touched: guards, inputs, and output elements outside the written region
    (compared with what was uploaded: the guard pattern and each buffer's host data)."""
    problems = []
    for name, b in bufs.items():
        front, data, back = split_guards(after[name], b.nbytes, zones[name][0])
        for where, zone in (("before", front), ("after", back)):
            bad = np.flatnonzero(zone != guard_pattern(len(zone)))
            if bad.size:
                reach = len(zone) - bad[0] if where == "before" else bad[-1] + 1  # the farthest changed byte
                problems.append(guard_problem(name, where, int(reach)))
                break
        written = b.written if b.output else None
        bad = changed_outside(b.host, data.view(b.host.dtype), written)
        if bad.size:
            problems.append(changed_problem(name, int(bad.size), int(bad[0]), b.output))
    return problems


def guard_problem(name: str, where: str, reach: int) -> str:
    """A guard zone `where` ("before"/"after") buffer `name` overwritten, up to `reach` bytes from it: one wording
    for the judge's whole copies (region_problems) and its chunked reads (output_chunks)."""
    return f"{name}: guard zone {where} the buffer overwritten (out-of-bounds write, up to {reach} bytes {where} it)"


def changed_problem(name: str, count: int, first: int, output: bool) -> str:
    """`count` elements of buffer `name` changed where the operator must not write, the first at storage index
    `first`: outside an output's written region, or anywhere in an input."""
    what = "outside the written region (ld padding or batch gaps)" if output else "(input buffer)"
    return f"{name}: {count} element(s) changed {what}, first at storage index {first}"
