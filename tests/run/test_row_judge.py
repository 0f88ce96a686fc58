"""harness/run/row_judge.py on its own: RowJudge plans and judges a row from its own copies; run_case joins it to an
in-process sandbox for tests and tools."""
from __future__ import annotations

import numpy as np

from harness.backends import open_backend
from harness.run import goldens
from harness.run.row_judge import RowJudge, run_case
from harness.tables.load import load_table
from harness.run.sandbox import BackendInfo
from tables import csymm_row, write_csymm_table


def test_a_row_passes_and_a_wrong_output_in_the_shared_memory_fails(tmp_path):
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 5, 3)]))[0]
    backend = open_backend("cpu", cores=1)
    try:
        assert run_case(case, backend)["verdict"] == "PASS"
        from harness.run import sandbox

        judge = RowJudge(case, BackendInfo.of(backend))

        def exchange(kind, payload):
            slot = next(s for s in judge.slots if s.name == "C")
            data = np.frombuffer(judge.view, np.uint8, slot.nbytes, slot.offset + slot.front)
            data.view(np.complex64)[0] += 100  # what a worker would deliver for a wrong C[0, 0]
            return judge.on_called(payload)
        end = sandbox.execute(judge.job, backend, judge.view, exchange)
        rec = judge.on_end({**end, "leftovers": []})
        assert rec["verdict"] == "FAIL" and "mixed_tolerance" in rec["reason"]
    finally:
        backend.close()


def test_rows_needing_no_call_are_done_at_once(tmp_path):
    path = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_bad", 4, 3, alpha="x,0")])
    case = load_table(path)[0]
    judge = RowJudge(case, BackendInfo())
    assert judge.done is not None and judge.done["verdict"] == "ERROR" and judge.job is None
    skipped = RowJudge(load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 4, 3)]))[0],
                       BackendInfo(unsupported={"csymm": "lib.so does not export aclblasCsymm"}))
    assert skipped.done["verdict"] == "SKIP" and "does not export" in skipped.done["reason"]


def test_a_perf_row_timed_while_its_checked_call_is_judged_keeps_the_failure_and_drops_the_timing(tmp_path):
    """The runner lets the sandbox time a row once begin_called has read its status and copied its buffers, and
    judges that copy (end_called) while the timed calls run: when the copy fails, the row's verdict is that
    failure, its timing is dropped, and a crash or hang in the timed calls is said after it, not instead of it."""
    from harness.model.settings import TimingConfig
    from harness.run import sandbox

    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_PF_a", 5, 3)]))[0]
    tiny = TimingConfig(warmup=1, min_samples=4, max_time_s=0.05, warmup_max_time_s=0.01)
    backend = open_backend("cpu", cores=1)
    said = []

    def wrong_c(judge):
        slot = next(s for s in judge.slots if s.name == "C")
        np.frombuffer(judge.view, np.uint8, slot.nbytes, slot.offset + slot.front).view(np.complex64)[0] += 100

    try:
        judge = RowJudge(case, BackendInfo.of(backend), timing_config=tiny)

        def exchange(kind, payload):
            if kind == "called":
                wrong_c(judge)
                said.append(judge.begin_called(payload))
                said.append(judge.end_called())
                return said[0]
            if kind in ("sampling", "differs"):  # answered while the timed calls run
                return getattr(judge, f"on_{kind}")(payload)
            said.append(kind)
            return judge.on_timed(payload)
        end = sandbox.execute(judge.job, backend, judge.view, exchange)
        rec = judge.on_end({**end, "leftovers": []})
        assert said == [True, False, "timed"], "the row was not timed before its checked call was judged"
        assert rec["verdict"] == "FAIL" and "mixed_tolerance" in rec["reason"] and rec["timing"] is None

        crashed = RowJudge(case, BackendInfo.of(backend), timing_config=tiny)
        wrong_c(crashed)
        assert crashed.begin_called({"status": 0, "growth": None, "memory": {"workspace_bytes": None,
                                                                             "peak_bytes": None},
                                     "scalars": crashed.scalar_bytes, "pointers": {}, "message": "", "fpenv": [],
                                     "digest": None})
        assert crashed.end_called() is False
        rec = crashed.ended_early("CRASH", "the operator killed its worker process (SIGSEGV)")
        assert rec["verdict"] == "FAIL" and rec["reason"].startswith("mixed_tolerance")
        assert rec["reason"].endswith("then, in the timed calls: CRASH: the operator killed its worker process "
                                      "(SIGSEGV)")
    finally:
        backend.close()


