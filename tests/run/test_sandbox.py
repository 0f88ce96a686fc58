"""harness/run/sandbox.py on the cpu backend: a worker's buffers are the row's shared memory itself (Prepared with
the shared memory's descriptor), not a second copy of it; the copy path (no descriptor) is the negative control."""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

from harness.backends import open_backend
from harness.run import sandbox
from harness.run.row_judge import RowJudge
from harness.run.sandbox import BackendInfo
from harness.tables.load import load_table
from tables import csymm_row, write_csymm_table


def _anonymous_bytes() -> int:
    """This process's private anonymous resident bytes (RssAnon): a copy of the row's buffers would be here."""
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("RssAnon:"))
    return int(line.split()[1]) * 1024


def _row_mappings() -> int:
    return sum("harness-row" in line for line in Path("/proc/self/maps").read_text().splitlines())


@pytest.fixture
def backend():
    opened = open_backend("cpu", cores=1)
    yield opened
    opened.close()


@pytest.mark.parametrize("shared", [True, False])
def test_a_large_rows_buffers_add_no_private_copy_to_the_worker(tmp_path, backend, shared):
    """csymm 2048 x 1024: 64 MiB of buffers. Placed on the shared memory's pages, the sandbox's private memory
    grows by far less than one buffer; the copy path (no descriptor: negative control) grows by all of them."""
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_big", 2048, 1024)]))[0]
    judge = RowJudge(case, BackendInfo.of(backend), golden=False)
    judged = _row_mappings()  # the judge's view of the shared memory, and whatever other rows left mapped
    row_bytes = sum(s.size for s in judge.slots)
    assert row_bytes > 60 << 20
    before = _anonymous_bytes()
    prepared = sandbox.Prepared(judge.job, backend, judge.view, judge.fd if shared else None)
    try:
        grown = _anonymous_bytes() - before
        assert prepared.shared is shared
        if shared:
            assert grown < row_bytes // 8, f"{grown >> 20} MiB private for {row_bytes >> 20} MiB of buffers"
            assert _row_mappings() == judged + len(judge.slots)  # one more mapping of it per buffer
        else:
            assert grown > row_bytes * 9 // 10, f"the copy path grew only {grown >> 20} MiB"
    finally:
        prepared.close()
    assert _row_mappings() == judged, "a freed buffer still maps the row's shared memory (it would keep it alive)"
    judge.close()


def test_the_operator_writes_the_judges_bytes_in_place(tmp_path, backend):
    """A write through a buffer's device address is in the judge's shared memory at once, with nothing
    downloaded; the copy path shows it only after download (negative control)."""
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 5, 3)]))[0]
    judge = RowJudge(case, BackendInfo.of(backend), golden=False)
    c = next(s for s in judge.slots if s.name == "C")
    seen = {}
    try:
        for shared in (True, False):
            prepared = sandbox.Prepared(judge.job, backend, judge.view, judge.fd if shared else None)
            mark = 0x41 + shared
            ctypes.memset(prepared.ptrs["C"], mark, 8)
            seen[shared] = bytes(judge.view[c.offset + c.front:c.offset + c.front + 8])
            prepared.download()
            assert bytes(judge.view[c.offset + c.front:c.offset + c.front + 8]) == bytes([mark]) * 8
            prepared.close()
    finally:
        judge.close()
    assert seen[True] == b"\x42" * 8 and seen[False] != b"\x41" * 8


def test_a_pristine_c_is_put_back_into_the_shared_memory(tmp_path, backend):
    """restore_outputs (the timed loop's C put back before each call where the call reads C) writes the shared
    memory's pages themselves when the buffers are mapped from it."""
    from harness.model.settings import TimingConfig

    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_PF_a", 5, 3)]))[0]
    judge = RowJudge(case, BackendInfo.of(backend), golden=False, timing_config=TimingConfig())
    assert judge.job.accumulates and judge.job.timing is not None
    c = next(s for s in judge.slots if s.name == "C")
    prepared = sandbox.Prepared(judge.job, backend, judge.view, judge.fd)
    try:
        pristine = bytes(judge.view[c.offset:c.offset + c.size])
        assert prepared.call() == 0
        assert bytes(judge.view[c.offset:c.offset + c.size]) != pristine
        prepared.restore_outputs()
        assert bytes(judge.view[c.offset:c.offset + c.size]) == pristine
        assert np.array_equal(np.frombuffer(prepared.device_bytes(c), np.uint8), np.frombuffer(pristine, np.uint8))
    finally:
        prepared.close()
        judge.close()


@pytest.mark.parametrize("finish_late", [True, False])
def test_bytes_a_thread_finishes_after_the_call_returned_fail_the_checked_call(tmp_path, backend, monkeypatch,
                                                                                 finish_late):
    """The judge reads the live buffers some time after the call returned, so the sandbox digests them as the
    call returns: an operator that returns with C unfinished and completes it before the judge reads (a thread
    left running) FAILs although the judge read a right C. Negative control: the same row where nothing writes
    after the call PASSes."""
    from harness.run.row_judge import RowJudge as Judge

    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 5, 3)]))[0]
    judge = Judge(case, BackendInfo.of(backend))
    c = next(s for s in judge.slots if s.name == "C")
    done = {}
    real_call = sandbox.Prepared.call

    def unfinished_call(self):
        status = real_call(self)
        lo, hi = c.offset + c.front, c.offset + c.front + c.nbytes
        done["C"] = judge.view[lo:hi]
        if finish_late:
            judge.view[lo:hi] = bytes(c.nbytes)  # returned before its work was done: C not written yet
        return status

    def exchange(kind, payload):
        judge.view[c.offset + c.front:c.offset + c.front + c.nbytes] = done["C"]  # the thread finishes
        return judge.on_called(payload)

    monkeypatch.setattr(sandbox.Prepared, "call", unfinished_call)
    try:
        rec = judge.on_end({**sandbox.execute(judge.job, backend, judge.view, exchange, judge.fd), "leftovers": []})
    finally:
        judge.close()
    if finish_late:
        assert rec["verdict"] == "FAIL" and "changed after the call returned" in rec["reason"], rec["reason"]
    else:
        assert rec["verdict"] == "PASS", rec["reason"]
