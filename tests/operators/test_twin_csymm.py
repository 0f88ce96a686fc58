"""The CPU twin's aclblasCsymm against scipy's CBLAS csymm, through the ctypes shim, with the harness's buffer
discipline: the unreferenced triangle of A and every ld padding are NaN, and C's padding plus a guard zone after C
hold a sentinel that must survive."""
from __future__ import annotations

import numpy as np
import pytest

from harness.model.abi import LOWER, SIDE_LEFT, SIDE_RIGHT, UPPER, Status
from harness.ops import csymm as csymm_op
from csymm_calls import Call, check, column_major

SIDES = (SIDE_LEFT, SIDE_RIGHT)
UPLOS = (UPPER, LOWER)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("uplo", UPLOS)
@pytest.mark.parametrize("size", [1, 7, 8, 9, 127, 128, 129, 255, 256, 257])
def test_square_sizes_around_tile_edges(twin, side, uplo, size):
    check(Call(side, uplo, size, size, 1.5 - 0.5j, 0.25 + 1j, seed=size), *twin)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("uplo", UPLOS)
@pytest.mark.parametrize("m,n", [(1, 130), (130, 1), (200, 33), (33, 200), (129, 257)])
def test_rectangles_with_ld_padding(twin, side, uplo, m, n):
    check(Call(side, uplo, m, n, 0.5 + 2j, -1 + 0.5j, pads=(3, 5, 7), seed=m * n), *twin)


@pytest.mark.parametrize("beta", [0, 1, -0.5 + 0.25j, 1j])
@pytest.mark.parametrize("alpha", [1, 0.5 - 1j])
def test_beta_epilogues(twin, alpha, beta):
    for side in SIDES:
        check(Call(side, LOWER, 70, 45, alpha, beta, pads=(1, 2, 3), seed=7), *twin)


def test_beta_zero_never_reads_c(twin):
    """beta == 0 must overwrite C even where it holds NaN (BLAS semantics: 0 * NaN never happens)."""
    call = Call(SIDE_LEFT, UPPER, 33, 17, 1 - 1j, 0, pads=(0, 0, 2), c_fill=np.nan)
    assert call.run(*twin) == Status.SUCCESS
    assert np.isfinite(call.result()).all()
    assert call.outside_untouched()


@pytest.mark.parametrize("beta", [0, -2 + 1j])
def test_alpha_zero_scales_c_only(twin, beta):
    """alpha == 0: C = beta * C, A and B not needed (NaN-poisoned A cannot leak)."""
    call = Call(SIDE_RIGHT, UPPER, 40, 23, 0, beta, pads=(2, 2, 2))
    call.a[:] = np.nan
    assert call.run(*twin) == Status.SUCCESS
    assert np.allclose(call.result(), np.complex64(beta) * call.c_values, rtol=1e-6, atol=0)
    assert call.outside_untouched()


def test_alpha_zero_beta_one_does_not_write_c(twin):
    """The quick return writes nothing: a NaN-filled C stays bit-identical NaN."""
    call = Call(SIDE_LEFT, LOWER, 20, 9, 0, 1, c_fill=np.nan)
    assert call.run(*twin) == Status.SUCCESS
    assert np.array_equal(call.c.view(np.uint64), call.c_before.view(np.uint64))


@pytest.mark.parametrize("m,n", [(0, 5), (5, 0), (0, 0)])
def test_empty_shapes_succeed_without_writing(twin, m, n):
    call = Call(SIDE_LEFT, UPPER, m, n, 1, 0.5)
    assert call.run(*twin) == Status.SUCCESS
    assert np.array_equal(call.c.view(np.uint64), call.c_before.view(np.uint64))


def test_null_c_with_beta_zero_is_a_no_op(twin):
    """C may be NULL only when beta == 0 (seed §3.3.2); the call then succeeds without writing anything."""
    call = Call(SIDE_LEFT, UPPER, 8, 8, 1, 0)
    lib, handle = twin
    status = csymm_op.invoke(lib, handle, SIDE_LEFT, UPPER, 8, 8, 1, call.a.ctypes.data, call.lda,
                               call.b.ctypes.data, call.ldb, 0, None, call.ldc)
    assert status == Status.SUCCESS


def test_symmetric_not_hermitian(twin):
    """Reflected elements are not conjugated and the diagonal keeps its imaginary part: with a purely imaginary A
    the product differs from the Hermitian one, so a conjugating kernel fails this."""
    call = Call(SIDE_LEFT, UPPER, 9, 4, 1, 0, seed=3)
    call.a_triangle = (1j * np.abs(call.a_triangle)).astype(np.complex64)
    keep = np.triu(np.ones((9, 9), bool))
    call.a = column_major(np.where(keep, call.a_triangle, np.nan).astype(np.complex64), call.lda, np.nan)
    check(call, *twin)


@pytest.mark.parametrize("cores", [1, 3, 7])
def test_result_independent_of_core_count(twin, handle_with_cores, cores):
    check(Call(SIDE_RIGHT, LOWER, 300, 140, 1 + 1j, 0.5, seed=cores), twin[0], handle_with_cores(cores))
