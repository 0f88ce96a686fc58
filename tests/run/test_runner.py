"""harness/run/runner.py on its own: records a service may send are rebuilt from the case's own, the library file is
watched for changes, device slots are dealt out."""
from __future__ import annotations

import pytest

from harness.run import runner
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
    rec = runner._checked(case, sent)
    assert rec["verdict"] == "SKIP" and rec["timing"]["n"] == 3
    assert "injected" not in rec and rec["op"] == case.op


@pytest.mark.parametrize("bad", [{"verdict": "PASS", "case_name": "other"}, {"verdict": "BOGUS"},
                                 {"verdict": "SKIP", "status": "0"}, {"verdict": "SKIP", "timing": {"mean_us": "1"}},
                                 {"verdict": "SKIP", "pair": [{}]}])
def test_a_malformed_service_record_is_garbage(case, bad):
    base = {k: case.new_record()[k] for k in ("case_name", "table", "line")}
    with pytest.raises(runner._Garbage):
        runner._checked(case, {**base, **bad})


def test_the_library_file_is_watched(tmp_path):
    lib = tmp_path / "lib.so"
    lib.write_bytes(b"\x7fELF")
    opened = runner.LibraryFile.open(str(lib), twin=False)
    assert opened.changed() == ""
    lib.write_bytes(b"\x7fELF!")
    assert "changed on disk during the run" in opened.changed()


def test_free_slots_is_a_multiset_difference():
    assert runner._free_slots([0, 0, 1, 2], [0, 2]) == [0, 1]
