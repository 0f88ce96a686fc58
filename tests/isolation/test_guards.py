"""Guards an operator cannot step over (issue 11): a hostile operator library of our own (tests/native/hostile_mem.c)
writes far out of bounds, late from a thread, through its const scalars, into an input, leaks memory, and misbehaves
on perf rows; each faulty row's verdict names the fault, the good rows around it PASS, nothing prints a traceback.
The same table on the CPU twin PASSes every row: the negative control that the checks do not fire on their own."""
from __future__ import annotations

import ctypes
import itertools
import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.run import memory as footprint
from harness.run import sandbox
from harness.backends import fence, open_backend
from harness.cli import main
from harness.run.row_judge import RowJudge, run_case
from harness.run.buffers import region_problems
from harness.tables.load import load_table
from harness.run.sandbox import BackendInfo
from harness.tables.layout import GUARD_BYTES, Buffer, guard_zones, region_mask, with_guards
from tables import csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[2]

#: row name -> (m of the row, fault armed for that m)
FAULTS = {
    "TC_L0_before": (11, "BEFORE"), "TC_L0_after": (12, "AFTER"), "TC_L0_late": (13, "LATE"),
    "TC_L0_alpha": (14, "ALPHA"), "TC_L0_beta": (15, "BETA"), "TC_L0_write_a": (16, "WRITE_A"),
    "TC_L0_leak": (17, "LEAK"),
    "TC_PF_nothing": (21, "NOTHING"), "TC_PF_nan": (22, "NAN"), "TC_PF_later": (23, "LATER"),
    "TC_PF_drift": (24, "DRIFT"), "TC_PF_drift_beta0": (25, "DRIFT"),
}
EXPECTED = {
    "TC_L0_before": ("CRASH", "out-of-bounds write 800 bytes before C (guard page)"),
    "TC_L0_after": ("CRASH", "out-of-bounds write 65536 bytes after the end of C (guard page)"),
    "TC_L0_late": ("FAIL", "C: guard zone before the buffer overwritten (out-of-bounds write, up to 16 bytes"),
    "TC_L0_alpha": ("FAIL", "alpha: the operator overwrote the const host scalar"),
    "TC_L0_beta": ("FAIL", "beta: the operator overwrote the const host scalar"),
    "TC_L0_write_a": ("FAIL", "A: 1 element(s) changed (input buffer)"),
    "TC_L0_leak": ("FAIL", "memory leak: the operator call left the worker 200 MiB more resident memory"),
    "TC_PF_nothing": ("FAIL", "mixed_tolerance"),
    "TC_PF_nan": ("FAIL", "NaN/Inf mismatch"),
    "TC_PF_later": ("FAIL", "during the timed calls: warm-up call 1 of "),  # named: the first call after the checked
    "TC_PF_drift": ("FAIL", "after the timed calls the output is wrong: mixed_tolerance"),  # re-called on C
    "TC_PF_drift_beta0": ("FAIL", "after the timed calls the output is wrong: mixed_tolerance"),  # last call judged
}


def _table(path: Path) -> Path:
    rows, good = [], 0
    for name, (m, _) in FAULTS.items():
        good += 1
        rows.append(csymm_row(f"{name[:5]}good{good}", 4 + good % 3, 3))
        rows.append(csymm_row(name, m, 3, beta="0,0" if name.endswith("beta0") else "0.5,-0.25"))
    rows.append(csymm_row("TC_PF_good_last", 9, 8))
    return write_csymm_table(path, rows)


def _run(tmp_path: Path, table: Path, *extra: str) -> tuple[int, dict[str, dict]]:
    code = main(["run", str(table), "--report-dir", str(tmp_path / "reports"), "--history",
                 str(tmp_path / "h.sqlite"), "--max-time", "0.1", "--warmup", "2", "--min-samples", "5", *extra])
    report = next((tmp_path / "reports").glob("*/report.json"))
    return code, {c["case_name"]: c for c in json.loads(report.read_text())["cases"]}


