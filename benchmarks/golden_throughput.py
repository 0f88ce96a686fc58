"""Golden throughput: `golden.cblas` against scipy.linalg.blas called directly on prepared Fortran arrays, side by
side in one run, on the largest precision shapes (csymm 2048x2048 LEFT and RIGHT, sgemm 1024^3 x 4).

The golden must stay within 10 % of the raw BLAS call (ratio >= 0.9): the harness computes a golden for every
precision row, so a wrapper that copies needlessly multiplies the cost of a 1200-row table. Runs alternate
(raw, golden, golden, raw, ...) so drift on a shared machine hits both sides alike; medians are compared.

    python3 -m benchmarks.golden_throughput [--repeat 6] [--size 2048] [--gemm 1024] [--batch 4]
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import numpy as np
from scipy.linalg import blas

import golden
from harness.model.abi import OP_N, SIDE_LEFT, SIDE_RIGHT, UPPER


def _complex(rng: np.random.Generator, count: int) -> np.ndarray:
    return (rng.uniform(-1, 1, count) + 1j * rng.uniform(-1, 1, count)).astype(np.complex64)


def _flat(result: np.ndarray | list[np.ndarray]) -> np.ndarray:
    """Column-major storage of a result (a list of per-batch matrices is concatenated)."""
    parts = result if isinstance(result, list) else [result]
    return np.concatenate([np.asarray(p).ravel(order="F") for p in parts])


def _interleaved(raw: Callable[[], np.ndarray | list[np.ndarray]], wrapped: Callable[[], np.ndarray],
                 repeat: int) -> tuple[dict[str, list[float]], bool]:
    """Wall and process CPU times of both callables in alternating order (raw first, then golden first, ...), so
    neither side always runs second on warm caches, and whether their results were bit-identical. CPU time is
    the steadier measure on a shared machine: other tenants stretch wall time, not this process's CPU time."""
    times: dict[str, list[float]] = {"raw": [], "golden": [], "raw_cpu": [], "golden_cpu": []}
    results: dict[str, Any] = {}
    identical = True
    for i in range(repeat):
        order = (("raw", raw), ("golden", wrapped)) if i % 2 == 0 else (("golden", wrapped), ("raw", raw))
        for name, fn in order:
            t0, c0 = time.perf_counter(), time.process_time()
            results[name] = fn()
            times[name].append(time.perf_counter() - t0)
            times[f"{name}_cpu"].append(time.process_time() - c0)
        identical &= np.array_equal(_flat(results["raw"]), _flat(results["golden"]))
    return times, identical


def bench_csymm(size: int, side: int, repeat: int, rng: np.random.Generator) -> dict:
    A, B, C = _complex(rng, size * size), _complex(rng, size * size), _complex(rng, size * size)
    alpha, beta = complex(np.complex64(0.7 - 0.2j)), complex(np.complex64(0.3 + 0.5j))
    a, b, c = (x.reshape(size, size, order="F") for x in (A, B, C))

    def raw() -> np.ndarray:
        return blas.csymm(alpha, a, b, beta=beta, c=c, side=int(side == SIDE_RIGHT), lower=0)

    def wrapped() -> np.ndarray:
        return golden.cblas.csymm(side, UPPER, size, size, alpha, A, size, B, size, beta, C, size)

    times, same = _interleaved(raw, wrapped, repeat)
    name = f"csymm {size}x{size} {'LEFT' if side == SIDE_LEFT else 'RIGHT'} UPPER"
    return {"case": name, **times, "identical": same, "flop": 8.0 * size ** 3}


def bench_sgemm(size: int, batch: int, repeat: int, rng: np.random.Generator) -> dict:
    stride = size * size
    A, B, C = (rng.uniform(-1, 1, stride * batch).astype(np.float32) for _ in range(3))
    alpha, beta = 0.75, 0.5
    views = [tuple(x[i * stride:(i + 1) * stride].reshape(size, size, order="F") for x in (A, B, C))
             for i in range(batch)]

    def raw() -> list[np.ndarray]:
        return [blas.sgemm(alpha, a, b, beta=beta, c=c) for a, b, c in views]

    def wrapped() -> np.ndarray:
        return golden.cblas.sgemm_strided_batched(OP_N, OP_N, size, size, size, alpha, A, size, stride, B, size,
                                                  stride, beta, C, size, stride, batch)

    times, same = _interleaved(raw, wrapped, repeat)
    return {"case": f"sgemm {size}^3 x {batch} NN", **times, "identical": same,
            "flop": 2.0 * size ** 3 * batch}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=6, help="timed pairs per case (default 6)")
    parser.add_argument("--size", type=int, default=2048, help="csymm m = n (default 2048)")
    parser.add_argument("--gemm", type=int, default=1024, help="sgemm m = n = k (default 1024)")
    parser.add_argument("--batch", type=int, default=4, help="sgemm batch count (default 4)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(2024)
    info = golden.blas_info()
    print(f"BLAS: {info['blas_name']} {info['blas_version']} ({info.get('blas_runtime_config')}), "
          f"threads {info.get('threads')}; scipy {info['scipy_version']}, numpy {info['numpy_version']}")
    rows = [bench_csymm(args.size, SIDE_LEFT, args.repeat, rng), bench_csymm(args.size, SIDE_RIGHT, args.repeat, rng),
            bench_sgemm(args.gemm, args.batch, args.repeat, rng)]
    print(f"{'case':30} {'raw ms':>8} {'gold ms':>8} {'ratio':>6} {'raw cpu':>8} {'gold cpu':>8} {'ratio':>6} "
          f"{'GFLOP/s':>8}  identical")
    worst = {"wall": float("inf"), "cpu": float("inf")}
    for r in rows:
        med = {k: statistics.median(r[k]) * 1e3 for k in ("raw", "golden", "raw_cpu", "golden_cpu")}
        wall, cpu = med["raw"] / med["golden"], med["raw_cpu"] / med["golden_cpu"]  # golden speed / raw speed
        worst = {"wall": min(worst["wall"], wall), "cpu": min(worst["cpu"], cpu)}
        print(f"{r['case']:30} {med['raw']:8.1f} {med['golden']:8.1f} {wall:6.3f} {med['raw_cpu']:8.1f} "
              f"{med['golden_cpu']:8.1f} {cpu:6.3f} {r['flop'] / med['golden'] / 1e6:8.1f}  {r['identical']}")
    print(f"worst ratio golden/raw speed (median of {args.repeat}): wall {worst['wall']:.3f}, cpu {worst['cpu']:.3f}"
          f" (target >= 0.9)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
