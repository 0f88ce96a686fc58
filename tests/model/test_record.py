"""harness.model.record: the record every row leaves (all contract keys, always), the summary counts, accepting a
DISPUTED row, and the one exit rule (`outcome`) that `harness run`, `report`, `merge` and report.json share."""
from __future__ import annotations

import pytest

from harness.model.exitcodes import Exit
from harness.model.record import Record, accept_disputed, exit_code, fails_run, new_record, outcome, summarize


def row(verdict: str, *, baseline: str | None = None, timed: bool = False, accepted: bool = False) -> Record:
    rec = new_record(f"TC_{verdict}", "csymm", "t.csv", 2, 0, is_perf=timed)
    rec["verdict"] = verdict
    if timed:
        rec["timing"] = {"mode": "sync", "n": 4, "samples_us": [1.0, 2.0, 3.0, 4.0]}
    if baseline:
        rec["baseline"] = [{"kind": "taskbook", "verdict": baseline}]
    if accepted:
        accept_disputed(rec)
    return rec


NPU = {"backend": "npu", "hardware": {"name": "Ascend 950PR", "detected": "Ascend 950PR", "override": None}}


def test_a_new_record_holds_every_contract_key_and_is_an_error_until_judged():
    rec = new_record("TC_L0_0001", "csymm", "cases/csymm_test.csv", 7, 0, params={"m": 4}, description="d")
    assert set(rec) == Record.__required_keys__
    assert rec["verdict"] == "ERROR" and rec["params"] == {"m": 4} and rec["baseline"] == []
    assert new_record("x", "op", "t", 1, None)["params"] == {}  # a fresh dict each time, never shared
    assert new_record("x", "op", "t", 1, None)["params"] is not new_record("x", "op", "t", 1, None)["params"]


def test_summary_counts_each_verdict_family():
    records = [row("PASS"), row("PASS"), row("FAIL"), row("ERROR"), row("CRASH"), row("TIMEOUT"), row("SKIP"),
               row("DISPUTED"), row("DISPUTED", accepted=True)]
    assert summarize(records) == {"total": 9, "passed": 2, "failed": 1, "errors": 1, "crashed": 1, "timeouts": 1,
                                  "skipped": 1, "disputed": 2, "disputed_accepted": 1}


def test_only_a_disputed_row_can_be_accepted_and_only_then_it_stops_failing_the_run():
    assert fails_run(row("DISPUTED")) and not fails_run(row("DISPUTED", accepted=True))
    failed = accept_disputed(row("FAIL"))
    assert "disputed_accepted" not in failed and fails_run(failed)
    assert not fails_run(row("PASS")) and not fails_run(row("SKIP"))


@pytest.mark.parametrize("records, meta, code", [
    ([row("PASS")], None, Exit.OK),
    ([row("PASS"), row("FAIL")], None, Exit.FAIL),
    ([row("CRASH")], None, Exit.FAIL),
    ([row("TIMEOUT"), row("SKIP")], None, Exit.FAIL),
    ([row("DISPUTED")], None, Exit.FAIL),
    ([row("DISPUTED", accepted=True)], None, Exit.OK),
    ([row("PASS", timed=True, baseline="FAIL")], None, Exit.FAIL),        # a perf FAIL fails the run
    ([row("PASS", timed=True, baseline="INCONCLUSIVE")], None, Exit.INSUFFICIENT),
    ([row("SKIP")], None, Exit.INSUFFICIENT),                             # nothing ran
    ([], None, Exit.INSUFFICIENT),
    ([row("PASS", timed=True, baseline="NO_REF")], None, Exit.OK),        # judged as a cpu run: nothing to judge
    ([row("PASS", timed=True, baseline="NO_REF")], {"backend": "cpu"}, Exit.OK),
    ([row("PASS", timed=True, baseline="NO_REF")], NPU, Exit.INSUFFICIENT),  # a device run judged no perf row
    ([row("PASS", timed=True)], NPU, Exit.INSUFFICIENT),
    ([row("PASS", timed=True, baseline="PASS"), row("PASS", timed=True, baseline="NO_REF")], NPU, Exit.OK),
    ([row("PASS")], NPU, Exit.OK),                                        # no row timed: no perf evidence owed
    ([row("FAIL", timed=True, baseline="NO_REF")], NPU, Exit.FAIL),       # a failure outranks missing evidence
    ([row("PASS", timed=True, baseline="NO_REF")], {"backend": "cuda", "hardware": "H100"}, Exit.INSUFFICIENT),
])
def test_the_one_exit_rule(records, meta, code):
    assert outcome(records, meta)[0] == code and exit_code(records, meta) == code


def test_an_unjudged_device_run_says_why_on_one_line():
    code, why = outcome([row("PASS", timed=True, baseline="NO_REF")], NPU)
    assert code == Exit.INSUFFICIENT and "no perf row got a judged baseline on Ascend 950PR" in why
    assert "\n" not in why
    assert outcome([row("PASS")], NPU) == (Exit.OK, "") and outcome([row("SKIP")], NPU) == (Exit.INSUFFICIENT, "")
