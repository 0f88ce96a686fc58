"""The 3M method's arithmetic on the emulator's cube: what a 3M Csymm kernel would compute, measured without one.

3M computes a complex product from three real ones, P1 = Xr*Yr, P2 = Xi*Yi, P3 = (Xr + Xi)*(Yr + Yi), and
re = P1 - P2, im = P3 - P1 - P2: a quarter fewer cube MACs than the built kernel's one real GEMM on an embedded
operand (cost_model.csymm_designs), at the price of subtracting finished sums. No 3M kernel is built; this runs its
three products as ONE SgemmStridedBatched call (batch 3) on the ascend-cpu emulator, so they go through the emulated
Mmad (fp32, HF32, or split HF32 as the backend's build says) in the same fractal order a Csymm kernel's cube would
use (operands holding NaN: the Sgemm kernel's plain fp32 fallback, as a 3M kernel would need one), and does what its vector cores would do in fp32: alpha folded into A, A mirrored from its stored triangle, the
pre-adds Xr + Xi and Yr + Yi, the combination, and the beta epilogue (each fp32 operation rounded once, as numpy
float32 rounds). What it cannot show: a 3M kernel's own tiling, its L0C -> UB hand-over and any fault of them.
"""
from __future__ import annotations

import numpy as np

from golden.cblas import matrix_view
from golden.truth import symmetric_from_triangle
from harness.model import abi
from harness.judge import diagnosis
from harness.judge import verify
from harness.kernels import kernel_precision
from harness.ops import sgemm_strided_batched as sgemm_op
from harness.run import buffers, goldens
from harness.model.case import Case

F32 = np.float32


def real_products(backend, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P1 = Xr*Yr, P2 = Xi*Yi, P3 = (Xr + Xi)*(Yr + Yi) of complex64 matrices x (r x q) and y (q x c), in one
    SgemmStridedBatched call of three batches on `backend` (column-major, alpha 1, beta 0)."""
    (r, q), c = x.shape, y.shape[1]
    xs = np.stack([x.real, x.imag, x.real + x.imag]).astype(F32)  # pre-adds in fp32
    ys = np.stack([y.real, y.imag, y.real + y.imag]).astype(F32)
    data = {"A": np.concatenate([m.ravel(order="F") for m in xs]),
            "B": np.concatenate([m.ravel(order="F") for m in ys]), "C": np.zeros(3 * r * c, F32)}
    ptrs = {}
    try:
        for name, flat in data.items():
            ptrs[name] = backend.alloc(flat.nbytes)
            backend.upload(ptrs[name], flat)
        status = sgemm_op.invoke(backend.lib, backend.handle, abi.OP_N, abi.OP_N, r, c, q, 1.0, ptrs["A"], r, r * q,
                                 ptrs["B"], q, q * c, 0.0, ptrs["C"], r, r * c, 3)
        if status != abi.Status.SUCCESS:
            raise RuntimeError(f"aclblasSgemmStridedBatched returned {abi.status_name(status)}: "
                               f"{backend.last_message()}")
        out = backend.download(ptrs["C"], 3 * r * c * 4).view(F32)
    finally:
        for p in ptrs.values():
            backend.free(p)
    p1, p2, p3 = (out[i * r * c:(i + 1) * r * c].reshape(c, r).T for i in range(3))
    return p1, p2, p3


def _complex(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    """complex64 from its parts as they are (re + 1j * im would turn an Inf real part into NaN when im is NaN)."""
    out = np.empty(np.shape(re), np.complex64)
    out.real, out.imag = re, im
    return out


def combine(p1: np.ndarray, p2: np.ndarray, p3: np.ndarray) -> np.ndarray:
    """re = P1 - P2, im = (P3 - P1) - P2 in fp32: the finished sums subtracted."""
    return _complex(p1 - p2, (p3 - p1) - p2)


def _alpha_a(a: np.ndarray, uplo: int, alpha: complex) -> np.ndarray:
    """alpha * A (complex64) mirrored from the `uplo` triangle of `a`, the fp32 multiply the vector cores do."""
    full = symmetric_from_triangle(a, uplo)
    ar, ai = F32(alpha.real), F32(alpha.imag)
    return _complex(full.real * ar - full.imag * ai, full.imag * ar + full.real * ai)


def csymm(backend, a_args, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """C after C = alpha*A*B + beta*C (LEFT) or alpha*B*A + beta*C (RIGHT) by the 3M method, on the storage
    arrays (complex64, column-major with the args' leading dimensions) of a Csymm row."""
    with np.errstate(invalid="ignore", over="ignore"):  # Inf and NaN rows: IEEE results, as the vector cores
        return _csymm(backend, a_args, a, b, c)


def _csymm(backend, a_args, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    m, n = a_args.m, a_args.n
    left = a_args.side == abi.SIDE_LEFT
    k = m if left else n
    alpha_a = _alpha_a(matrix_view(a, k, k, a_args.lda), a_args.uplo, complex(a_args.alpha))
    bm = matrix_view(b, m, n, a_args.ldb)
    product = combine(*(real_products(backend, alpha_a, bm) if left else real_products(backend, bm, alpha_a)))
    out = c.copy()
    target = matrix_view(out, m, n, a_args.ldc)
    beta = complex(a_args.beta)
    if beta != 0:
        old = matrix_view(c, m, n, a_args.ldc)
        br, bi = F32(beta.real), F32(beta.imag)
        product = _complex(product.real + (br * old.real - bi * old.imag),
                           product.imag + (br * old.imag + bi * old.real))
    target[...] = product
    return out


def judge_row(backend, case: Case) -> diagnosis.Judgement:
    """A Csymm row computed by the 3M method on `backend` and judged by the row's own gate against its golden
    (for a large perf row, the golden's sample of C)."""
    bufs = buffers.plan(case, use_poison=False)
    with np.errstate(invalid="ignore", over="ignore"):  # the golden of an Inf or NaN row
        golden = goldens.golden_of(case, bufs)
    out = csymm(backend, case.args, bufs["A"].host, bufs["B"].host, bufs["C"].host)
    return golden.judge(out)


def real_part_probe(backend, m: int, spec: str, seed: int = 7,
                    side: int = abi.SIDE_LEFT) -> verify.MixedResult:
    """kernel_precision's cancellation probe (LOWER, alpha 1, beta 0, m x m) computed by the 3M method."""
    a, b = kernel_precision.probe_operands(m, spec, seed)
    alpha_a = _alpha_a(a, abi.LOWER, 1.0)
    out = combine(*(real_products(backend, alpha_a, b) if side == abi.SIDE_LEFT
                    else real_products(backend, b, alpha_a)))
    return kernel_precision.judge_real_part(out, a, b, side)