def test_every_hostile_fault_is_judged_and_named_and_the_good_rows_pass(tmp_path, hostile_mem_lib, monkeypatch,
                                                                       capfd):
    for fault in {f for _, f in FAULTS.values()}:
        monkeypatch.setenv(f"HOSTILE_{fault}_M", ",".join(str(m) for m, f in FAULTS.values() if f == fault))
    code, cases = _run(tmp_path, _table(tmp_path / "csymm_test.csv"), "--operator-lib", str(hostile_mem_lib), "-n", "2")
    assert code == 1
    for name, (verdict, reason) in EXPECTED.items():
        assert (cases[name]["verdict"], reason in cases[name]["reason"]) == (verdict, True), cases[name]["reason"]
    good = {n: c["verdict"] for n, c in cases.items() if n not in FAULTS}
    assert good and set(good.values()) == {"PASS"}, good
    assert "Traceback" not in capfd.readouterr().err
    assert cases["TC_L0_leak"]["memory"]["operator_growth_bytes"] >= 200 << 20
    assert cases["TC_PF_later"]["timing"] is not None  # the fault showed only on the timed calls
    assert "C: guard zone after the buffer overwritten" in cases["TC_PF_later"]["reason"]


def test_the_same_table_passes_every_row_on_the_twin(tmp_path):
    """Negative control: guards, scalars, late-write, leak and perf-row checks stay quiet for a correct operator."""
    code, cases = _run(tmp_path, _table(tmp_path / "csymm_test.csv"))
    assert {n: c["verdict"] for n, c in cases.items()} == {n: "PASS" for n in cases}
    assert code == 0
    perf = [c for c in cases.values() if c["is_perf"]]
    assert all(c["precision"] and c["timing"] for c in perf)  # perf rows judged like precision rows, then timed


def test_fault_note_names_the_buffer_and_is_read_once(own_tmp):
    note = fence.note_path(424242)
    note.write_text("out-of-bounds write 8 bytes before C (guard page)")
    assert fence.fault_note(424242) == "out-of-bounds write 8 bytes before C (guard page)"
    assert fence.fault_note(424242) == "" and not note.exists()


def test_cpu_buffers_sit_between_inaccessible_pages(own_tmp):
    """Touching one byte before or after a fenced buffer kills the process with SIGSEGV and leaves a note naming the
    buffer and the distance (checked in child processes); the buffer's own bytes are fine."""
    code = ("import ctypes, sys\nfrom harness.backends import fence\n"
            "addr = fence.alloc(100, 'C', (0, 100))\nctypes.memset(addr, 0, fence.PAGE)\n"
            "ctypes.string_at(addr + int(sys.argv[1]), 1)\n")
    outcome = {}
    for offset in (-1, fence.PAGE, 0, fence.PAGE - 1):
        child = subprocess.Popen([sys.executable, "-c", code, str(offset)], cwd=ROOT)
        outcome[offset] = (child.wait(), fence.fault_note(child.pid))
    assert outcome[-1][0] == outcome[fence.PAGE][0] == -signal.SIGSEGV
    assert outcome[-1][1].startswith("out-of-bounds read 1 bytes before C (guard page)")
    assert outcome[fence.PAGE][1].startswith(f"out-of-bounds read {fence.PAGE - 100} bytes after the end of C")
    assert outcome[0] == outcome[fence.PAGE - 1] == (0, "")


def test_guard_zones_cover_a_column_or_batch_off_device_and_fill_the_page_on_cpu():
    c = Buffer("C", np.zeros(1000, np.float32), output=True, reach=4096)
    assert guard_zones(c, fenced=False) == (16384, 16384)
    assert guard_zones(Buffer("A", np.zeros(3, np.float32), reach=1), fenced=False) == (GUARD_BYTES, GUARD_BYTES)
    front, back = guard_zones(c, fenced=True, granule=4096)
    assert front == GUARD_BYTES and (front + c.nbytes + back) % 4096 == 0 and back >= GUARD_BYTES


