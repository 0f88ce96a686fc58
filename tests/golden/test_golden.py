"""Goldens (scipy BLAS, op precision) and truths (float64) against a plain numpy formula written element by element
from the storage layout, over every side x uplo, transA x transB, ld padding, batch stride, and quick path.

Every region an operator must not read (the other triangle of A, ld padding, batch gaps) holds NaN, so a golden
that reads it, or writes C outside the written region, shows up as NaN or as changed bits."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import golden
from harness.model.abi import LOWER, OP_C, OP_N, OP_T, SIDE_LEFT, SIDE_RIGHT, UPPER

rng = np.random.default_rng(7)


def cplx(count: int) -> np.ndarray:
    return (rng.uniform(-1, 1, count) + 1j * rng.uniform(-1, 1, count)).astype(np.complex64)


def region(size: int, rows: int, cols: int, ld: int, offset: int = 0) -> np.ndarray:
    """Storage indices of a rows x cols column-major matrix."""
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    idx = (offset + r + c * ld).ravel()
    assert idx.size == 0 or idx.max() < size
    return idx


def poisoned(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """values with NaN everywhere except at storage indices keep."""
    out = np.full_like(values, np.nan)
    out[keep] = values[keep]
    return out


def same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    return x.tobytes() == y.tobytes()


# ---------------------------------------------------------------- csymm
def symm_reference(side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc) -> np.ndarray:
    """Element-wise formula: A(i, j) read from the uplo triangle; complex128."""
    ka = m if side == SIDE_LEFT else n
    full = np.empty((ka, ka), dtype=np.complex128)
    for i, j in itertools.product(range(ka), repeat=2):
        lo, hi = min(i, j), max(i, j)
        full[i, j] = A[lo + hi * lda] if uplo == UPPER else A[hi + lo * lda]
    b = np.array([[B[i + j * ldb] for j in range(n)] for i in range(m)], dtype=np.complex128)
    prod = full @ b if side == SIDE_LEFT else b @ full
    out = C.astype(np.complex128)
    for i, j in itertools.product(range(m), range(n)):
        old = 0 if beta == 0 else complex(beta) * out[i + j * ldc]
        out[i + j * ldc] = complex(alpha) * prod[i, j] + old
    return out


def symm_inputs(side, uplo, m, n, pad):
    ka = m if side == SIDE_LEFT else n
    lda, ldb, ldc = ka + pad, m + pad, m + 2 * pad
    r, c = np.meshgrid(np.arange(ka), np.arange(ka), indexing="ij")
    tri = (r <= c) if uplo == UPPER else (r >= c)
    A = poisoned(cplx(lda * ka), (r + c * lda)[tri])
    B = poisoned(cplx(ldb * n), region(ldb * n, m, n, ldb))
    C = poisoned(cplx(ldc * n), region(ldc * n, m, n, ldc))
    return A, lda, B, ldb, C, ldc


@pytest.mark.parametrize("beta", [0, 1, 0.5 - 0.25j])
@pytest.mark.parametrize("pad", [0, 3])
@pytest.mark.parametrize("side,uplo", list(itertools.product((SIDE_LEFT, SIDE_RIGHT), (UPPER, LOWER))))
def test_csymm_matches_formula_and_truth(side, uplo, pad, beta):
    m, n, alpha = 5, 4, 0.75 + 1.5j
    A, lda, B, ldb, C, ldc = symm_inputs(side, uplo, m, n, pad)
    before = [x.copy() for x in (A, B, C)]
    args = (side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc)
    got, truth = golden.cblas.csymm(*args), golden.truth.csymm(*args)
    want = symm_reference(*args)
    assert got.dtype == np.complex64 and truth.dtype == np.complex128 and got.shape == C.shape
    written = region(C.size, m, n, ldc)
    np.testing.assert_allclose(got[written], want[written], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(truth[written], want[written], rtol=1e-12, atol=1e-12)
    outside = np.setdiff1d(np.arange(C.size), written)
    assert np.isnan(C[outside]).all() or pad == 0
    assert same_bits(got[outside], C[outside]) and same_bits(truth[outside], C[outside].astype(np.complex128))
    assert all(same_bits(x, y) for x, y in zip(before, (A, B, C)))  # inputs untouched


def test_csymm_reads_only_the_uplo_triangle():
    m, n = 6, 3
    for uplo in (UPPER, LOWER):
        A, lda, B, ldb, C, ldc = symm_inputs(SIDE_LEFT, uplo, m, n, 0)
        assert np.isnan(A).sum() == m * (m - 1) // 2  # the other triangle is poisoned
        got = golden.cblas.csymm(SIDE_LEFT, uplo, m, n, 1, A, lda, B, ldb, 0, C, ldc)
        truth = golden.truth.csymm(SIDE_LEFT, uplo, m, n, 1, A, lda, B, ldb, 0, C, ldc)
        assert np.isfinite(got).all() and np.isfinite(truth).all()


def test_csymm_beta_zero_does_not_read_c():
    A, lda, B, ldb, _, ldc = symm_inputs(SIDE_RIGHT, LOWER, 4, 5, 0)
    C = np.full(ldc * 5, np.nan, dtype=np.complex64)
    got = golden.cblas.csymm(SIDE_RIGHT, LOWER, 4, 5, 2 - 1j, A, lda, B, ldb, 0, C, ldc)
    assert np.isfinite(got).all() and np.isfinite(golden.truth.csymm(SIDE_RIGHT, LOWER, 4, 5, 2 - 1j, A, lda, B,
                                                                      ldb, 0, C, ldc)).all()


def test_csymm_alpha_zero_quick_paths():
    m, n = 3, 4
    A = np.full(m * m, np.nan, dtype=np.complex64)  # never read when alpha == 0
    B = np.full(m * n, np.nan, dtype=np.complex64)
    C = cplx(m * n)
    C[0] = np.complex64(complex(np.inf, 0))
    keep = golden.cblas.csymm(SIDE_LEFT, UPPER, m, n, 0, A, m, B, m, 1, C, m)
    assert same_bits(keep, C)  # beta == 1: untouched, even the Inf (1*(inf+0j) would give a NaN imaginary part)
    zeros = golden.cblas.csymm(SIDE_LEFT, UPPER, m, n, 0, A, m, B, m, 0, np.full_like(C, np.nan), m)
    assert (zeros == 0).all()
    beta = np.complex64(0.5 + 2j)
    scaled = golden.cblas.csymm(SIDE_LEFT, UPPER, m, n, 0, A, m, B, m, beta, C, m)
    assert same_bits(scaled[1:], (C * beta)[1:])
    assert same_bits(golden.truth.csymm(SIDE_LEFT, UPPER, m, n, 0, A, m, B, m, 1, C, m), C.astype(np.complex128))


def test_csymm_empty_and_invalid():
    C = cplx(6)
    assert same_bits(golden.cblas.csymm(SIDE_LEFT, UPPER, 0, 3, 1, C, 1, C, 1, 2, C, 1), C)
    assert same_bits(golden.cblas.csymm(SIDE_LEFT, UPPER, 3, 0, 1, C, 3, C, 3, 2, C, 3), C)
    with pytest.raises(ValueError):
        golden.cblas.csymm(0, UPPER, 2, 2, 1, C, 2, C, 2, 0, C, 2)
    with pytest.raises(ValueError):
        golden.cblas.csymm(SIDE_LEFT, 255, 2, 2, 1, C, 2, C, 2, 0, C, 2)
    with pytest.raises(ValueError):  # ld < m
        golden.cblas.csymm(SIDE_LEFT, UPPER, 2, 2, 1, C, 1, C, 2, 0, C, 2)
    with pytest.raises(ValueError):  # storage too small for 3x3 with ld 3
        golden.truth.csymm(SIDE_LEFT, UPPER, 3, 3, 1, C, 3, C, 3, 0, C, 3)


# ---------------------------------------------------------------- sgemm strided batched
def gemm_reference(ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch) -> np.ndarray:
    out = C.astype(np.float64)
    for p in range(batch):
        for i, j in itertools.product(range(m), range(n)):
            acc = 0.0
            for q in range(k):
                a = A[p * sa + (i + q * lda if ta == OP_N else q + i * lda)]
                b = B[p * sb + (q + j * ldb if tb == OP_N else j + q * ldb)]
                acc += float(a) * float(b)
            old = 0.0 if beta == 0 else beta * out[p * sc + i + j * ldc]
            out[p * sc + i + j * ldc] = alpha * acc + old
    return out


def strided_operand(rows, cols, ld, stride, batch, count=None):
    """Storage of `batch` rows x cols matrices at stride (0: one shared matrix), NaN outside them."""
    size = count or (stride * (batch - 1) + ld * (cols - 1) + rows)
    keep = np.unique(np.concatenate([region(size, rows, cols, ld, p * stride) for p in range(batch)]))
    return poisoned(rng.uniform(-1, 1, size).astype(np.float32), keep), keep


LAYOUTS = {  # (ld padding, stride mode)
    "compact": (0, "compact"),
    "gaps": (2, "gap"),
    "broadcast": (1, "zero"),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("ta,tb", list(itertools.product((OP_N, OP_T, OP_C), repeat=2)))
def test_sgemm_strided_batched_matches_formula_and_truth(ta, tb, layout):
    m, n, k, batch, alpha, beta = 4, 5, 3, 3, 1.5, -0.5
    pad, mode = LAYOUTS[layout]
    ra, ca = (m, k) if ta == OP_N else (k, m)
    rb, cb = (k, n) if tb == OP_N else (n, k)
    lda, ldb, ldc = ra + pad, rb + pad, m + pad

    def stride(ld, cols):
        return {"compact": ld * cols, "gap": ld * cols + 7, "zero": 0}[mode]

    sa, sb = stride(lda, ca), stride(ldb, cb)
    sc = ldc * n + (7 if mode == "gap" else 0)  # C batches never alias
    A, _ = strided_operand(ra, ca, lda, sa, batch)
    B, _ = strided_operand(rb, cb, ldb, sb, batch)
    C, written = strided_operand(m, n, ldc, sc, batch, count=sc * batch + 3)
    before = [x.copy() for x in (A, B, C)]
    args = (ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch)
    got, truth = golden.cblas.sgemm_strided_batched(*args), golden.truth.sgemm_strided_batched(*args)
    want = gemm_reference(*args)
    assert got.dtype == np.float32 and truth.dtype == np.float64 and got.shape == C.shape
    np.testing.assert_allclose(got[written], want[written], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(truth[written], want[written], rtol=1e-12, atol=1e-12)
    outside = np.setdiff1d(np.arange(C.size), written)
    assert outside.size > 0 and np.isnan(got[outside]).all() and np.isnan(truth[outside]).all()
    assert same_bits(got[outside], C[outside])
    assert all(same_bits(x, y) for x, y in zip(before, (A, B, C)))


@pytest.mark.parametrize("beta", [0.0, 1.0, -2.5])
@pytest.mark.parametrize("alpha,k", [(0.0, 3), (2.0, 0)])
def test_sgemm_quick_paths_scale_c_without_reading_a_b(alpha, k, beta):
    m, n, batch, ldc, sc = 3, 2, 2, 4, 9
    A = np.full(64, np.nan, dtype=np.float32)
    B = np.full(64, np.nan, dtype=np.float32)
    C, written = strided_operand(m, n, ldc, sc, batch, count=sc * batch)
    C[written[0]] = np.inf
    args = (OP_N, OP_T, m, n, k, alpha, A, max(m, 1), 3 * 3, B, max(n, 1), 3 * 3, beta, C, ldc, sc, batch)
    got, truth = golden.cblas.sgemm_strided_batched(*args), golden.truth.sgemm_strided_batched(*args)
    expected, expected64 = C.copy(), C.astype(np.float64)
    if beta == 0:
        expected[written] = expected64[written] = 0  # zeros, not NaN*0 or Inf*0
    elif beta != 1:
        expected[written] *= np.float32(beta)
        expected64[written] *= beta
    assert same_bits(got, expected) and same_bits(truth, expected64)


def test_sgemm_beta_zero_does_not_read_c():
    m, n, k = 3, 3, 2
    A, B = rng.uniform(-1, 1, m * k).astype(np.float32), rng.uniform(-1, 1, k * n).astype(np.float32)
    C = np.full(m * n, np.nan, dtype=np.float32)
    args = (OP_N, OP_N, m, n, k, 1.0, A, m, 0, B, k, 0, 0.0, C, m, 0, 1)
    got = golden.cblas.sgemm_strided_batched(*args)
    # absolute too: a float32 sum of two products in [-1, 1] is off by ~1e-7, relatively large for a result near 0
    np.testing.assert_allclose(got, (A.reshape(k, m).T.astype(np.float64) @ B.reshape(n, k).T).T.ravel(),
                               rtol=1e-6, atol=1e-6)
    assert np.isfinite(golden.truth.sgemm_strided_batched(*args)).all()


def test_sgemm_empty_and_invalid():
    C = rng.uniform(-1, 1, 8).astype(np.float32)
    for m, n, batch in ((0, 2, 1), (2, 0, 1), (2, 2, 0)):
        args = (OP_N, OP_N, m, n, 2, 1.0, C, 2, 4, C, 2, 4, 3.0, C, 2, 4, batch)
        assert same_bits(golden.cblas.sgemm_strided_batched(*args), C)
    with pytest.raises(ValueError):
        golden.cblas.sgemm_strided_batched(0, OP_N, 2, 2, 2, 1.0, C, 2, 0, C, 2, 0, 0.0, C, 2, 0, 1)
    with pytest.raises(ValueError):  # the second batch of C runs past the storage
        golden.cblas.sgemm_strided_batched(OP_N, OP_N, 2, 2, 2, 1.0, C, 2, 0, C, 2, 0, 0.0, C, 2, 8, 2)


def test_matrix_view_is_a_view():
    s = np.arange(12, dtype=np.float32)
    v = golden.matrix_view(s, 2, 3, 4, offset=1)
    assert np.shares_memory(v, s) and v.tolist() == [[1, 5, 9], [2, 6, 10]]
    compact = golden.matrix_view(s, 4, 3, 4)
    assert compact.flags.f_contiguous  # what lets BLAS run on it in place


def test_blas_info_names_the_blas():
    info = golden.blas_info()
    assert info["scipy_version"] and info["blas_name"]
    assert info["threads"] is None or info["threads"] >= 1


def test_blas_info_is_the_same_without_importing_scipy_linalg():
    """A run's meta records blas_info without importing scipy.linalg (~0.2 s of CPU per run): in a fresh
    interpreter it leaves scipy.linalg unimported and says what it says once scipy.linalg.blas is loaded, the
    library the goldens call included. Negative control: before the change, scipy.linalg was imported."""
    import json
    import subprocess
    import sys

    probe = ("import json, sys, golden\ninfo = golden.blas_info()\nloaded = 'scipy.linalg' in sys.modules\n"
             "import scipy.linalg.blas\nprint(json.dumps([loaded, info, golden.blas_info()], default=str))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    loaded, alone, with_linalg = json.loads(done.stdout)
    assert not loaded
    assert alone == with_linalg and alone["blas_library"]


@pytest.mark.parametrize("order, ld, total", [(0, 1, 0), (1, 1, 1), (5, 5, 25), (5, 8, 37), (9, 12, 100),
                                              (6, 4, 30), (6, 0, 10), (6, -2, 10), (130, 131, 130 * 131)])
@pytest.mark.parametrize("upper", [True, False])
def test_the_triangle_mask_is_its_index_definition(order, ld, total, upper):
    """harness.tables.layout.triangle_mask's run-per-column path (ld >= order) marks exactly the storage indices
    i + ld*j of the triangle that fall inside `total`; ld < order keeps the index path."""
    from harness.tables.layout import triangle_mask

    expected = np.zeros(total, dtype=bool)
    for j in range(order):
        for i in range(j + 1) if upper else range(j, order):
            if 0 <= i + ld * j < total:
                expected[i + ld * j] = True
    assert (triangle_mask(total, order, ld, upper) == expected).all()
