"""Bare call time of the smallest csymm perf rows on one or more twin libraries, side by side in one process (calls
alternate between the libraries, so machine load falls on all alike): median, p90 and max of CALLS calls per row.

    python3 benchmarks/twin_call_time.py --lib old=/tmp/old_twin.so --lib new=build/twin/<key>/libaclblas_twin.so
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from harness.backends import open_backend
from harness.run.row_judge import prepare_call

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_calibration import smallest_cases  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lib", action="append", required=True, help="LABEL=PATH of a twin library (repeatable)")
    p.add_argument("--rows", type=int, default=10)
    p.add_argument("--calls", type=int, default=400)
    p.add_argument("--cores", type=int, help="emulated cores (default: the twin's, the CPU count)")
    p.add_argument("--table", type=Path, default=REPO / "cases" / "csymm_test.csv")
    args = p.parse_args()
    libs = dict(item.split("=", 1) for item in args.lib)
    backends = {label: open_backend("cpu", operator_lib=path, cores=args.cores) for label, path in libs.items()}
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {args.calls} calls per row and library")
    for case in smallest_cases(args.table, args.rows):
        prepared = {label: prepare_call(case, b) for label, b in backends.items()}
        times: dict[str, list[float]] = {label: [] for label in libs}
        for _ in range(args.calls):
            for label, call in prepared.items():
                t0 = time.perf_counter()
                call.call()
                times[label].append((time.perf_counter() - t0) * 1e6)
        parts = []
        for label, t in times.items():
            t.sort()
            parts.append(f"{label} median {statistics.median(t):8.1f} us p90 {t[int(0.9 * len(t))]:8.1f} "
                         f"max {t[-1]:8.1f}")
        print(f"{case.name:<28} " + " | ".join(parts), flush=True)
        for call in prepared.values():
            call.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