@pytest.mark.parametrize("total", [0, 1, 7, 30, 64])
def test_region_mask_marks_exactly_the_block_elements_that_fall_in_the_buffer(total):
    """The strided fast path (columns apart, block inside) and the index path agree with the definition: element
    offset + i + ld * j for i < rows, j < cols, where it lies in [0, total), for every shape, ld and offset a
    table may give (ld < rows, ld <= 0, blocks running off either end)."""
    for rows, cols, ld, offset in itertools.product(range(-1, 5), range(-1, 5), range(-2, 7), range(-3, 10, 3)):
        want = np.zeros(total, bool)
        for i in range(max(rows, 0)):
            for j in range(max(cols, 0)):
                if 0 <= offset + i + ld * j < total:
                    want[offset + i + ld * j] = True
        assert (region_mask(total, rows, cols, ld, offset) == want).all(), (rows, cols, ld, offset)
    both = region_mask(64, 3, 4, 5, 40, region_mask(64, 3, 4, 5, 0))  # batches marked into one mask
    assert np.flatnonzero(both).tolist() == [o + i + 5 * j for o in (0, 40) for j in range(4) for i in range(3)
                                             if o + i + 5 * j < 64]


def test_region_check_reports_how_far_a_guard_write_reached():
    """Negative control for the byte guard check itself: a changed guard byte is found, an unchanged one is not."""
    c = Buffer("C", np.arange(4, dtype=np.float32), output=True, written=np.ones(4, bool))
    zones = {"C": (GUARD_BYTES, GUARD_BYTES)}
    raw = with_guards(c.host, zones["C"])
    assert region_problems({"C": c}, {"C": raw.copy()}, zones) == []
    hit = raw.copy()
    hit[GUARD_BYTES - 40] ^= 0xFF
    assert region_problems({"C": c}, {"C": hit}, zones) == [
        "C: guard zone before the buffer overwritten (out-of-bounds write, up to 40 bytes before it)"]


def test_scalar_check_sees_the_memory_the_call_points_to(tmp_path):
    """The sandbox reports the bytes of the very objects the call passes; the judge compares them with its own:
    a changed one is reported, an untouched one is not."""
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 3, 2)]))[0]
    backend = open_backend("cpu", cores=1)
    try:
        judge = RowJudge(case, BackendInfo.of(backend))
        prepared = sandbox.Prepared(judge.job, backend, judge.view)
        assert prepared.call() == 0

        def sent() -> dict:
            return {k: bytes(v).hex() for k, v in prepared.scalars.items() if v is not None}
        assert judge._scalar_problems(sent()) == []
        prepared.scalars["beta"].imag = 9.0
        assert judge._scalar_problems(sent()) == ["beta: the operator overwrote the const host scalar it was given "
                                                  "by pointer"]
        prepared.close()
        judge.close()
    finally:
        backend.close()


@pytest.mark.parametrize("late", [False, True])
def test_end_of_row_check_catches_a_write_after_the_first_check(tmp_path, late):
    """What a thread left running does after the call: the end-of-row digests differ from the bytes the judge
    checked (here the write is the test's own, right after the first check, so the timing is certain); nothing
    is reported when nothing changed (the negative control)."""
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 3, 2)]))[0]
    backend = open_backend("cpu", cores=1)
    try:
        judge = RowJudge(case, BackendInfo.of(backend))

        def exchange(kind: str, payload: dict) -> bool:
            go = judge.on_called(json.loads(json.dumps(payload)))
            if late:
                ctypes.memset(payload["pointers"]["C"] - 8, 0x77, 4)
            return go
        end = sandbox.execute(judge.job, backend, judge.view, exchange)
        rec = judge.on_end({**end, "leftovers": []})
        if late:
            assert rec["verdict"] == "FAIL" and rec["reason"].startswith("late write: C changed after the call")
        else:
            assert rec["verdict"] == "PASS", rec["reason"]
    finally:
        backend.close()


