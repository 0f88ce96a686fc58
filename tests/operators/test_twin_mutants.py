"""Negative controls for the twin's own tests: builds with an injected kernel bug (TWIN_MUTANT) must fail the same
checks the clean twin passes. Each mutant compiles once into the shared cache (a few seconds cold)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from harness.model.abi import OP_N, OP_T, SIDE_LEFT, UPPER, Status
from harness.backends import aclblas_lib
from harness.backends.build import MUTANTS, build_twin
from harness.ops import csymm as csymm_op
from harness.ops import sgemm_strided_batched as sgemm_op

#: building the mutant twins is 56 s of the module's 60 on the loaded 2-core machine
pytestmark = pytest.mark.slow
USED = ("conjugated_a", "beta0_reads_c", "enum_status", "workspace_per_batch")


@pytest.fixture(scope="module")
def libs():
    with ThreadPoolExecutor(2) as pool:
        paths = dict(zip(USED, pool.map(lambda name: build_twin({"TWIN_MUTANT": MUTANTS[name]}), USED)))
    paths["clean"] = build_twin()
    loaded = {}
    for name, path in paths.items():
        lib = aclblas_lib.load_aclblas(str(path))
        loaded[name] = (lib, aclblas_lib.create_handle(lib))
    yield loaded
    for lib, handle in loaded.values():
        aclblas_lib.destroy_handle(lib, handle)


def symmetric_product_is_right(lib, handle) -> bool:
    """csymm LEFT UPPER against a numpy symmetric (not Hermitian) product."""
    rng = np.random.default_rng(5)
    m, n = 19, 7
    full = (rng.standard_normal((m, m)) + 1j * rng.standard_normal((m, m))).astype(np.complex64)
    sym = np.triu(full) + np.triu(full, 1).T
    a = np.asfortranarray(np.where(np.triu(np.ones((m, m), bool)), full, np.nan).astype(np.complex64))
    b = np.asfortranarray((rng.standard_normal((m, n)) + 1j * rng.standard_normal((m, n))).astype(np.complex64))
    c = np.zeros((m, n), np.complex64, order="F")
    assert csymm_op.invoke(lib, handle, SIDE_LEFT, UPPER, m, n, 1, a.ctypes.data, m, b.ctypes.data, m, 0,
                             c.ctypes.data, m) == Status.SUCCESS
    return np.allclose(c, sym @ b, rtol=1e-4, atol=1e-4)


def beta_zero_overwrites_nan(lib, handle) -> bool:
    a = np.ones(16, np.complex64)
    c = np.full(16, np.nan, np.complex64)
    assert csymm_op.invoke(lib, handle, SIDE_LEFT, UPPER, 4, 4, 2, a.ctypes.data, 4, a.ctypes.data, 4, 0,
                             c.ctypes.data, 4) == Status.SUCCESS
    return bool(np.all(c == 8))


def invalid_side_is_invalid_enum(lib, handle) -> bool:
    a = np.ones(4, np.complex64)
    return csymm_op.invoke(lib, handle, 999, UPPER, 2, 2, 1, a.ctypes.data, 2, a.ctypes.data, 2, 1,
                             a.ctypes.data, 2) == Status.INVALID_ENUM


def workspace_is_batch_independent(lib, handle) -> bool:
    m, n, k, batch = 12, 5, 3, 4
    a, b, c = (np.ones(64 * batch, np.float32) for _ in range(3))
    lib.aclblasTwinResetWorkspaceStats(handle)
    assert sgemm_op.invoke(lib, handle, OP_N, OP_T, m, n, k, 2.0, a.ctypes.data, m, m * k,
                                             b.ctypes.data, n, n * k, 0.0, c.ctypes.data, m, m * n,
                                             batch) == Status.SUCCESS
    return aclblas_lib.workspace_stats(lib, handle)[0] == n * 16 * 4


CHECKS = {
    "conjugated_a": symmetric_product_is_right,
    "beta0_reads_c": beta_zero_overwrites_nan,
    "enum_status": invalid_side_is_invalid_enum,
    "workspace_per_batch": workspace_is_batch_independent,
}


@pytest.mark.parametrize("mutant", USED)
def test_clean_twin_passes_the_check(libs, mutant):
    assert CHECKS[mutant](*libs["clean"])


@pytest.mark.parametrize("mutant", USED)
def test_mutant_fails_the_check(libs, mutant):
    assert not CHECKS[mutant](*libs[mutant])


@pytest.mark.parametrize("mutant", USED)
def test_other_mutants_do_not_trip_unrelated_checks(libs, mutant):
    """Each mutant is ONE bug: the checks aimed at the other mutants still pass."""
    for other, check in CHECKS.items():
        if other != mutant:
            assert check(*libs[mutant]), other
