"""The 3M method's arithmetic (harness/kernels/three_m.py): its composition is right on ordinary rows and the
row's gate can fail it; its precision on the emulator's cube is measured by benchmarks/kernel_cost.py and
tests/backends/test_ascend_cpu.py."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.model import abi
from harness.backends import cpu
from harness.kernels import three_m
from harness.tables.load import load_table

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def backend():
    b = cpu.open()
    yield b
    b.close()


def _rows():
    """A LEFT and a RIGHT GEMM row of each epilogue (beta 0, 1, general), both triangles."""
    picked, seen = [], set()
    for case in load_table(ROOT / "cases" / "csymm_test.csv"):
        a = case.args
        if not case.name.startswith("TC_L0_") or case.expected_status != abi.Status.SUCCESS or a.alpha == 0 \
                or a.m * a.n == 0:
            continue
        key = (a.side, a.uplo, 0 if a.beta == 0 else 1 if a.beta == 1 else 2)
        if key not in seen:
            seen.add(key)
            picked.append(pytest.param(case, id=case.id))
    return picked


def test_combine_is_the_3m_formula():
    p1, p2, p3 = (np.array([[v]], np.float32) for v in (5.0, 3.0, 17.0))  # one chunk of one element
    out = three_m.combine(p1, p2, p3)
    assert out[0] == np.complex64(2 + 9j)  # re = P1 - P2, im = P3 - P1 - P2
    # per chunk, then summed: two chunks of the same products give twice the result
    assert three_m.combine(*(np.concatenate([p, p]) for p in (p1, p2, p3)))[0] == np.complex64(4 + 18j)
    # a NaN imaginary part leaves an Inf real part as it is (as the vector cores' separate fp32 parts would)
    with np.errstate(invalid="ignore"):
        inf = three_m.combine(*(np.array([[v]], np.float32) for v in (np.inf, 0.0, np.inf)))
    assert np.isposinf(inf.real[0]) and np.isnan(inf.imag[0])


@pytest.mark.parametrize("case", _rows())
def test_3m_on_a_row_passes_its_gate(case, backend):
    judgement = three_m.judge_row(backend, case)
    assert judgement.verdict == "PASS", judgement.reason


def _operands(r: int, q: int, c: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = (rng.normal(5, 1, (r, q)) + 1j * rng.normal(5, 1, (r, q))).astype(np.complex64)
    y = (rng.normal(5, 1, (q, c)) + 1j * rng.normal(5, 1, (q, c))).astype(np.complex64)
    return x, y


def test_one_chunk_of_all_of_k_is_the_unchunked_3m_bit_for_bit(backend):
    x, y = _operands(40, 72, 24)
    whole = three_m.real_products(backend, x, y)
    for kc in (72, 1000):  # kc >= K: the same one call of three batches over all of K
        assert all(np.array_equal(a, b) for a, b in zip(whole, three_m.real_products(backend, x, y, kc)))
    p1, p2, p3 = (p[0] for p in whole)
    out = three_m.combine(*whole)
    assert np.array_equal(out.real, p1 - p2) and np.array_equal(out.imag, (p3 - p1) - p2)  # finished sums


@pytest.mark.parametrize("kc", [8, 16, 50])  # 72 = 9 x 8; 50: a last chunk padded with zeros
def test_chunked_products_are_the_k_slices_products(backend, kc):
    x, y = _operands(37, 72, 24)  # 37 rows: C's leading dimension padded to 40, the padding dropped
    p1, p2, p3 = three_m.real_products(backend, x, y, kc)
    assert p1.shape == (-(-72 // kc), 37, 24)
    x64, y64 = x.astype(np.complex128), y.astype(np.complex128)
    for i in range(p1.shape[0]):
        xs, ys = x64[:, i * kc:(i + 1) * kc], y64[i * kc:(i + 1) * kc]
        for got, want in ((p1, xs.real @ ys.real), (p2, xs.imag @ ys.imag),
                          (p3, (xs.real + xs.imag) @ (ys.real + ys.imag))):
            np.testing.assert_allclose(got[i], want, rtol=2e-6)
    exact = x64 @ y64
    out = three_m.combine(p1, p2, p3)
    np.testing.assert_allclose(out, exact, rtol=0, atol=1e-3 * np.abs(exact).max())


def test_chunking_brings_3m_closer_to_the_float64_truth_on_a_cancellation_input(backend):
    # NORMAL(5, 1) operands: |P1|, |P2| ~ 25 K while re = P1 - P2 ~ sqrt(K); over all of K the fp32 accumulators'
    # rounding dominates, per chunk of 16 they stay small. Fails if kc is ignored (the same error twice).
    whole = three_m.real_part_probe(backend, 128, "NORMAL_5_1")
    chunked = three_m.real_part_probe(backend, 128, "NORMAL_5_1", kc=16)
    assert chunked.max_abs_error < whole.max_abs_error / 3, (whole, chunked)
    assert chunked.matched_ratio > whole.matched_ratio


def test_kahan_summation_of_the_chunks_keeps_what_plain_fp32_drops():
    parts = np.full((1001, 1, 1), 1e-4, np.float32)
    parts[0] = 1e4  # a large first chunk: each plain fp32 add of 1e-4 to 1e4 rounds (ulp 1e-3) back to 1e4
    exact = 1e4 + 1000 * np.float64(np.float32(1e-4))
    plain = three_m._sum_chunks(parts, compensated=False)[0, 0]
    kahan = three_m._sum_chunks(parts, compensated=True)[0, 0]
    assert plain == np.float32(1e4)  # the negative control: every small chunk lost
    assert abs(kahan - exact) < 1e-3 < abs(plain - exact)


def test_a_wrong_combination_fails_the_gate(backend, monkeypatch):
    # negative control: the imaginary part with P2 added instead of subtracted
    case = _rows()[0].values[0]
    monkeypatch.setattr(three_m, "combine", lambda p1, p2, p3, compensated=False: three_m._complex(
        (p1 - p2)[0], (p3 - p1 + p2)[0]))
    assert three_m.judge_row(backend, case).verdict == "FAIL"


@pytest.mark.parametrize("n", [1, 5, 127, 128, 129, 300])
@pytest.mark.parametrize("uplo", [abi.UPPER, abi.LOWER])
def test_the_tiled_mirror_is_the_one_pass_definition(n, uplo):
    """symmetric_from_triangle copies tile by tile (speed): bit for bit the whole-matrix where(), NaN and signed
    zeros included, in C order, from a column-major view like the storage's."""
    rng = np.random.default_rng(n)
    a = np.asfortranarray(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
    a[::7, ::5] = complex(np.nan, -0.0)
    i, j = np.ogrid[:n, :n]
    expected = np.where(i <= j if uplo == abi.UPPER else i >= j, a, a.T)
    got = three_m.symmetric_from_triangle(a, uplo)
    assert got.flags.c_contiguous and got.tobytes() == expected.tobytes()
    if n > 1:  # the triangle read matters
        assert got.tobytes() != np.where(i <= j if uplo != abi.UPPER else i >= j, a, a.T).tobytes()
