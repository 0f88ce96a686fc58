"""The judge never shares a process with the judged: goldens, checks and verdicts are computed by the harness from
its own copies, the worker only runs the operator in a confined sandbox and reports measurements. Each attack of
tests/native/hostile_judge.c (and a library built with -ffast-math) is charged to its own row by name, the good
rows around it PASS, nothing of the operator's output reaches the harness's terminal, no process is left, and the
history stays whole. The same rows on the plain toy library PASS: the negative control that no check fires alone."""
from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

from conftest import _native_lib
from harness.run import fpenv, sandbox
from harness.backends import open_backend
from harness.run.messages import Malformed
from harness.run.row_judge import RowJudge
from harness.tables.load import load_table
from harness.run.sandbox import BackendInfo
from processes import gone, harness, survivors
from run_files import strict_lines
from tables import CSYMM_HEADER, csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[2]

#: m of the faulty precision row -> (verdict, words its reason must contain)
FAULTS = {
    201: ("FAIL", "changed the SSE rounding mode to up"),
    202: ("FAIL", "unmasked floating-point exceptions (invalid, divide-by-zero, overflow"),
    203: ("FAIL", "set DAZ (denormals are zero) in MXCSR"),
    204: ("FAIL", "changed its scheduling priority (nice 0 -> 5)"),
    206: ("CRASH", "exit code 0"),
    207: ("ERROR", "malformed 'called' message"),
    208: ("FAIL", "mixed_tolerance"),
    209: ("FAIL", "mixed_tolerance"),
    210: ("FAIL", "A: 1 element(s) changed (input buffer)"),
    213: ("FAIL", "left 1 process(es) running"),
    216: ("FAIL", "late write: C changed after the call returned"),
}
if len(os.sched_getaffinity(0)) > 1:
    FAULTS[205] = ("FAIL", "changed its CPU affinity to [0]")


@pytest.fixture(scope="session")
def judge_lib(tmp_path_factory) -> Path:
    return _native_lib(tmp_path_factory, "hostile_judge", "-O1", "-pthread", "-lm")


@pytest.fixture(scope="session")
def fast_math_lib(tmp_path_factory) -> Path:
    """toy_ops.c as an ordinary -Ofast build: gcc links crtfastmath.o, which sets DAZ/FTZ when it is loaded."""
    return _native_lib(tmp_path_factory, "toy_ops", "-Ofast")


def _report(tmp_path: Path) -> dict:
    (path,) = (tmp_path / "r").glob("*/report.json")
    return json.loads(path.read_text())


def _cases(tmp_path: Path) -> dict[str, dict]:
    return {c["case_name"]: c for c in _report(tmp_path)["cases"]}


def _integrity(path: Path) -> None:
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()


def test_every_attack_on_the_judge_is_charged_to_its_row(tmp_path, judge_lib):
    rows = [csymm_row("TC_L0_good0", 4, 3)]
    for m in FAULTS:
        rows += [csymm_row(f"TC_L0_fault{m}", m, 2), csymm_row(f"TC_L0_good{m}", 5, 3)]
    # after an operator unmasked FE_INVALID, an innocent row with Inf inputs must not be a SIGFPE
    rows.append(csymm_row("TC_L0_inf_after", 6, 3, fill="VALUE_NORM_INF"))
    rows += [csymm_row("TC_L0_forge", 211, 2), csymm_row("TC_L0_noise", 212, 2)]
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    mark = uuid.uuid4().hex
    proc = harness(["run", str(table), "--operator-lib", str(judge_lib), "--report-dir", "r", "--history",
                    "h.sqlite", "--timeout", "20", "-n", "2"], tmp_path, HARNESS_TEST_MARK=mark)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err
    assert "ALL-GREEN" not in out + err and "HOSTILE-STDERR-LINE" not in out + err and "x" * 100 not in out + err
    cases = _cases(tmp_path)
    for m, (verdict, words) in FAULTS.items():
        got = cases[f"TC_L0_fault{m}"]
        assert (got["verdict"], words in got["reason"]) == (verdict, True), (m, got["verdict"], got["reason"])
        assert cases[f"TC_L0_good{m}"]["verdict"] == "PASS", cases[f"TC_L0_good{m}"]["reason"]
    assert cases["TC_L0_good0"]["verdict"] == "PASS"
    assert cases["TC_L0_inf_after"]["verdict"] == "PASS", cases["TC_L0_inf_after"]["reason"]
    # the forger found the harness's results.jsonl but could not write it; its words are in its own record
    forge = cases["TC_L0_forge"]
    assert forge["verdict"] == "PASS" and "forged 0" in forge["captured"]["text"], forge
    (stream,) = (tmp_path / "r").glob("*/results.jsonl")
    assert "FORGED" not in stream.read_text()
    assert sorted(r["case_name"] for r in strict_lines(stream)) == sorted(cases)
    noise = cases["TC_L0_noise"]["captured"]
    assert noise["bytes"] > 16 << 20 and "HOSTILE-STDERR-LINE" in noise["text"] and len(noise["text"]) < 64 << 10
    _integrity(tmp_path / "h.sqlite")
    assert gone(mark), f"processes left: {survivors(mark)}"