def test_a_write_into_a_freed_buffer_faults_and_names_it(own_tmp):
    """Freed cpu buffers are quarantined (inaccessible, pages returned), so a thread writing after its row ended
    crashes with a note instead of scribbling on a later row's memory."""
    code = ("import ctypes\nfrom harness.backends import fence\n"
            "addr = fence.alloc(4096, 'C', (256, 1000))\nfence.free(addr)\nctypes.memset(addr + 300, 1, 1)\n")
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    assert child.wait() == -signal.SIGSEGV
    assert fence.fault_note(child.pid).startswith("out-of-bounds write into buffer C after its row ended (a thread "
                                                  "left running), offset 44")


def test_leak_threshold_is_stated_and_applied():
    from harness.run.row_judge import _leak
    assert _leak(None, 0, "x") == [] and _leak(footprint.LEAK_BYTES, 0, "x") == []
    assert _leak(footprint.LEAK_BYTES + 1, 0, "x") and not _leak(footprint.LEAK_BYTES + 1, 1 << 20, "x")


def test_memory_cap_refuses_a_row_on_its_estimated_footprint(tmp_path):
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 64, 64)]))[0]
    backend = open_backend("cpu", cores=1)
    try:
        buffers = 3 * 64 * 64 * 8
        rec = run_case(case, backend, memory_cap=buffers * 2)  # the buffers fit, the harness's footprint does not
        assert rec["verdict"] == "ERROR" and "refused before allocating" in rec["reason"]
        rec = run_case(case, backend)
        assert rec["verdict"] == "PASS"
        mem = rec["memory"]
        if mem["harness_peak_bytes"] is not None:
            assert 0 <= mem["harness_peak_bytes"] <= mem["harness_estimate_bytes"]
    finally:
        backend.close()


SGEMM_HEADER = ("case_name,description,transA,transB,m,n,k,alpha,beta,lda,strideA,ldb,strideB,ldc,strideC,batchCount,"
                "a_fill,b_fill,c_fill,expect_result,mere_threshold,mare_multiplier,random_seed")


def _sgemm_table(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join([SGEMM_HEADER, *rows]) + "\n")
    return path


def _sgemm_row(name: str, stride_c: str, batch: int, expect: str = "SUCCESS", ldc: str = "") -> str:
    return (f"{name},t,ACLBLAS_OP_N,ACLBLAS_OP_N,4,3,2,1,0,,,,,{ldc},{stride_c},{batch},RANDOM,RANDOM,RANDOM,"
            f"ACLBLAS_STATUS_{expect},0,0,5")


def test_overlapping_output_batches_are_refused_and_linted(tmp_path):
    from harness.tables.lint import lint_table
    table = _sgemm_table(tmp_path / "sgemm_strided_batched_test.csv", [
        _sgemm_row("TC_L0_compact", "", 3), _sgemm_row("TC_L0_short", "8", 3), _sgemm_row("TC_L0_zero", "0", 3),
        _sgemm_row("TC_L0_zero_one", "0", 1), _sgemm_row("TC_L0_gap", "20", 3),
        _sgemm_row("TC_L0_rejected", "8", 3, expect="INVALID_VALUE", ldc="3"),  # the operator must refuse it
    ])
    backend = open_backend("cpu", cores=1)
    try:
        verdicts = {c.name: run_case(c, backend) for c in load_table(table)}
    finally:
        backend.close()
    refused = {n for n, r in verdicts.items() if r["verdict"] == "ERROR"}
    assert refused == {"TC_L0_short", "TC_L0_zero"}
    assert "refused: output batches overlap (strideC=8 is smaller than one C's span (12 elements" in \
        verdicts["TC_L0_short"]["reason"]
    assert {n: r["verdict"] for n, r in verdicts.items() if n not in refused} == \
        {"TC_L0_compact": "PASS", "TC_L0_zero_one": "PASS", "TC_L0_gap": "PASS", "TC_L0_rejected": "PASS"}
    warned = {d.line: d for d in lint_table(str(table)) if "output batches overlap" in d.message}
    assert sorted(warned) == [3, 4] and warned[3].column == SGEMM_HEADER.split(",").index("strideC") + 1


