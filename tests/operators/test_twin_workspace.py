"""Workspace of aclblasSgemmStridedBatched on the CPU twin: the general path's peak is n * CeilAlign(m, 8) * 4 bytes,
independent of batchCount; other paths use none; a too-small user workspace fails and says how many bytes."""
from __future__ import annotations

import numpy as np
import pytest

from harness.model.abi import OP_N, OP_T, Status
from harness.backends import aclblas_lib
from harness.backends.build import build_twin
from harness.ops import csymm as csymm_op
from harness.ops import sgemm_strided_batched as sgemm_op


@pytest.fixture()
def twin():
    """A fresh handle per test: workspace state (user buffer, statistics) is per handle."""
    lib = aclblas_lib.load_aclblas(str(build_twin()))
    handle = aclblas_lib.create_handle(lib)
    yield lib, handle
    aclblas_lib.destroy_handle(lib, handle)


def expected_bytes(m: int, n: int) -> int:
    return n * (-(-m // 8) * 8) * 4


def run(lib, handle, m, n, k, alpha, beta, batch, ldc=None, c=None) -> int:
    ldc = ldc or m
    a = np.ones(m * k * batch + 1, np.float32)
    b = np.ones(k * n * batch + 1, np.float32)
    c = c if c is not None else np.zeros(ldc * n * batch + 1, np.float32)
    return sgemm_op.invoke(lib, handle, OP_N, OP_T, m, n, k, alpha, a.ctypes.data, m, m * k,
                                             b.ctypes.data, n, k * n, beta, c.ctypes.data, ldc, ldc * n, batch)


@pytest.mark.parametrize("m,n", [(1, 1), (7, 3), (8, 5), (9, 130), (130, 9), (257, 64)])
@pytest.mark.parametrize("batch", [1, 6])
def test_general_path_peak_is_the_formula(twin, m, n, batch):
    lib, handle = twin
    assert run(lib, handle, m, n, 4, 2.0, 0.5, batch) == Status.SUCCESS
    assert aclblas_lib.workspace_stats(lib, handle) == (expected_bytes(m, n), expected_bytes(m, n))


def test_peak_does_not_grow_with_batch_count(twin):
    lib, handle = twin
    peaks = []
    for batch in (1, 2, 9):
        lib.aclblasTwinResetWorkspaceStats(handle)
        assert run(lib, handle, 24, 10, 3, 1.5, 0.0, batch) == Status.SUCCESS
        peaks.append(aclblas_lib.workspace_stats(lib, handle)[0])
    assert peaks == [expected_bytes(24, 10)] * 3


@pytest.mark.parametrize("alpha,beta,k,m", [(1.0, 0.0, 5, 16),   # fast path: alpha 1, beta 0, ldc % 8 == 0
                                            (0.0, 2.0, 5, 16),   # scale only
                                            (1.0, 3.0, 0, 16),   # k == 0: scale only
                                            (0.0, 1.0, 5, 16)])  # quick return
def test_paths_without_workspace(twin, alpha, beta, k, m):
    lib, handle = twin
    assert run(lib, handle, 40, 12, 4, 2.0, 0.5, 1) == Status.SUCCESS  # leaves a non-zero "current"
    assert run(lib, handle, m, 7, k, alpha, beta, 3) == Status.SUCCESS
    assert aclblas_lib.workspace_stats(lib, handle) == (expected_bytes(40, 12), 0)


def test_fast_path_needs_ldc_multiple_of_8(twin):
    """alpha 1, beta 0 but ldc = 17: the general path, with its temp."""
    lib, handle = twin
    assert run(lib, handle, 17, 5, 3, 1.0, 0.0, 2) == Status.SUCCESS
    assert aclblas_lib.workspace_stats(lib, handle)[0] == expected_bytes(17, 5)


def test_too_small_user_workspace_fails_and_says_how_much(twin):
    lib, handle = twin
    need = expected_bytes(33, 20)
    user = np.zeros(need, np.uint8)
    assert lib.aclblasSetWorkspace(handle, user.ctypes.data, need - 1) == Status.SUCCESS
    c = np.full(33 * 20 * 2 + 1, 5.0, np.float32)
    assert run(lib, handle, 33, 20, 4, 2.0, 1.0, 2, c=c) == Status.ALLOC_FAILED
    assert aclblas_lib.last_message(lib, handle) == f"workspace too small: need {need} bytes, have {need - 1}"
    assert np.all(c == 5.0), "a failed call must not touch C"
    assert lib.aclblasSetWorkspace(handle, user.ctypes.data, need) == Status.SUCCESS
    assert run(lib, handle, 33, 20, 4, 2.0, 1.0, 2, c=c) == Status.SUCCESS
    assert np.all(c[:33 * 20 * 2] == 5.0 + 2.0 * 4)


def test_set_stream_returns_to_the_library_workspace(twin):
    lib, handle = twin
    tiny = np.zeros(8, np.uint8)
    assert lib.aclblasSetWorkspace(handle, tiny.ctypes.data, tiny.nbytes) == Status.SUCCESS
    assert run(lib, handle, 16, 16, 4, 2.0, 0.0, 1) == Status.ALLOC_FAILED
    assert lib.aclblasSetStream(handle, None) == Status.SUCCESS
    assert run(lib, handle, 16, 16, 4, 2.0, 0.0, 1) == Status.SUCCESS


def test_csymm_uses_no_workspace(twin):
    lib, handle = twin
    a, b, c = (np.ones(64, np.complex64) for _ in range(3))
    assert csymm_op.invoke(lib, handle, 141, 121, 8, 8, 1 + 1j, a.ctypes.data, 8, b.ctypes.data, 8, 0.5,
                             c.ctypes.data, 8) == Status.SUCCESS
    assert aclblas_lib.workspace_stats(lib, handle) == (0, 0)