def test_the_same_rows_pass_on_a_library_that_attacks_nothing(tmp_path, toy_lib):
    """Negative control: the rows of the attack test, on the plain toy library, all PASS."""
    rows = [csymm_row(f"TC_L0_row{m}", m, 2) for m in list(FAULTS) + [211, 212]]
    rows.append(csymm_row("TC_L0_inf", 6, 3, fill="VALUE_NORM_INF"))
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    proc = harness(["run", str(table), "--operator-lib", str(toy_lib), "--report-dir", "r", "--history",
                    "h.sqlite"], tmp_path)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, out + err
    assert {c["verdict"] for c in _cases(tmp_path).values()} == {"PASS"}


def _subnormal_row(name: str) -> str:
    """A = 1e-39 (subnormal in float32), B = 1, alpha = 3e38: C must be m * 0.3 = 3; under DAZ it is 0."""
    return (f"{name},t,ACLBLAS_SIDE_LEFT,ACLBLAS_UPPER,10,2,3e38,0,VALUE_NORM_1EN39,,VALUE_NORM_1,,0,0,"
            "VALUE_NORM_0,,ACLBLAS_STATUS_SUCCESS,0,0,7")


@pytest.mark.parametrize("how", ["fast-math", "constructor", "plain"])
def test_a_library_that_sets_daz_when_loaded_fails_the_row_it_breaks(tmp_path, how, fast_math_lib, judge_lib,
                                                                     toy_lib):
    lib = {"fast-math": fast_math_lib, "constructor": judge_lib, "plain": toy_lib}[how]
    path = tmp_path / "csymm_test.csv"
    path.write_text("\n".join([CSYMM_HEADER, _subnormal_row("TC_L0_subnormal"), csymm_row("TC_L0_good", 4, 3)])
                    + "\n")
    env = {"HOSTILE_CTOR_DAZ": "1"} if how == "constructor" else {}
    proc = harness(["run", str(path), "--operator-lib", str(lib), "--report-dir", "r", "--history", "h.sqlite"],
                   tmp_path, **env)
    out, err = proc.communicate(timeout=300)
    assert "Traceback" not in out + err
    cases = _cases(tmp_path)
    if how == "plain":  # negative control: the golden is 3 and a correct library gives it
        assert proc.returncode == 0 and cases["TC_L0_subnormal"]["verdict"] == "PASS", out + err
        return
    sub = cases["TC_L0_subnormal"]
    assert proc.returncode == 1 and sub["verdict"] == "FAIL", sub
    assert "when it was loaded" in sub["reason"] and "-ffast-math?" in sub["reason"], sub["reason"]
    assert "DAZ" in sub["reason"]
    if how == "fast-math":
        assert cases["TC_L0_good"]["verdict"] == "PASS", cases["TC_L0_good"]["reason"]


def test_every_timed_call_is_checked(tmp_path, judge_lib):
    """Perf rows: a wrong C on timed call 5 put back on call 6, and calls that return before their work is done
    (a thread writes C 2 ms later), both FAIL; a good perf row beside them PASSes."""
    rows = [csymm_row("TC_PF_swap", 214, 3, beta="0,0"), csymm_row("TC_PF_later", 215, 3, beta="0,0"),
            csymm_row("TC_PF_good", 8, 3, beta="0,0"), csymm_row("TC_PF_good_beta", 9, 3)]
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    proc = harness(["run", str(table), "--operator-lib", str(judge_lib), "--report-dir", "r", "--history",
                    "h.sqlite", "--rounds", "1", "--min-samples", "8", "--max-time", "0.5"], tmp_path)
    out, err = proc.communicate(timeout=300)
    assert "Traceback" not in out + err
    cases = _cases(tmp_path)
    swap, later = cases["TC_PF_swap"], cases["TC_PF_later"]
    # call 7 after the checked call's 1 and the warm-up's: the call is named, and its output judged wrong
    assert swap["verdict"] == "FAIL" and re.search(r"(warm-up|timed) call \d+ of \d+: the output is wrong",
                                                   swap["reason"]), swap["reason"]
    # from call 2 on the calls return before the thread writes C: the first of them is judged wrong
    assert later["verdict"] == "FAIL" and re.search(r"warm-up call 1 of \d+: the output is wrong",
                                                    later["reason"]), later["reason"]
    assert cases["TC_PF_good"]["verdict"] == "PASS" and cases["TC_PF_good_beta"]["verdict"] == "PASS"


