"""Precision of an operator build on cancellation-prone inputs, judged against the float64 truth.

The tables' gate forgives ill-conditioned elements through the forward-error test, which is right for judging an
operator but blind to an accumulation order that is measurably worse than it needs to be. This probe judges the
real part of a Csymm product of nonzero-mean NORMAL matrices by MIXED_TOLERANCE against the truth rounded to
float32: the measure behind the old plane order's negative control and the HF32 question (docs/kernels.md).
"""
from __future__ import annotations

import numpy as np

from harness.model import abi
from harness.judge import verify
from harness.tables import fill
from harness.ops import csymm as csymm_op


def probe_operands(m: int, spec: str, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """The probe's A (its LOWER triangle is what the operator reads) and B, m x m complex64, filled with `spec`."""
    a = fill.make_matrix(spec, 2 * m, m, 2 * m, seed).view(np.complex64).reshape(m, m).T
    b = fill.make_matrix(spec, 2 * m, m, 2 * m, seed + 1).view(np.complex64).reshape(m, m).T
    return a, b


def judge_real_part(out: np.ndarray, a: np.ndarray, b: np.ndarray, side: int) -> verify.MixedResult:
    """The real part of a probe's C judged against the float64 truth rounded to float32."""
    full = np.tril(a.astype(np.complex128)) + np.tril(a.astype(np.complex128), -1).T
    truth = full @ b.astype(np.complex128) if side == abi.SIDE_LEFT else b.astype(np.complex128) @ full
    return verify.mixed_tolerance(out.real.ravel(), truth.real.astype(np.float32).ravel())


def csymm_real_part(backend, m: int, spec: str, seed: int = 7, side: int = abi.SIDE_LEFT) -> verify.MixedResult:
    """C = A*B (LEFT) or B*A (RIGHT) on `backend` (LOWER, alpha 1, beta 0, m x m, A and B filled with `spec`)."""
    a, b = probe_operands(m, spec, seed)
    ptrs = {}
    for name, arr in (("A", a), ("B", b), ("C", np.zeros((m, m), np.complex64))):
        flat = np.ascontiguousarray(arr.T).reshape(-1)  # column-major
        ptrs[name] = backend.alloc(flat.nbytes)
        backend.upload(ptrs[name], flat)
    try:
        status = csymm_op.invoke(backend.lib, backend.handle, side, abi.LOWER, m, m, 1.0, ptrs["A"], m,
                                   ptrs["B"], m, 0.0, ptrs["C"], m)
        if status != abi.Status.SUCCESS:
            raise RuntimeError(f"aclblasCsymm returned {abi.status_name(status)}: {backend.last_message()}")
        out = backend.download(ptrs["C"], m * m * 8).view(np.complex64).reshape(m, m).T
    finally:
        for p in ptrs.values():
            backend.free(p)
    return judge_real_part(out, a, b, side)
