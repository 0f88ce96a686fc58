"""The fixed CPU cost of one `harness` invocation (what the test suite's hundreds of subprocesses and every user
call pay): user+system CPU seconds of `harness --help`, a 1-row `run`, `runs --limit 1` and `compare` of two
1-row runs, the median of N repeats each, with the load beside it (CPU time scales less with load than wall does,
but not at all only on an idle machine).

Usage: python3 benchmarks/cli_start.py [N]    (run from the checkout; it writes only into a temporary folder)
"""
from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW = ["cases/csymm_test.csv", "-k", "TC_L0_0001"]


def cpu_of(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(user+system CPU seconds of the child and its children, wall seconds, exit code) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    code = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, code


def commands(work: Path) -> dict[str, list[str]]:
    """The four measured invocations, in this order: the `run`s give `compare` its previous and latest run."""
    history = str(work / "h.sqlite")
    cli = [sys.executable, "-m", "harness.cli"]
    return {"--help": cli + ["--help"],
            "run (1 row)": cli + ["run", *ROW, "--report-dir", str(work / "r"), "--history", history],
            "runs --limit 1": cli + ["runs", "--limit", "1", "--history", history],
            "compare": cli + ["compare", "previous", "latest", "--history", history, "--report-dir", str(work / "c")]}


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, argv in commands(work).items():
            runs = [cpu_of(argv, env) for _ in range(n)]
            cpu, wall = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            print(f"{name:16s} CPU {cpu:5.2f} s   wall {wall:5.2f} s   exit {sorted({r[2] for r in runs})}")
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
