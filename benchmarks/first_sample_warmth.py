"""Is a perf row's checked call a warm-up? (harness.perf.timing.WARM_CALL_S; a script, not a test: it takes minutes.)

For each row, in fresh processes: the judge and the sandbox in one process (engine.run_case: the judge's work on
the checked call's output runs between that call and the samples, as the real judge's does beside the sandbox),
no warm-up, four samples. Printed per row: sample 1 over the median of samples 2-4, one ratio per process. Where
the ratios sit at 1, the checked call left the process as warm as a warm-up call would.

    taskset -c 1 python3 benchmarks/first_sample_warmth.py --repeats 5
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Rows whose one twin call takes ~5, ~20, ~40-80 and ~100-330 ms on a 2-core host.
ROWS = {"csymm": ["TC_PF_0072", "TC_PF_0068", "TC_PF_0080", "TC_PF_0005"],
        "sgemm_strided_batched": ["TC_PF_0081", "TC_PF_0056", "TC_PF_0085", "TC_PF_0064"]}
CHILD = r'''
import json, sys
from harness.backends import open_backend
from harness.model.settings import TimingConfig
from harness.run.engine import run_case
from harness.tables.load import load_cases
(case,) = load_cases([sys.argv[1]], sys.argv[2])
config = TimingConfig(warmup=0, min_samples=4, max_samples=4, max_time_s=1000, warmup_max_time_s=0)
rec = run_case(case, open_backend("cpu"), timing_config=config)
print(json.dumps([rec["verdict"], rec["timing"]["samples_us"] if rec["timing"] else []]))
'''


def first_over_rest(table: Path, name: str) -> tuple[float, float]:
    """(sample 1 / median of samples 2-4, that median in ms) from one fresh process."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(table), name], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    verdict, samples = json.loads(out.stdout.strip().splitlines()[-1])
    if verdict != "PASS" or len(samples) != 4:
        raise SystemExit(f"{table.name}::{name}: {verdict} with {len(samples)} samples")
    rest = sorted(samples[1:])[1]
    return samples[0] / rest, rest / 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per row (default 5)")
    args = parser.parse_args()
    for op, names in ROWS.items():
        for name in names:
            got = sorted(first_over_rest(ROOT / "cases" / f"{op}_test.csv", name) for _ in range(args.repeats))
            print(f"{op} {name} ~{got[len(got) // 2][1]:.1f} ms a call: first/rest "
                  + " ".join(f"{r:.3f}" for r, _ in got), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