def test_after_the_timed_calls_only_bytes_other_than_the_judged_ones_are_judged_again(tmp_path, monkeypatch):
    """on_timed judges the buffers again (untouched regions, precision) only when they differ from the bytes the
    checked call left; identical bytes (the judge's own digests) passed already. A wrong C after the timed calls
    is still a FAIL."""
    from harness.model.settings import TimingConfig
    from harness.run import sandbox
    from harness.run import row_judge

    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_PF_a", 5, 3)]))[0]
    tiny = TimingConfig(warmup=1, min_samples=4, max_time_s=0.05, warmup_max_time_s=0.01)
    judged = []
    judge_output = goldens.Golden.judge_elements  # every judgement of a golden (Golden.judge gathers, then this)
    monkeypatch.setattr(goldens.Golden, "judge_elements", lambda g, out: judged.append(1) or judge_output(g, out))
    backend = open_backend("cpu", cores=1)
    try:
        for wrong in (False, True):
            judged.clear()
            judge = RowJudge(case, BackendInfo.of(backend), timing_config=tiny)

            def exchange(kind, payload, judge=judge, wrong=wrong):
                if kind == "called":
                    return judge.on_called(payload)
                if kind in ("sampling", "differs"):  # answered while the timed calls run
                    return getattr(judge, f"on_{kind}")(payload)
                if wrong:  # C as a worker could leave it after its last sample
                    slot = next(s for s in judge.slots if s.name == "C")
                    data = np.frombuffer(judge.view, np.uint8, slot.nbytes, slot.offset + slot.front)
                    data.view(np.complex64)[0] += 100
                return judge.on_timed(payload)
            end = sandbox.execute(judge.job, backend, judge.view, exchange)
            rec = judge.on_end({**end, "leftovers": []})
            if wrong:
                # C changed after the sandbox's digest of the last call: the claim and the output both fail
                assert rec["verdict"] == "FAIL" and "after the timed calls the output is wrong" in rec["reason"]
                assert "not those the sandbox's digest of it claims" in rec["reason"]
                assert len(judged) == 2, "the changed output was not judged again"
            else:
                assert rec["verdict"] == "PASS" and rec["timing"]["n"] >= 1
                assert len(judged) == 1, "the same bytes were judged twice"
    finally:
        backend.close()


def test_a_chunked_read_digests_the_timed_parts_as_the_sandbox_does(tmp_path, monkeypatch):
    """_read's digest of all the buffers is the sandbox's sample digest of the timed parts, C's data left out
    after accumulating calls, across chunk boundaries."""
    from harness.run import row_judge
    from harness.run.sandbox import sample_digest, timed_parts

    monkeypatch.setattr(row_judge, "COPY_CHUNK_BYTES", 4096)  # several chunks a buffer, one across C's guard
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 40, 30)]))[0]
    judge = RowJudge(case, BackendInfo())
    try:
        raw = lambda s: memoryview(judge.view)[s.offset:s.offset + s.size]  # noqa: E731
        for accumulated in (False, True):
            _, _, claimed, _ = judge._read(judge_inputs=False, accumulated=accumulated)
            assert claimed == sample_digest(timed_parts(judge.slots, accumulated, raw))
        assert judge._read(False, True)[2] != judge._read(False, False)[2]  # C's data counts in one, not the other
    finally:
        judge.close()
