"""Baseline tables beside the case tables: task-book limits and GPU baselines, loading, matching, writing."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.model import abi
from harness.perf.baselines import GPU_RATIO_RULE, Baseline, load_baselines, match, write_gpu_baseline

ROOT = Path(__file__).resolve().parents[2]
BASELINES = ROOT / "cases" / "baselines"


def test_committed_csymm_taskbook_limits():
    rows = load_baselines(BASELINES, "csymm")
    taskbook = [b for b in rows if b.kind == "taskbook"]
    assert [(b.key["m"], b.key["n"], b.value_us) for b in taskbook] == [
        ("256", "256", 7.53), ("1024", "1024", 89.27), ("1024", "1024", 86.34)]
    assert {b.hardware for b in taskbook} == {"Ascend 950PR"}
    assert all(b.method == "Avg time after warm-up, > 50 samples" and "3.3" in b.source for b in taskbook)
    assert all(b.ratio_rule is None and b.case_name is None for b in taskbook)


def test_taskbook_matches_by_integer_enum_value():
    rows = load_baselines(BASELINES, "csymm")
    by_int = match(rows, "TC_PF_0002", {"side": abi.SIDE_LEFT, "uplo": abi.LOWER, "m": 1024, "n": 1024})
    assert [b.value_us for b in by_int] == [89.27]
    by_name = match(rows, "any", {"side": "ACLBLAS_SIDE_RIGHT", "uplo": "ACLBLAS_UPPER", "m": "1024", "n": 1024})
    assert [b.value_us for b in by_name] == [86.34]
    assert match(rows, "TC_PF_0001", {"side": abi.SIDE_RIGHT, "uplo": abi.UPPER, "m": 256, "n": 256}) == []
    assert match(rows, "TC_PF_0001", {"side": abi.SIDE_LEFT, "uplo": abi.UPPER, "m": 256}) == []  # key n missing


def test_missing_files_give_no_baselines(tmp_path):
    assert load_baselines(tmp_path, "csymm") == []
    assert load_baselines(tmp_path / "absent", "sgemm_strided_batched") == []
    assert load_baselines(BASELINES, "sgemm_strided_batched") == []


def test_gpu_baseline_round_trip_and_name_matching(tmp_path):
    rows = [
        {"case_name": "TC_PF_0001", "transA": abi.OP_N, "transB": abi.OP_T, "m": 1024, "n": 1024, "k": 1024,
         "batchCount": 16, "gpu_ms": 0.25, "hardware": "NVIDIA H100", "driver": "550.54", "cuda": "12.4",
         "cublas": "12.4.5", "method": "CUDA events, per-call sync, warm-up 10, >= 50 samples, mean",
         "date": "2026-11-30"},
        {"case_name": "TC_PF_0002", "transA": abi.OP_C, "transB": abi.OP_N, "m": 64, "n": 64, "k": 64,
         "batchCount": 1, "gpu_ms": 0.004, "hardware": "NVIDIA H100", "driver": "550.54", "cuda": "12.4",
         "cublas": "12.4.5", "method": "m", "date": "2026-11-30"},
    ]
    path = tmp_path / "sgemm_strided_batched_gpu_baseline.csv"
    write_gpu_baseline(path, rows)
    lines = path.read_text().splitlines()
    assert lines[0] == "case_name,transA,transB,m,n,k,batchCount,gpu_ms,hardware,driver,cuda,cublas,method,date"
    assert lines[1].startswith("TC_PF_0001,ACLBLAS_OP_N,ACLBLAS_OP_T,1024,")
    assert '"CUDA events, per-call sync' in lines[1]
    loaded = load_baselines(tmp_path, "sgemm_strided_batched")
    assert [b.kind for b in loaded] == ["gpu", "gpu"]
    first = loaded[0]
    assert first.value_us == pytest.approx(250.0) and first.ratio_rule == GPU_RATIO_RULE == 0.4
    assert first.key["transA"] == "ACLBLAS_OP_N" and "12.4.5" in first.source
    params = {"transA": abi.OP_N, "transB": abi.OP_T, "m": 1024, "n": 1024, "k": 1024, "batchCount": 16}
    assert match(loaded, "TC_PF_0001", params) == [first]
    assert match(loaded, "TC_PF_0099", params) == []  # GPU rows are per case, not per shape


@pytest.mark.parametrize("text, where", [
    ("side,uplo,m,n,limit_us,hardware,source,method\nLEFT,UPPER,4,4,fast,x,y,z\n", ":2:5:"),
    ("side,uplo,m,n,limit_us,hardware,source,method\nLEFT,UPPER,4,4,-1,x,y,z\n", ":2:5:"),
    ("# note\nside,uplo,m,n,limit_us,hardware,source,method\n\nLEFT,UPPER,4,4,1.0,x,y\n", ":4:1:"),
    ("side,uplo,m,n,hardware,source,method\n", ":1:1:"),
])
def test_malformed_taskbook_is_rejected_with_file_line_column(tmp_path, text, where):
    (tmp_path / "csymm_taskbook.csv").write_text(text)
    with pytest.raises(ValueError) as err:
        load_baselines(tmp_path, "csymm")
    assert re.search(re.escape(str(tmp_path / "csymm_taskbook.csv")) + re.escape(where), str(err.value))


def test_malformed_gpu_baseline_is_rejected(tmp_path):
    (tmp_path / "csymm_gpu_baseline.csv").write_text(
        "case_name,side,uplo,m,n,gpu_ms,hardware,driver,cuda,cublas,method,date\n"
        ",LEFT,UPPER,4,4,0.1,h,d,c,b,m,2026-01-01\n")
    with pytest.raises(ValueError, match=r":2:1: empty case_name"):
        load_baselines(tmp_path, "csymm")


def test_write_rejects_rows_with_different_columns(tmp_path):
    good = {"case_name": "A", "m": 1, "gpu_ms": 1.0, "hardware": "h", "driver": "d", "cuda": "c", "cublas": "b",
            "method": "m", "date": "x"}
    with pytest.raises(ValueError, match="differ"):
        write_gpu_baseline(tmp_path / "x.csv", [good, {**good, "n": 2}])
    with pytest.raises(ValueError):
        write_gpu_baseline(tmp_path / "x.csv", [])


def test_baseline_is_frozen():
    b = Baseline("taskbook", "csymm", None, {"m": "1"}, 1.0, "h", "s", "m", None)
    with pytest.raises(AttributeError):
        b.value_us = 2.0  # type: ignore[misc]


# ---------------------------------------------------------------- where a table's baselines are found (issue 25)
TASKBOOK_HEADER = "side,uplo,m,n,limit_us,hardware,source,method\n"


def _task_table(folder: Path) -> Path:
    """A task table in a folder of its own (no baselines/ beside it): the task-book case 1 and a row no limit
    names."""
    from tables import csymm_row, write_csymm_table

    folder.mkdir(parents=True, exist_ok=True)
    return write_csymm_table(folder / "csymm_test.csv", [csymm_row("TC_PF_0001", 256, 256, lda="256"),
                                                         csymm_row("TC_PF_0002", 96, 96)])


def _cases(table: Path) -> dict:
    from harness.tables.load import load_cases

    return {c.name: c for c in load_cases([str(table)])}


def test_the_projects_baselines_serve_a_table_in_any_folder(tmp_path):
    from harness.commands.run import baselines_for

    cases = _cases(_task_table(tmp_path / "task"))
    assert [(b.kind, b.value_us) for b in baselines_for(cases["TC_PF_0001"])] == [("taskbook", 7.53)]
    (none,) = baselines_for(cases["TC_PF_0002"])
    assert none.kind == "none" and none.value_us is None
    assert none.source == f"no row of {BASELINES / 'csymm_taskbook.csv'} matches it (--baselines DIR adds a directory)"


def test_baselines_dirs_come_first_and_an_earlier_one_wins(tmp_path):
    from harness.perf import baselines
    from harness.commands.run import baselines_for

    table = _task_table(tmp_path / "task")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "csymm_taskbook.csv").write_text(TASKBOOK_HEADER + "LEFT,UPPER,256,256,5.0,Ascend 950PR,mine,Avg\n"
                                                               "LEFT,UPPER,96,96,2.5,Ascend 950PR,mine,Avg\n")
    assert baselines.search_dirs(table, (str(mine),)) == [mine, table.parent / "baselines", BASELINES]
    assert baselines.search_dirs(BASELINES.parent / "csymm_test.csv") == [BASELINES]      # each directory once
    cases = _cases(table)
    assert [b.value_us for b in baselines_for(cases["TC_PF_0001"], (str(mine),))] == [5.0]   # not also 7.53
    assert [b.value_us for b in baselines_for(cases["TC_PF_0002"], (str(mine),))] == [2.5]
    assert [b.value_us for b in baselines_for(cases["TC_PF_0001"])] == [7.53]                 # without --baselines


def test_a_row_no_baseline_matches_is_no_ref_with_the_reason_in_its_record():
    from harness.perf import verdict as perf

    none = baselines_lookup_none()
    timing = {"n": 50, "mean_us": 10.0, "ci95_us": [9.0, 11.0]}
    (entry,) = perf.baseline_verdicts(timing, [none], "Ascend 950PR")
    assert entry["kind"] == "none" and entry["verdict"] == "NO_REF" and entry["value_us"] is None
    assert entry["reason"] == none.source and "ssymm_taskbook.csv" in entry["reason"]


def baselines_lookup_none() -> Baseline:
    from harness.perf import baselines

    return baselines.unmatched("ssymm", [Path("/nonexistent/baselines")])


def test_run_warns_of_perf_rows_no_baseline_matches(tmp_path):
    import io

    from harness.commands.run import warn_unmatched

    cases = list(_cases(_task_table(tmp_path / "task")).values())
    out = io.StringIO()
    warn_unmatched(cases, (), out)
    assert out.getvalue() == ("harness run: warning: 1 of 2 csymm perf rows match no baseline and will be NO_REF "
                              f"(TC_PF_0002): no row of {BASELINES / 'csymm_taskbook.csv'} matches it (--baselines "
                              "DIR adds a directory)\n")
    out = io.StringIO()
    warn_unmatched([cases[0]], (), out)                       # every perf row judged: no warning
    assert out.getvalue() == ""


def test_run_with_an_unreadable_baseline_table_is_one_line_and_exit_3(tmp_path, capsys):
    from harness.cli import main

    table = _task_table(tmp_path / "task")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "csymm_taskbook.csv").write_text(TASKBOOK_HEADER + "LEFT,UPPER,256,256,fast,Ascend 950PR,mine,Avg\n")
    code = main(["run", str(table), "--baselines", str(bad), "--report-dir", str(tmp_path / "r"), "--history",
                 str(tmp_path / "h.sqlite")])
    err = capsys.readouterr().err
    assert code == 3 and err == f"harness run: {bad / 'csymm_taskbook.csv'}:2:5: limit_us 'fast' is not a number\n"
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").iterdir())
