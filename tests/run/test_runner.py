"""The runner's parts on their own (harness/run/handle.py, library.py, phase.py, beside.py): records a service may
send are rebuilt from the case's own, the library file is watched for changes, device slots are dealt out, shared
precision rows are taken only when popped."""
from __future__ import annotations

import pytest

from harness.run import handle, library, phase
from harness.tables.load import load_table
from tables import csymm_row, write_csymm_table


@pytest.fixture
def case(tmp_path):
    return load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_PF_a", 4, 3)]))[0]


def test_a_service_record_is_rebuilt_with_only_its_own_keys(case):
    sent = {**case.new_record(), "verdict": "SKIP", "reason": "timed", "timing": {"mean_us": 1.0, "median_us": 1.0,
                                                                                  "min_us": 1.0, "n": 3,
                                                                                  "samples_us": [1.0, 1.0, 1.0]},
            "injected": "x", "op": "forged"}
    rec = handle.service_record(case, sent)
    assert rec["verdict"] == "SKIP" and rec["timing"]["n"] == 3
    assert "injected" not in rec and rec["op"] == case.op


@pytest.mark.parametrize("bad", [{"verdict": "PASS", "case_name": "other"}, {"verdict": "BOGUS"},
                                 {"verdict": "SKIP", "status": "0"}, {"verdict": "SKIP", "timing": {"mean_us": "1"}},
                                 {"verdict": "SKIP", "pair": [{}]}])
def test_a_malformed_service_record_is_garbage(case, bad):
    base = {k: case.new_record()[k] for k in ("case_name", "table", "line")}
    with pytest.raises(handle.Garbage):
        handle.service_record(case, {**base, **bad})


def test_the_library_file_is_watched(tmp_path):
    lib = tmp_path / "lib.so"
    lib.write_bytes(b"\x7fELF")
    opened = library.LibraryFile.open(str(lib), twin=False)
    assert opened.changed() == ""
    lib.write_bytes(b"\x7fELF!")
    assert "changed on disk during the run" in opened.changed()


def test_free_slots_is_a_multiset_difference():
    assert phase.free_slots([0, 0, 1, 2], [0, 2]) == [0, 1]


def test_claims_are_taken_only_by_popleft_never_by_testing_them():
    """Two judges share the precision rows through Claims, one from each end. Testing a queue is a question
    (run_phase asks it many times a turn): it must not take a row, else a row tested and never taken is lost to
    both judges until the end-of-run sweep."""
    import multiprocessing as mp

    from harness.run.beside import Claims

    cases = ["a", "b", "c"]
    bounds = mp.get_context("fork").Array("q", [0, len(cases)])
    front, back = Claims(cases, bounds, front=True), Claims(cases, bounds, front=False)
    for _ in range(5):
        assert front and back
    assert list(bounds) == [0, 3]  # nothing taken by asking
    assert (front.popleft(), back.popleft(), back.popleft()) == ("a", "c", "b")
    assert not front and not back and list(bounds) == [1, 1]
    with pytest.raises(IndexError):
        front.popleft()
