"""sgemm_batched is judged batch by batch, as the upstream test verifies it (one `Verifier::verifyVector` per C_i
over its ldc*n storage): the MIXED_TOLERANCE 99% matched ratio must hold in every batch, not only pooled."""
from __future__ import annotations

import numpy as np
import pytest

from harness.tables.load import load_table
from harness.judge import diagnosis
from harness.run import buffers, goldens
from harness.model import operators as ops

HEADER = "case_name,description,transA,transB,m,n,k,alpha,beta,lda,ldb,ldc,batchCount,a_fill,b_fill,c_fill\n"


@pytest.fixture
def row(tmp_path):
    """One 12 x 12 x 8 row of 4 batches (ldc 14: two rows of padding per column), its buffers and golden."""
    table = tmp_path / "sgemm_batched_test.csv"
    table.write_text(HEADER + "B1,four_batches,N,N,12,12,8,1.5,0.5,,,14,4,RANDOM_1,RANDOM_1,RANDOM_1\n")
    (case,) = load_table(table)
    bufs = ops.get("sgemm_batched").buffers(case.args, case.seed)
    expected, truth = ops.get("sgemm_batched").golden_result(case.args, bufs)
    return case, bufs, expected, truth


def off_by(expected: np.ndarray, bufs: dict, where: dict[int, int]) -> np.ndarray:
    """The golden with `where[b]` written elements of batch b moved by 0.004: outside atol + rtol*|g| for
    |g| < 4, inside the per-element cap max(1e-2, 32 ulp), so they only lower the matched ratio."""
    out = expected.copy()
    start = 0
    for b in range(4):
        size = bufs[f"C{b}"].host.size
        small = np.abs(expected[start:start + size]) < 4
        for i in np.flatnonzero(bufs[f"C{b}"].written & small)[:where.get(b, 0)]:
            out[start + i] += np.float32(0.004)
        start += size
    return out


def test_parts_are_each_batchs_whole_storage(row):
    case, bufs, expected, _ = row
    parts = ops.get("sgemm_batched").verify_parts(case.args, bufs)
    assert [label for label, _ in parts] == ["batch 0", "batch 1", "batch 2", "batch 3"]
    assert [len(index) for _, index in parts] == [14 * 12] * 4  # ldc * n, padding included, as upstream counts
    assert np.concatenate([index for _, index in parts]).tolist() == list(range(expected.size))


def test_a_batch_under_99_percent_fails_though_the_pooled_ratio_passes(row):
    case, bufs, expected, truth = row
    out = off_by(expected, bufs, {2: 3})  # 3 of batch 2's 168 elements: 98.2% there, 99.6% of all 672
    judged = goldens.judge_output(case, bufs, out, expected, truth)
    assert judged.verdict == "FAIL" and judged.reason.startswith("batch 2: mixed_tolerance"), judged.reason
    assert judged.metrics["matched_ratio"] == pytest.approx(165 / 168)
    assert judged.criteria["reported_part"] == "batch 2" and judged.criteria["verified_in_parts"] == 4
    # what the pooled judgement (the behaviour before per-batch parts) says of the same output: PASS
    mask = buffers.written_mask(bufs)
    pooled = diagnosis.judge(out, expected, truth, "mixed_tolerance")
    assert pooled.verdict == "PASS" and pooled.metrics["matched_ratio"] > 0.99
    assert diagnosis.judge(out[mask], expected[mask], truth[mask], "mixed_tolerance").verdict == "PASS"


def test_the_same_mismatches_spread_over_batches_pass(row):
    """Negative control: one mismatch in each of three batches keeps every batch at 99.4%."""
    case, bufs, expected, truth = row
    judged = goldens.judge_output(case, bufs, off_by(expected, bufs, {0: 1, 1: 1, 3: 1}), expected, truth)
    assert judged.verdict == "PASS" and judged.reason == ""
    assert judged.metrics["matched_ratio"] == pytest.approx(167 / 168)
    assert judged.criteria["reported_part"] in ("batch 0", "batch 1", "batch 3")


def test_operators_without_parts_are_judged_on_the_written_region_as_one(tmp_path):
    table = tmp_path / "ssymm_test.csv"
    table.write_text("case_name,description,side,uplo,m,n,alpha,lda,ldb,beta,ldc,a_fill,b_fill,c_fill\n"
                     "S1,t,LEFT,UPPER,6,5,1.5,8,7,0.5,7,RANDOM_0_1,RANDOM_0_1,RANDOM_0_1\n")
    (case,) = load_table(table)
    spec = ops.get("ssymm")
    bufs = spec.buffers(case.args, case.seed)
    expected, truth = spec.golden_result(case.args, bufs)
    judged = goldens.judge_output(case, bufs, expected.copy(), expected, truth)
    assert judged.verdict == "PASS" and "reported_part" not in judged.criteria
    assert not hasattr(spec, "verify_parts")
