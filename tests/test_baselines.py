"""Baseline tables beside the case tables: task-book limits and GPU baselines, loading, matching, writing."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness import abi
from harness.baselines import GPU_RATIO_RULE, Baseline, load_baselines, match, write_gpu_baseline

ROOT = Path(__file__).resolve().parents[1]
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
