"""GFLOP/s of the CPU twin against scipy's CBLAS, side by side in one run (a script, not a test).

    python3 benchmarks/twin_vs_cblas.py [--repeats N] [--cores N]

Shapes: 1024x1024 csymm LEFT and RIGHT, 1024^3 x 4 sgemm strided batched. Both sides get the same inputs and the
same threads (the twin's emulated cores default to the host CPU count; OpenBLAS uses its own pool). Reports the best
of N timed calls after one warm-up each, and the twin / CBLAS ratio (target >= 0.25).
"""
from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from scipy.linalg import blas
from tabulate import tabulate

from harness.model.abi import OP_N, SIDE_LEFT, SIDE_RIGHT, UPPER, LOWER
from harness.backends import aclblas_lib
from harness.backends.build import build_twin


def best_seconds(fn: Callable[[], object], repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def complex_matrix(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    z = rng.standard_normal((rows, cols)) + 1j * rng.standard_normal((rows, cols))
    return np.asfortranarray(z.astype(np.complex64))


def bench_csymm(lib, handle: int, side: int, uplo: int, size: int, repeats: int) -> tuple[float, float]:
    rng = np.random.default_rng(1)
    a, b, c = (complex_matrix(rng, size, size) for _ in range(3))
    alpha, beta = 1.0 + 0.5j, 0.5 - 0.25j

    def twin() -> None:
        status = aclblas_lib.csymm(lib, handle, side, uplo, size, size, alpha, a.ctypes.data, size, b.ctypes.data,
                                   size, beta, c.ctypes.data, size)
        assert status == 0, status

    def cblas() -> None:
        blas.csymm(alpha, a, b, beta=beta, c=c, side=int(side == SIDE_RIGHT), lower=int(uplo == LOWER),
                   overwrite_c=1)

    return best_seconds(twin, repeats), best_seconds(cblas, repeats)


def bench_sgemm(lib, handle: int, size: int, batch: int, repeats: int) -> tuple[float, float]:
    rng = np.random.default_rng(2)
    stride = size * size
    a, b, c = (rng.standard_normal(stride * batch).astype(np.float32) for _ in range(3))
    mats = [(np.asfortranarray(a[i * stride:(i + 1) * stride].reshape(size, size, order="F")),
             np.asfortranarray(b[i * stride:(i + 1) * stride].reshape(size, size, order="F")),
             np.asfortranarray(c[i * stride:(i + 1) * stride].reshape(size, size, order="F"))) for i in range(batch)]
    alpha, beta = 1.5, 0.5

    def twin() -> None:
        status = aclblas_lib.sgemm_strided_batched(lib, handle, OP_N, OP_N, size, size, size, alpha, a.ctypes.data,
                                                   size, stride, b.ctypes.data, size, stride, beta, c.ctypes.data,
                                                   size, stride, batch)
        assert status == 0, status

    def cblas() -> None:
        for ai, bi, ci in mats:
            blas.sgemm(alpha, ai, bi, beta=beta, c=ci, overwrite_c=1)

    return best_seconds(twin, repeats), best_seconds(cblas, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cores", type=int, default=None, help="emulated cores (default: host CPU count)")
    args = parser.parse_args()
    lib = aclblas_lib.load_aclblas(str(build_twin()))
    handle = aclblas_lib.create_handle(lib)
    if args.cores:
        lib.aclblasTwinSetCoreCount(handle, args.cores)
    size = 1024
    rows = []
    for label, side, uplo in (("csymm 1024x1024 LEFT LOWER", SIDE_LEFT, LOWER),
                              ("csymm 1024x1024 RIGHT UPPER", SIDE_RIGHT, UPPER)):
        flops = 8.0 * size ** 3
        twin_s, cblas_s = bench_csymm(lib, handle, side, uplo, size, args.repeats)
        rows.append((label, flops / twin_s / 1e9, flops / cblas_s / 1e9, cblas_s / twin_s))
    batch = 4
    flops = 2.0 * size ** 3 * batch
    twin_s, cblas_s = bench_sgemm(lib, handle, size, batch, args.repeats)
    rows.append((f"sgemm strided batched 1024^3 x {batch}", flops / twin_s / 1e9, flops / cblas_s / 1e9,
                 cblas_s / twin_s))
    aclblas_lib.destroy_handle(lib, handle)
    print(tabulate(rows, headers=("shape", "twin GFLOP/s", "CBLAS GFLOP/s", "twin/CBLAS"), floatfmt=".2f"))


if __name__ == "__main__":
    main()
