"""Does dropping the samples the scheduler disturbed let rounds tell a 5 % slower twin apart on a loaded machine?
A sample is disturbed as harness.perf.timing.SchedProbe says (the calling thread waited more than DISTURBED_NS on a run
queue during the call, or a thread of the process was preempted), as NVBench drops its throttled samples. One process, the ten smallest csymm perf rows, rounds of SAMPLES
calls alternating between two twin libraries (A B A B ...); each round's figure is its p10, once over all samples
and once over the undisturbed ones only; per row the two libraries' rounds get compare's shift test (Hodges-Lehmann
on log p10, Mann-Whitney) and compare's rule (REGRESSION: p < 0.05 and the whole CI above +2 %).

    python3 benchmarks/load_rejection.py --lib-b build/twin/<slow5>/libaclblas_twin.so
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from harness.backends import open_backend
from harness.perf.compare import MIN_EFFECT, shift_test
from harness.run.row_judge import prepare_call
from harness.perf.timing import SchedProbe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_calibration import smallest_cases  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def one_round(call, samples: int, probe: SchedProbe) -> tuple[float, float | None, float]:
    """(p10 of all samples, p10 of the undisturbed ones or None when under 5, share disturbed)."""
    times, clean = [], []
    for _ in range(samples):
        before = probe.read()
        t0 = time.perf_counter()
        call()
        elapsed = (time.perf_counter() - t0) * 1e6
        times.append(elapsed)
        if not probe.disturbed(before, probe.read()):
            clean.append(elapsed)
    return (float(np.percentile(times, 10)), float(np.percentile(clean, 10)) if len(clean) >= 5 else None,
            1 - len(clean) / samples)


def verdict(a: list[float], b: list[float]) -> tuple[str, float]:
    if min(len(a), len(b)) < 3:
        return "TOO_FEW", math.nan
    shift, lo, hi, p = shift_test(np.log(a), np.log(b), 0.95)
    return ("REGRESSION" if p < 0.05 and math.expm1(lo) > MIN_EFFECT else "not"), math.expm1(shift)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lib-a", help="side A twin (default: this checkout's)")
    p.add_argument("--lib-b", help="side B twin (default: this checkout's)")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--samples", type=int, default=40)
    p.add_argument("--rows", type=int, default=10)
    args = p.parse_args()
    a, b = (open_backend("cpu", operator_lib=lib) for lib in (args.lib_a, args.lib_b))
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    caught = {"all": 0, "undisturbed": 0}
    probe = SchedProbe()
    for case in smallest_cases(REPO / "cases" / "csymm_test.csv", args.rows):
        sides = [prepare_call(case, backend) for backend in (a, b)]
        figures: dict[str, list[list[float]]] = {"all": [[], []], "undisturbed": [[], []]}
        shares = []
        for _ in range(args.rounds):
            for side, prep in enumerate(sides):
                every, clean, share = one_round(prep.call, args.samples, probe)
                figures["all"][side].append(every)
                if clean is not None:
                    figures["undisturbed"][side].append(clean)
                shares.append(share)
        parts = []
        for kind, (fa, fb) in figures.items():
            word, change = verdict(fa, fb)
            caught[kind] += word == "REGRESSION"
            parts.append(f"{kind}: {word} {change:+.1%} ({len(fa)}+{len(fb)} rounds)")
        print(f"{case.name}: {'; '.join(parts)}; disturbed {np.mean(shares):.0%} of samples", flush=True)
        for prep in sides:
            prep.close()
    print(f"REGRESSION on {caught['all']}/{args.rows} rows with every sample, {caught['undisturbed']}/{args.rows} "
          f"with undisturbed samples only; load average now {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
