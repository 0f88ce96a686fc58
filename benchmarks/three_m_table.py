"""The 3M method over the csymm table: every row with work (expected SUCCESS, alpha != 0, m n > 0) up to a size,
computed the 3M way on the ascend-cpu emulator's cube (harness/kernels/three_m.py) at one precision and judged by
the row's own gate. The task-book rows and the cancellation probe are in kernel_cost.py; this says whether the
table's other rows (NaN, Inf, edge shapes, other fills) would hold 3M's arithmetic too.

    python benchmarks/three_m_table.py --precision fp32      # ~6 min on the 2-core machine under load
    python benchmarks/three_m_table.py --precision hf32x3    # split HF32 emulated in the Mmad: several times longer
    python benchmarks/three_m_table.py --precision hf32x3 --kc 64   # recombined per K chunk of 64 (issue 38)

Rows not passed are also printed to stderr as they finish, with a count every 100 rows.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

from harness.model import abi
from harness.backends import ascend_cpu
from harness.backends.build import build_ascend_cpu
from harness.kernels import three_m
from harness.tables.load import load_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_cost  # noqa: E402  (its Sgemm builds per precision)

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", choices=("fp32", "hf32", "hf32x3"), default="fp32")
    parser.add_argument("--max-dim", type=int, default=1024, help="rows with max(m, n) up to this (default 1024)")
    parser.add_argument("--kc", type=int, default=None,
                        help="recombine per K chunk of this many (default: all of K, the finished sums)")
    parser.add_argument("--kahan", action="store_true", help="sum the chunks' parts with Kahan's compensation")
    opts = parser.parse_args(argv)
    rows = [c for c in load_table(ROOT / "cases" / "csymm_test.csv") if c.expected_status == abi.Status.SUCCESS
            and c.args.alpha not in (0, None) and c.args.m * c.args.n > 0 and max(c.args.m, c.args.n) <= opts.max_dim]
    backend = ascend_cpu.AscendCpuBackend(build_ascend_cpu(kernel_cost.BUILDS[(opts.precision, "sgemm")]), cores=None)
    verdicts, not_passed, start = collections.Counter(), [], time.monotonic()
    try:
        for done, case in enumerate(rows, 1):
            judgement = three_m.judge_row(backend, case, opts.kc, opts.kahan)
            verdicts[judgement.verdict] += 1
            if judgement.verdict != "PASS":
                not_passed.append({"row": case.id, "verdict": judgement.verdict, "reason": judgement.reason})
                print(json.dumps(not_passed[-1]), file=sys.stderr, flush=True)
            if done % 100 == 0:
                print(f"{done}/{len(rows)} rows, {dict(verdicts)}, {time.monotonic() - start:.0f} s", file=sys.stderr,
                      flush=True)
    finally:
        backend.close()
    print(json.dumps({"precision": opts.precision, "kc": opts.kc, "kahan": opts.kahan, "rows": len(rows),
                      "verdicts": dict(verdicts),
                      "not_passed": not_passed, "seconds": round(time.monotonic() - start, 1)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
