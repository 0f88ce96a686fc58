"""The 3M method's arithmetic on the emulator's cube: what a 3M Csymm kernel would compute, measured without one.

3M computes a complex product from three real ones, P1 = Xr*Yr, P2 = Xi*Yi, P3 = (Xr + Xi)*(Yr + Yi), and
re = P1 - P2, im = P3 - P1 - P2: a quarter fewer cube MACs than the built kernel's one real GEMM on an embedded
operand (cost_model.csymm_designs), at the price of subtracting finished sums. No 3M kernel is built; this runs its
three products as ONE SgemmStridedBatched call (batch 3) on the ascend-cpu emulator, so they go through the emulated
Mmad (fp32, HF32, or split HF32 as the backend's build says) in the same fractal order a Csymm kernel's cube would
use (operands holding NaN: the Sgemm kernel's plain fp32 fallback, as a 3M kernel would need one), and does what its vector cores would do in fp32: alpha folded into A, A mirrored from its stored triangle, the
pre-adds Xr + Xi and Yr + Yi, the combination, and the beta epilogue (each fp32 operation rounded once, as numpy
float32 rounds). With a K chunk `kc` (issue 38), each product is accumulated over one chunk of K only (the chunks
are more batches of the same call), and re and im are formed per chunk and summed over the chunks in fp32, as a
kernel handing its three L0C accumulators to UB per chunk would: the accumulators stay ~kc/K as large, and so does
their rounding. kc = None (or >= K) is the finished-sums 3M, bit for bit. What it cannot show: a 3M kernel's own
tiling, its L0C -> UB hand-over and any fault of them.
"""
from __future__ import annotations

import numpy as np

from golden.cblas import matrix_view
from harness.model import abi
from harness.judge import diagnosis
from harness.judge import verify
from harness.kernels import kernel_precision
from harness.ops import sgemm_strided_batched as sgemm_op
from harness.run import buffers, goldens
from harness.model.case import Case

F32 = np.float32


