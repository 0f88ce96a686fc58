"""The operator library is hostile code (issue 11): every fault of tests/native/hostile_proc.c is charged to the row
that caused it, the good rows around it pass, nothing is printed as a traceback, and the history database stays
whole with the runs made before. A library that cannot be loaded, created or destroyed is one line and exit 3."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from harness.run import handle, proctree
from processes import gone, harness, survivors
from run_files import check_history, strict_lines
from tables import csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[2]

#: m of the faulty row -> (verdict, words its reason must contain)
FAULTS = {
    101: ("FAIL", "timer armed (ITIMER_REAL"), 102: ("FAIL", "disposition of SIGUSR1"),
    103: ("FAIL", "signal mask (SIGTERM)"), 104: ("FAIL", "working directory to /"),
    105: ("FAIL", "environment (HOSTILE_LEFT)"), 106: ("FAIL", "umask from"),
    107: ("FAIL", "timer armed (ITIMER_REAL, "), 108: ("CRASH", "SIGABRT"),
    109: ("FAIL", "left 1 process(es) running"), 110: ("CRASH", "protocol garbage"),
    111: ("CRASH", "SIGKILL, which the harness did not send: possibly the kernel's out-of-memory killer"),
    112: ("CRASH", "exit code 0"), 113: ("TIMEOUT", "per-row limit"), 114: ("FAIL", "left 1 process(es) running"),
    115: ("FAIL", "RLIMIT_NOFILE"),
}


def test_every_fault_is_charged_to_its_own_row_and_the_harness_files_survive(tmp_path, hostile_proc_lib):
    rows = [csymm_row("TC_L0_good0", 4, 3)]
    for m in FAULTS:
        rows += [csymm_row(f"TC_L0_fault{m}", m, 2), csymm_row(f"TC_L0_good{m}", 5, 3)]
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    common = ["--operator-lib", str(hostile_proc_lib), "--report-dir", "r", "--history", "h.sqlite", "--timeout", "3"]
    first = harness(["run", str(table), "-k", "good", *common], tmp_path, HARNESS_TEST_MARK="before")
    assert first.wait(120) == 0, first.communicate()
    mark = uuid.uuid4().hex
    proc = harness(["run", str(table), "-n", "2", *common], tmp_path, HARNESS_TEST_MARK=mark)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err
    (report,) = [p for p in (tmp_path / "r").glob("*/report.json") if "good0" in p.read_text()
                 and "fault101" in p.read_text()]
    cases = {c["case_name"]: c for c in json.loads(report.read_text())["cases"]}
    for m, (verdict, words) in FAULTS.items():
        assert (cases[f"TC_L0_fault{m}"]["verdict"], words in cases[f"TC_L0_fault{m}"]["reason"]) == (verdict, True), \
            cases[f"TC_L0_fault{m}"]
        assert cases[f"TC_L0_good{m}"]["verdict"] == "PASS", cases[f"TC_L0_good{m}"]
    # 107 armed 30 s: what is left when the worker looks depends on the machine's load, not to the 0.1 s
    left = re.search(r"ITIMER_REAL, ([0-9.]+) s to go", cases["TC_L0_fault107"]["reason"])
    assert left and 20 < float(left[1]) <= 30, cases["TC_L0_fault107"]["reason"]
    assert cases["TC_L0_good0"]["verdict"] == "PASS"
    lines = strict_lines(report.parent / "results.jsonl")
    assert sorted(r["case_name"] for r in lines) == sorted(cases)
    db = check_history(tmp_path / "h.sqlite", runs=2)
    per_run = dict(db.execute("SELECT run_id, COUNT(*) FROM results GROUP BY run_id").fetchall())
    assert sorted(per_run.values()) == [len(FAULTS) + 1, len(cases)]
    assert gone(mark), "a process of the run survived it"


@pytest.mark.parametrize("fault,words", [
    ("HOSTILE_CTOR=exit0", "killed the probe worker while loading the library and creating a handle (exit code 0)"),
    ("HOSTILE_CTOR=segv", "while loading the library and creating a handle (signal SIGSEGV: invalid write of "
                          "address 0x0 (a NULL pointer) at pc in "),
    ("HOSTILE_CTOR=hang", "did not finish loading the library and creating a handle within 2 s"),
    ("HOSTILE_CREATE=fail", "aclblasCreate returned 6"),
    ("HOSTILE_CREATE=segv", "while loading the library and creating a handle (signal SIGSEGV: invalid write of "
                          "address 0x0 (a NULL pointer) at pc in "),
    ("HOSTILE_DESTROY=exit0", "while destroying its handle (aclblasDestroy) (exit code 0)"),
    ("HOSTILE_CREATE=hang", "did not finish loading the library and creating a handle within 2 s"),
    ("HOSTILE_DESTROY=hang", "did not finish destroying its handle (aclblasDestroy) within 2 s"),
])
def test_library_that_cannot_load_create_or_destroy_is_one_line_and_exit_3(tmp_path, hostile_proc_lib, fault, words):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_good", 4, 3)])
    name, value = fault.split("=")
    mark = uuid.uuid4().hex
    start = time.monotonic()
    proc = harness(["run", str(table), "--operator-lib", str(hostile_proc_lib), "--timeout", "2", "--report-dir", "r",
                    "--history", "h.sqlite"], tmp_path, HARNESS_TEST_MARK=mark, **{name: value})
    out, err = proc.communicate(timeout=120)
    # a hang ends within the row's limit (2 s) once the probe's interpreter is up (its start-up grace at most 30 s)
    assert time.monotonic() - start < 2 + handle.STARTUP_GRACE_S + 15, err
    assert proc.returncode == 3
    assert len(err.strip().splitlines()) == 1 and words in err, err
    assert not list(tmp_path.glob("r/*/report.json"))  # nothing ran, nothing is reported as if it had
    assert gone(mark)


def _run_until_rows_done(tmp_path: Path, hostile_proc_lib: Path, mark: str, done: int) -> tuple[subprocess.Popen, Path]:
    """A run whose last row forks a busy child and spins (m=113); returns once `done` rows are recorded and the
    spinning row has started."""
    good = [csymm_row(f"TC_L0_{i}", 3 + i % 4, 2) for i in range(done)]
    table = write_csymm_table(tmp_path / "csymm_test.csv", [*good, csymm_row("TC_L0_spin", 113, 2)])
    proc = harness(["run", str(table), "--operator-lib", str(hostile_proc_lib), "-n", "1", "--timeout", "600",
                    "--report-dir", "r", "--history", "h.sqlite"], tmp_path, HARNESS_TEST_MARK=mark)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = list((tmp_path / "r").glob("*/results.jsonl"))
        if found and len(found[0].read_text().splitlines()) >= done:
            time.sleep(0.5)  # the run now sits in the spinning row, its busy child forked
            return proc, found[0]
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the good rows did not finish in time")


def test_sigkill_of_the_harness_leaves_no_process_and_keeps_finished_rows(tmp_path, hostile_proc_lib):
    mark = uuid.uuid4().hex
    proc, stream = _run_until_rows_done(tmp_path, hostile_proc_lib, mark, done=4)
    assert len(survivors(mark)) >= 3  # the harness, its worker and the operator's busy child
    (worker,) = proctree.children(proc.pid)
    held = [os.readlink(f"/proc/{worker}/fd/{fd}") for fd in os.listdir(f"/proc/{worker}/fd")]
    assert [h for h in held if "h.sqlite" in h or "results.jsonl" in h] == [], held  # the harness's files
    assert "h.sqlite-shm" not in Path(f"/proc/{worker}/maps").read_text()  # nor its shared memory
    proc.kill()
    proc.communicate()
    assert gone(mark), "a worker or the operator's child outlived the harness"
    assert sorted(r["case_name"] for r in strict_lines(stream)) == [f"TC_L0_{i}" for i in range(4)]
    db = check_history(tmp_path / "h.sqlite", runs=1)
    assert db.execute("SELECT COUNT(*) FROM results WHERE verdict = 'PASS'").fetchone() == (4,)


@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_ends_within_2_s_with_reports_marked_interrupted(tmp_path, hostile_proc_lib, signum, code):
    mark = uuid.uuid4().hex
    proc, stream = _run_until_rows_done(tmp_path, hostile_proc_lib, mark, done=3)
    sent = time.monotonic()
    proc.send_signal(signum)
    while set(survivors(mark)) - {proc.pid} and time.monotonic() - sent < 5:
        time.sleep(0.02)
    assert time.monotonic() - sent < 2.0, "the running row (and the operator's child) did not end within 2 s"
    out, err = proc.communicate(timeout=60)  # then the reports of what finished are written
    assert proc.returncode == code
    assert "Traceback" not in out + err and len(err.strip().splitlines()) == 1 and "interrupted" in err, err
    report = json.loads((stream.parent / "report.json").read_text())
    assert report["interrupted"] is True and report["summary"]["total"] == 3
    assert all((stream.parent / f).is_file() for f in ("report.md", "report.html", "results.csv"))
    assert "运行被中断" in (stream.parent / "report.md").read_text()
    db = check_history(tmp_path / "h.sqlite", runs=1)
    finished, summary = db.execute("SELECT finished, summary FROM runs").fetchone()
    assert finished and json.loads(summary)["interrupted"] is True
    assert gone(mark, within_s=1.0)