@pytest.mark.parametrize("m,verdict", [(217, "CRASH"), (218, "TIMEOUT")])
def test_a_settling_row_that_crashes_or_hangs_is_its_verdict_and_the_run_ends(tmp_path, judge_lib, m, verdict):
    """The cheapest perf row settles every fresh perf worker; when it crashes or hangs, that is its verdict (once),
    not a worker restarted forever."""
    rows = [csymm_row("TC_PF_bad", m, 1), csymm_row("TC_PF_good", 40, 40)]  # 8 m^2 n: 217^2 < 40^3 FLOPs
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    started = time.monotonic()
    proc = harness(["run", str(table), "--operator-lib", str(judge_lib), "--report-dir", "r", "--history",
                    "h.sqlite", "--timeout", "10", "--rounds", "2", "--max-time", "0.3"], tmp_path)
    out, err = proc.communicate(timeout=300)
    assert time.monotonic() - started < 200
    cases = _cases(tmp_path)
    assert cases["TC_PF_bad"]["verdict"] == verdict and "settling" in cases["TC_PF_bad"]["reason"]
    assert cases["TC_PF_good"]["verdict"] == "PASS", cases["TC_PF_good"]["reason"]
    assert proc.returncode == 1 and "Traceback" not in out + err


def test_a_daemon_that_left_the_subreaper_dies_with_the_harness(tmp_path, judge_lib):
    """m = 213 clears the worker's subreaper flag and double-forks a daemon; then the harness is SIGKILLed. The
    daemon lives in the worker's PID namespace, which ends with the worker."""
    rows = [csymm_row("TC_L0_daemon", 213, 2)] + [csymm_row(f"TC_L0_slow{i}", 219, 2) for i in range(40)]
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    mark = uuid.uuid4().hex
    proc = harness(["run", str(table), "--operator-lib", str(judge_lib), "--report-dir", "r", "--history",
                    "h.sqlite", "-n", "1"], tmp_path, HARNESS_TEST_MARK=mark)
    deadline = time.monotonic() + 120
    stream = None
    while time.monotonic() < deadline:
        found = list((tmp_path / "r").glob("*/results.jsonl"))
        if found and found[0].read_text().count("\n") >= 2:
            stream = found[0]
            break
        time.sleep(0.1)
    assert stream is not None, "the run never finished two rows"
    proc.kill()
    proc.communicate()
    assert gone(mark, within_s=10), f"processes outlived the harness: {survivors(mark)}"


def test_a_library_changed_during_the_run_makes_the_later_rows_error(tmp_path, judge_lib):
    lib = tmp_path / "libcopy.so"
    lib.write_bytes(judge_lib.read_bytes())
    rows = [csymm_row(f"TC_L0_slow{i}", 219, 2) for i in range(12)]
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    proc = harness(["run", str(table), "--operator-lib", str(lib), "--report-dir", "r", "--history", "h.sqlite",
                    "-n", "1"], tmp_path)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = list((tmp_path / "r").glob("*/results.jsonl"))
        if found and found[0].read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    with open(lib, "ab") as f:
        f.write(b"\0")
    out, err = proc.communicate(timeout=300)
    verdicts = [c["verdict"] for c in sorted(_cases(tmp_path).values(), key=lambda c: c["line"])]
    assert verdicts[:2] == ["PASS", "PASS"] and verdicts[-1] == "ERROR", verdicts
    last = max(_cases(tmp_path).values(), key=lambda c: c["line"])
    assert "changed on disk during the run" in last["reason"]
    assert proc.returncode == 1 and "Traceback" not in out + err


def test_provenance_is_the_harness_s_own_hash_of_the_library(tmp_path, toy_lib):
    import hashlib

    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 4, 3)])
    proc = harness(["run", str(table), "--operator-lib", str(toy_lib), "--report-dir", "r", "--history",
                    "h.sqlite"], tmp_path)
    proc.communicate(timeout=300)
    report = _report(tmp_path)
    assert report["backend_info"]["library_sha256"] == hashlib.sha256(toy_lib.read_bytes()).hexdigest()
    layers = report["backend_info"]["confinement"]
    assert layers and layers[0] == "no_new_privs", layers