def real_products(backend, x: np.ndarray, y: np.ndarray, kc: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P1 = Xr*Yr, P2 = Xi*Yi, P3 = (Xr + Xi)*(Yr + Yi) of complex64 matrices x (r x q) and y (q x c) per K chunk of
    `kc` (all of K when None or >= q), each (chunks, r, c): one SgemmStridedBatched call on `backend` whose batches
    are the three products of every chunk (column-major, alpha 1, beta 0), as one L0C accumulation per product and
    chunk. A last partial chunk is padded with zero columns of x and zero rows of y, which add exact zeros."""
    (r, q), c = x.shape, y.shape[1]
    kc = q if kc is None or kc >= q else kc
    chunks = -(-q // kc)
    pad = chunks * kc - q
    xs = np.stack([x.real, x.imag, x.real + x.imag]).astype(F32)  # pre-adds in fp32
    ys = np.stack([y.real, y.imag, y.real + y.imag]).astype(F32)
    xs = np.pad(xs, ((0, 0), (0, 0), (0, pad))).reshape(3, r, chunks, kc).transpose(0, 2, 1, 3)
    ys = np.pad(ys, ((0, 0), (0, pad), (0, 0))).reshape(3, chunks, kc, c)
    batches = 3 * chunks
    ldc = -(-r // 8) * 8  # 8-aligned: the Sgemm's fast path whatever r (alpha 1, beta 0: the same products)
    data = {"A": np.concatenate([m.ravel(order="F") for m in xs.reshape(batches, r, kc)]),
            "B": np.concatenate([m.ravel(order="F") for m in ys.reshape(batches, kc, c)]),
            "C": np.zeros(batches * ldc * c, F32)}
    ptrs = {}
    try:
        for name, flat in data.items():
            ptrs[name] = backend.alloc(flat.nbytes)
            backend.upload(ptrs[name], flat)
        status = sgemm_op.invoke(backend.lib, backend.handle, abi.OP_N, abi.OP_N, r, c, kc, 1.0, ptrs["A"], r, r * kc,
                                 ptrs["B"], kc, kc * c, 0.0, ptrs["C"], ldc, ldc * c, batches)
        if status != abi.Status.SUCCESS:
            raise RuntimeError(f"aclblasSgemmStridedBatched returned {abi.status_name(status)}: "
                               f"{backend.last_message()}")
        out = backend.download(ptrs["C"], batches * ldc * c * 4).view(F32)
    finally:
        for p in ptrs.values():
            backend.free(p)
    p1, p2, p3 = out.reshape(3, chunks, c, ldc)[..., :r].transpose(0, 1, 3, 2)
    return p1, p2, p3


def _complex(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    """complex64 from its parts as they are (re + 1j * im would turn an Inf real part into NaN when im is NaN)."""
    out = np.empty(np.shape(re), np.complex64)
    out.real, out.imag = re, im
    return out


def _sum_chunks(parts: np.ndarray, compensated: bool) -> np.ndarray:
    """The chunks' parts (chunks, r, c) summed in chunk order in fp32, as a vector core's running sum in UB; with
    `compensated`, Kahan's summation (each step's rounding error carried into the next)."""
    total = parts[0].copy()
    carry = np.zeros_like(total)
    for part in parts[1:]:
        if compensated:
            y = part - carry
            t = total + y
            carry = (t - total) - y
            total = t
        else:
            total = total + part
    return total


def combine(p1: np.ndarray, p2: np.ndarray, p3: np.ndarray, compensated: bool = False) -> np.ndarray:
    """re = P1 - P2, im = (P3 - P1) - P2 in fp32 per K chunk (the products' leading axis; one chunk: the finished
    sums subtracted), summed over the chunks (`_sum_chunks`)."""
    return _complex(_sum_chunks(p1 - p2, compensated), _sum_chunks((p3 - p1) - p2, compensated))


#: Tile edge of symmetric_from_triangle: a 128 x 128 complex128 tile and its mirror stay in cache.
_TILE = 128


def symmetric_from_triangle(a: np.ndarray, uplo: int) -> np.ndarray:
    """The full symmetric matrix (C order) that the `uplo` triangle of a describes; the other triangle is never
    read. A symmetric matrix has the same bytes in C and Fortran order, so it is built in Fortran order: one copy
    of the column-major `a` along its columns, then the mirrored triangle tile by tile (a whole-matrix transpose
    reads with a stride of the leading dimension, which at power-of-two orders misses the cache on every element),
    and handed out as its C-ordered transpose."""
    n = a.shape[0]
    full = np.empty((n, n), dtype=a.dtype, order="F")
    full[...] = a
    upper = uplo == abi.UPPER
    for s in range(0, n, _TILE):
        e = min(n, s + _TILE)
        i, j = np.ogrid[s:e, s:e]
        diagonal = full[s:e, s:e]
        diagonal[...] = np.where(i <= j if upper else i >= j, diagonal, diagonal.T)
        for t in range(e, n, _TILE):  # the tiles beside the diagonal one, in the mirrored triangle
            u = min(n, t + _TILE)
            if upper:
                full[t:u, s:e] = full[s:e, t:u].T
            else:
                full[s:e, t:u] = full[t:u, s:e].T
    return full.T


def _alpha_a(a: np.ndarray, uplo: int, alpha: complex) -> np.ndarray:
    """alpha * A (complex64) mirrored from the `uplo` triangle of `a`, the fp32 multiply the vector cores do."""
    full = symmetric_from_triangle(a, uplo)
    ar, ai = F32(alpha.real), F32(alpha.imag)
    return _complex(full.real * ar - full.imag * ai, full.imag * ar + full.real * ai)


def csymm(backend, a_args, a: np.ndarray, b: np.ndarray, c: np.ndarray, kc: int | None = None,
          compensated: bool = False) -> np.ndarray:
    """C after C = alpha*A*B + beta*C (LEFT) or alpha*B*A + beta*C (RIGHT) by the 3M method, recombined per K chunk
    of `kc` (None: all of K), on the storage arrays (complex64, column-major with the args' leading dimensions) of a
    Csymm row."""
    with np.errstate(invalid="ignore", over="ignore"):  # Inf and NaN rows: IEEE results, as the vector cores
        return _csymm(backend, a_args, a, b, c, kc, compensated)


def _csymm(backend, a_args, a: np.ndarray, b: np.ndarray, c: np.ndarray, kc: int | None,
           compensated: bool) -> np.ndarray:
    m, n = a_args.m, a_args.n
    left = a_args.side == abi.SIDE_LEFT
    k = m if left else n
    alpha_a = _alpha_a(matrix_view(a, k, k, a_args.lda), a_args.uplo, complex(a_args.alpha))
    bm = matrix_view(b, m, n, a_args.ldb)
    x, y = (alpha_a, bm) if left else (bm, alpha_a)
    product = combine(*real_products(backend, x, y, kc), compensated=compensated)
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


def judge_row(backend, case: Case, kc: int | None = None, compensated: bool = False) -> diagnosis.Judgement:
    """A Csymm row computed by the 3M method (recombined per K chunk of `kc`) on `backend` and judged by the row's
    own gate against its golden (for a large perf row, the golden's sample of C)."""
    bufs = buffers.plan(case, use_poison=False)
    with np.errstate(invalid="ignore", over="ignore"):  # the golden of an Inf or NaN row
        golden = goldens.golden_of(case, bufs)
    out = csymm(backend, case.args, bufs["A"].host, bufs["B"].host, bufs["C"].host, kc, compensated)
    return golden.judge(out)


def real_part_probe(backend, m: int, spec: str, seed: int = 7, side: int = abi.SIDE_LEFT, kc: int | None = None,
                    compensated: bool = False) -> verify.MixedResult:
    """kernel_precision's cancellation probe (LOWER, alpha 1, beta 0, m x m) computed by the 3M method, recombined
    per K chunk of `kc`."""
    a, b = kernel_precision.probe_operands(m, spec, seed)
    alpha_a = _alpha_a(a, abi.LOWER, 1.0)
    x, y = (alpha_a, b) if side == abi.SIDE_LEFT else (b, alpha_a)
    out = combine(*real_products(backend, x, y, kc), compensated=compensated)
    return kernel_precision.judge_real_part(out, a, b, side)
