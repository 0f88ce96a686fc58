"""The CPU twin's aclblasSgemmStridedBatched against scipy's CBLAS sgemm per batch, through the ctypes shim. Inputs'
ld padding and batch gaps are NaN (never read); C's padding, batch gaps and a guard zone hold a sentinel that must
survive."""
from __future__ import annotations

import numpy as np
import pytest

from harness.model.abi import OP_C, OP_N, OP_T, Status
from sgemm_calls import Call, check

OPS = (OP_N, OP_T, OP_C)


@pytest.mark.parametrize("ta", OPS)
@pytest.mark.parametrize("tb", OPS)
def test_every_transpose_combination(twin, ta, tb):
    check(Call(ta, tb, 37, 29, 45, 1.25, -0.5, pads=(2, 3, 1), gaps=(5, 7, 3), seed=ta * tb), *twin)


@pytest.mark.parametrize("size", [1, 7, 8, 9, 127, 128, 129, 255, 256, 257])
def test_sizes_around_tile_edges(twin, size):
    check(Call(OP_N, OP_T, size, size, size, 0.75, 0.5, batch=2, seed=size), *twin)


@pytest.mark.parametrize("m,n,k", [(1, 300, 5), (300, 1, 9), (130, 70, 513), (9, 257, 1), (200, 129, 260)])
def test_rectangles(twin, m, n, k):
    check(Call(OP_T, OP_N, m, n, k, 1.5, 0.25, batch=2, pads=(1, 0, 2), seed=m + n + k), *twin)


@pytest.mark.parametrize("broadcast", ["A", "B", "AB"])
def test_stride_zero_broadcasts(twin, broadcast):
    check(Call(OP_N, OP_N, 21, 19, 17, 1.0, 0.5, batch=4, broadcast=broadcast, seed=4), *twin)


@pytest.mark.parametrize("alpha,beta,ldc_pad", [(1.0, 0.0, 0), (1.0, 0.0, 3), (1.0, 0.0, 8), (2.0, 0.0, 0),
                                                (1.0, 1.0, 0), (-1.0, 3.0, 5)])
def test_fast_and_general_paths(twin, alpha, beta, ldc_pad):
    """m = 16 makes ldc % 8 == 0 without padding (fast path when alpha == 1, beta == 0); pads 3 and 5 break it."""
    check(Call(OP_N, OP_N, 16, 40, 33, alpha, beta, pads=(0, 0, ldc_pad), gaps=(0, 0, 4), seed=11), *twin)


@pytest.mark.parametrize("alpha,k", [(0.0, 12), (1.5, 0), (0.0, 0)])
@pytest.mark.parametrize("beta", [0.0, -2.0])
def test_scale_only_path(twin, alpha, k, beta):
    """k == 0 or alpha == 0: C_i = beta * C_i; with beta == 0 C_i is zeroed even where it held NaN."""
    call = Call(OP_T, OP_N, 23, 11, k, alpha, beta, pads=(1, 1, 2), gaps=(0, 0, 5),
                c_fill=np.nan if beta == 0 else None)
    call.A.buf[:] = np.nan
    call.B.buf[:] = np.nan
    assert call.run(*twin) == Status.SUCCESS
    for i in range(call.batch):
        expected = np.zeros((23, 11), np.float32) if beta == 0 else np.float32(beta) * call.c_values[i]
        assert np.array_equal(call.C.view(i), expected)
    assert call.outside_untouched()


def test_beta_zero_general_path_never_reads_c(twin):
    call = Call(OP_N, OP_N, 13, 6, 5, 2.0, 0.0, c_fill=np.nan)
    assert call.run(*twin) == Status.SUCCESS
    assert all(np.isfinite(call.C.view(i)).all() for i in range(call.batch))


@pytest.mark.parametrize("alpha,k", [(0.0, 8), (1.0, 0)])
def test_quick_return_beta_one_does_not_write_c(twin, alpha, k):
    call = Call(OP_N, OP_N, 10, 4, k, alpha, 1.0, c_fill=np.nan)
    assert call.run(*twin) == Status.SUCCESS
    assert np.array_equal(call.C.buf.view(np.uint32), call.C.before.view(np.uint32))


@pytest.mark.parametrize("m,n,batch", [(0, 4, 2), (4, 0, 2), (4, 4, 0)])
def test_empty_calls_write_nothing(twin, m, n, batch):
    call = Call(OP_N, OP_N, m, n, 3, 1.0, 0.5, batch=max(batch, 1))
    call.batch = batch
    assert call.run(*twin) == Status.SUCCESS
    assert np.array_equal(call.C.buf.view(np.uint32), call.C.before.view(np.uint32))


@pytest.mark.parametrize("cores", [1, 2, 5])
def test_result_independent_of_core_count(twin, handle_with_cores, cores):
    check(Call(OP_T, OP_T, 260, 140, 70, 0.5, 2.0, batch=2, seed=cores), twin[0], handle_with_cores(cores))
