"""`harness run --junitxml PATH`: the run as JUnit XML a CI system reads. Each verdict maps to the element CI counts
(FAIL and an unaccepted DISPUTED -> <failure>, ERROR/CRASH/TIMEOUT -> <error>, SKIP -> <skipped>, a perf FAIL
against a baseline -> <failure>), with the reason as the message; a row only timed (NO_REF) is a pass with its perf
verdict as a property, never a failure (the control). End to end through the real command line, too."""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.model.record import new_record
from harness.reports.junit import junit_document
from tables import csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[2]
META = {"run_id": "r1", "started": "2026-01-01T00:00:00", "host": {"hostname": "box"},
        "hardware": {"name": "cpu twin (2 emulated cores)"}}


def row(name: str, verdict: str, reason: str = "", table: str = "cases/csymm_test.csv", **extra) -> dict:
    return new_record(name, "csymm", table, 7, 0) | {"verdict": verdict, "reason": reason, "duration_s": 0.25} | extra


def cases(records: list[dict], meta: dict = META) -> dict[str, ET.Element]:
    root = ET.fromstring(ET.tostring(junit_document(meta, records).getroot()))  # what a CI parser reads back
    return {tc.get("name"): tc for tc in root.iter("testcase")}


@pytest.mark.parametrize("verdict, element", [("FAIL", "failure"), ("DISPUTED", "failure"), ("ERROR", "error"),
                                              ("CRASH", "error"), ("TIMEOUT", "error"), ("SKIP", "skipped")])
def test_each_verdict_is_the_element_ci_counts_with_its_reason(verdict, element):
    case = cases([row("TC_X", verdict, f"{verdict.lower()}: why")])["TC_X"]
    found = case.find(element)
    assert found is not None and found.get("message") == f"{verdict.lower()}: why"
    assert [c.tag for c in case if c.tag != "properties"] == [element]
    assert case.get("classname") == "csymm_test" and case.get("file") == "cases/csymm_test.csv"
    assert case.get("line") == "7" and case.get("time") == "0.250"


def test_passes_and_accepted_disputes_have_no_failure_and_perf_verdicts_are_properties():
    timed = {"timing": {"n": 50, "mean_us": 10.0}}
    no_ref = [{"kind": "taskbook", "verdict": "NO_REF", "value_us": 7.53, "hardware": "Ascend 950PR",
               "measured_mean_us": 10.0}]
    got = cases([row("TC_OK", "PASS"), row("TC_ACC", "DISPUTED", "gate", disputed_accepted=True),
                 row("TC_PF_1", "PASS", baseline=no_ref, **timed),
                 row("TC_PF_2", "PASS", baseline=[{**no_ref[0], "verdict": "FAIL", "reason": ""}], **timed)])
    for name in ("TC_OK", "TC_ACC", "TC_PF_1"):
        assert [c.tag for c in got[name]] == ["properties"], name
    props = {p.get("name"): p.get("value") for p in got["TC_PF_1"].iter("property")}
    assert props["perf"] == ("NO_REF (timed on cpu twin (2 emulated cores); task-book limits hold on Ascend "
                             "950PR)") and props["verdict"] == "PASS"
    failure = got["TC_PF_2"].find("failure")  # a baseline FAIL fails the run, so it fails the testcase
    assert failure is not None and failure.get("type") == "PERF_FAIL" and "7.53" in failure.get("message")


def test_suites_per_table_with_counts_and_text_xml_cannot_carry():
    records = [row("TC_A", "PASS"), row("TC_B", "FAIL", "bad \x1b[31m\x00 byte"),
               row("TC_C", "SKIP", "no op", table="cases/ssymm_test.csv")]
    root = junit_document(META, records).getroot()
    suites = {s.get("name"): s for s in root}
    assert set(suites) == {"csymm_test.csv", "ssymm_test.csv"}
    assert (suites["csymm_test.csv"].get("tests"), suites["csymm_test.csv"].get("failures")) == ("2", "1")
    assert (root.get("tests"), root.get("failures"), root.get("skipped"), root.get("errors")) == ("3", "1", "1", "0")
    assert cases(records)["TC_B"].find("failure").get("message") == "bad \\x1b[31m\\x00 byte"


def _run(tmp_path: Path, lib: Path, junit: str) -> subprocess.CompletedProcess:
    table = write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L0_ok", 4, 3), csymm_row("TC_L0_bad", 4, 3, expect="ACLBLAS_STATUS_INVALID_VALUE")])
    return subprocess.run([sys.executable, "-m", "harness.cli", "run", str(table), "--operator-lib", str(lib),
                           "--report-dir", str(tmp_path / "r"), "--history", str(tmp_path / "h.sqlite"), "-n", "1",
                           "--junitxml", junit], cwd=ROOT, capture_output=True, text=True, timeout=240)


def test_harness_run_writes_the_junit_xml(tmp_path, toy_lib):
    xml = tmp_path / "ci" / "junit.xml"
    result = _run(tmp_path, toy_lib, str(xml))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"JUnit XML: {xml}" in result.stdout.splitlines()
    got = {tc.get("name"): tc for tc in ET.parse(xml).getroot().iter("testcase")}
    assert set(got) == {"TC_L0_ok", "TC_L0_bad"} and got["TC_L0_ok"].find("failure") is None
    assert "expected ACLBLAS_STATUS_INVALID_VALUE" in got["TC_L0_bad"].find("failure").get("message")


def test_an_unwritable_junit_path_is_one_line_and_exit_3(tmp_path, toy_lib):
    (tmp_path / "file").write_text("")
    result = _run(tmp_path, toy_lib, str(tmp_path / "file" / "junit.xml"))
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert result.stderr.strip().startswith(f"harness run: --junitxml {tmp_path / 'file'}: ")
    assert len(result.stderr.strip().splitlines()) == 1