def test_the_confined_worker_cannot_write_outside_its_note_directory(tmp_path):
    """In a confined process (the worker's layers, applied in a child), writing a file anywhere else is refused;
    the same write unconfined works (the negative control)."""
    from harness.run import confine

    if confine.landlock_abi() < 1:
        pytest.skip("requires Landlock (Linux >= 5.13, enabled)")
    notes, target = tmp_path / "notes", tmp_path / "harness-file"
    notes.mkdir()
    target.write_text("harness\n")
    code = ("import sys\nfrom harness.run import confine\nconfine.apply([sys.argv[1]])\n"
            "open(sys.argv[1] + '/note', 'w').write('ok')\n"
            "try:\n    open(sys.argv[2], 'a').write('forged')\nexcept PermissionError:\n    print('refused')\n")
    out = subprocess.run([sys.executable, "-c", code, str(notes), str(target)], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.strip() == "refused" and target.read_text() == "harness\n" and (notes / "note").read_text() == "ok"
    with open(target, "a") as f:
        f.write("unconfined\n")
    assert target.read_text().endswith("unconfined\n")


def test_the_judge_refuses_messages_out_of_order_or_mistyped(tmp_path):
    """Each message is validated against the protocol: wrong stage, missing or mistyped fields are Malformed
    (the runner's CRASH), never a KeyError in the harness."""
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 3, 2)]))[0]
    backend = open_backend("cpu", cores=1)
    try:
        for payload in [{"late": [], "threads_left": 0, "peak_growth": None, "leftovers": []}]:
            judge = RowJudge(case, BackendInfo.of(backend))
            with pytest.raises(Malformed, match="while the row is at 'job'"):
                judge.on_end(payload)
            judge.close()
        judge = RowJudge(case, BackendInfo.of(backend))
        with pytest.raises(Malformed, match="expected the fields"):
            judge.on_called({"status": 0, "verdict": "PASS"})
        judge.close()
        judge = RowJudge(case, BackendInfo.of(backend))
        good = {"status": 0, "growth": 0, "memory": {"workspace_bytes": None, "peak_bytes": None}, "scalars": {},
                "pointers": {}, "message": "", "fpenv": [], "digest": None}
        with pytest.raises(Malformed, match="field 'status' is str"):
            judge.on_called({**good, "status": "0"})
        judge.close()
    finally:
        backend.close()


def test_the_floating_point_environment_is_read_and_restored():
    import ctypes

    libm = ctypes.CDLL("libm.so.6")
    before = fpenv.read()
    libm.fesetround(0x800)  # FE_UPWARD
    assert fpenv.changes(before) and fpenv.read() == before
    assert fpenv.changes(before) == []  # negative control: nothing changed, nothing reported


def test_a_row_expecting_a_rejection_is_not_refused_by_the_memory_cap(tmp_path, toy_lib):
    """m = 2^31 - 1 with lda 1: a row that must be rejected (INVALID_VALUE) runs on inaccessible buffers instead of
    being refused as too large; the toy library validates lda first and never touches them."""
    row = csymm_row("TC_ED_huge", 2**31 - 1, 2, lda="1", expect="ACLBLAS_STATUS_INVALID_VALUE")
    table = write_csymm_table(tmp_path / "csymm_test.csv", [row])
    proc = harness(["run", str(table), "--report-dir", "r", "--history", "h.sqlite"], tmp_path)
    out, err = proc.communicate(timeout=300)
    case = _cases(tmp_path)["TC_ED_huge"]
    assert case["verdict"] == "PASS", case["reason"]
    assert proc.returncode == 0, out + err


def test_upstream_arch22_ssymm_table_passes_whole(tmp_path):
    table = ROOT.parent / "shared" / "data" / "ops-blas-csv" / "arch22" / "ssymm_test.csv"
    if not table.is_file():
        pytest.skip("the upstream ops-blas tables are not beside this checkout")
    proc = harness(["run", str(table), "--report-dir", "r", "--history", "h.sqlite", "-k", "not TC_PF"], tmp_path)
    out, err = proc.communicate(timeout=900)
    verdicts = {c["case_name"]: (c["verdict"], c["reason"]) for c in _cases(tmp_path).values()}
    bad = {k: v for k, v in verdicts.items() if v[0] != "PASS"}
    assert not bad and proc.returncode == 0, bad


def test_options_out_of_range_are_one_line_and_exit_3(tmp_path):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 4, 3)])
    for argv, env in [(["--device", "0-1000000000"], {}), (["--device", "all"], {"HARNESS_CPU_DEVICES": "100000000"}),
                      (["-k", "(" * 5000 + "a" + ")" * 5000], {})]:
        proc = harness(["run", str(table), "--report-dir", "r", *argv], tmp_path, **env)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 3 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, err)


def test_sighup_ends_the_run_like_sigterm_with_reports(tmp_path, judge_lib):
    rows = [csymm_row(f"TC_L0_slow{i}", 219, 2) for i in range(40)]
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    proc = harness(["run", str(table), "--operator-lib", str(judge_lib), "--report-dir", "r", "--history",
                    "h.sqlite", "-n", "1"], tmp_path)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(p.read_text().count("\n") >= 1
                                                  for p in (tmp_path / "r").glob("*/results.jsonl")):
        time.sleep(0.05)
    proc.send_signal(signal.SIGHUP)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGHUP, out + err
    assert _report(tmp_path)["interrupted"], "the report does not say the run was interrupted"
    assert "Traceback" not in out + err