def _sampled_against_full(case, divisor: float):
    """(full golden, full truth, sampled golden, sampled truth, index) of a case judged on a sample."""
    from harness.model import operators as ops
    from harness.run.buffers import plan
    spec, bufs = ops.get(case.op), plan(case)
    expected, truth = spec.golden_result(case.args, bufs)
    args, sub, index = spec.sample_problem(case.args, bufs, spec.flops(case.args) / divisor, case.seed)
    assert spec.sample_problem(case.args, bufs, spec.flops(case.args), case.seed) is None  # within budget: full
    assert bufs["C"].written[index].all() and len(set(index.tolist())) == index.size  # distinct written elements
    return expected, truth, *spec.golden_result(args, sub), index


@pytest.mark.parametrize("row", [
    csymm_row("TC_PF_left", 96, 80, fill="RANDOM_NORM_1"),
    csymm_row("TC_PF_right", 80, 96, side="ACLBLAS_SIDE_RIGHT", uplo="ACLBLAS_LOWER", ldc="90", ldb="85"),
])
def test_sampled_golden_equals_the_full_golden_where_it_samples(tmp_path, row):
    from golden import sample
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [row]))[0]
    expected, truth, got, got_truth, index = _sampled_against_full(case, 8)
    assert 0 < index.size < expected.size / 4
    # float32 BLAS blocking differs with the shape, so the golden agrees to rounding; the float64 truth closely
    assert np.allclose(got, expected[index], rtol=1e-5, atol=1e-4)
    assert np.allclose(got_truth, truth[index], rtol=1e-12)
    assert sample.BUDGET_FLOPS < 1e9


def test_sampled_sgemm_golden_covers_first_and_last_batch_and_column(tmp_path):
    row = ("TC_PF_b,t,ACLBLAS_OP_N,ACLBLAS_OP_T,24,40,16,1.5,0.5,30,900,50,1000,26,1100,9,RANDOM,RANDOM,RANDOM,"
           "ACLBLAS_STATUS_SUCCESS,0,0,3")
    case = load_table(_sgemm_table(tmp_path / "sgemm_strided_batched_test.csv", [row]))[0]
    expected, truth, got, got_truth, index = _sampled_against_full(case, 10)
    assert np.allclose(got, expected[index], rtol=1e-5, atol=1e-4)
    assert np.allclose(got_truth, truth[index], rtol=1e-12)
    assert {0, 8 * 1100 + 39 * 26 + 23} <= set(index.tolist())  # C_0[0, 0] and C_8[23, 39]
    assert index.size < 9 * 24 * 40 / 2


def test_a_wrong_element_inside_the_sample_fails_a_sampled_perf_row(tmp_path, monkeypatch):
    """Negative control for the sampled judgement: the judged elements are really compared."""
    from golden import sample
    monkeypatch.setattr(sample, "BUDGET_FLOPS", 1e4)
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_PF_s", 40, 30)]))[0]
    backend = open_backend("cpu", cores=1)
    try:
        rec = run_case(case, backend)
        assert rec["verdict"] == "PASS" and rec["precision"]["sampled"].endswith(" of 1200 elements")
        assert int(rec["precision"]["sampled"].split()[0]) < 1200
        original = sandbox.Prepared.call

        def corrupt_first(self):
            status = original(self)
            ctypes.memset(self.ptrs["C"], 0x41, 8)  # C[0, 0]: always in the sample
            return status
        monkeypatch.setattr(sandbox.Prepared, "call", corrupt_first)
        rec = run_case(case, backend)
        assert rec["verdict"] == "FAIL" and "mixed_tolerance" in rec["reason"]
    finally:
        backend.close()
