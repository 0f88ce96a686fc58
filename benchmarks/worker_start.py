"""Where a cpu worker's start goes: bwrap's namespaces, the interpreter, the imports, the library load, measured
one after the other (median of N starts each), then a whole worker start through the runner (fork to "started" to
"ready") as the perf phase pays it per row-round.

Usage: python3 benchmarks/worker_start.py [N]    (print `uptime` beside it: the numbers scale with the load)
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import wait

from harness.run import bwrap


def _median(argv: list[str], n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def steps(n: int) -> None:
    """Each step's wall, bare and inside bwrap (the sandbox as the runner builds it)."""
    py = sys.executable
    imports = {"true": ["true"],
               "interpreter": [py, "-c", "pass"],
               "+ numpy": [py, "-c", "import numpy"],
               "+ worker and sandbox modules": [py, "-c", "import harness.run.worker, harness.run.sandbox"],
               "+ timing (scipy.stats)": [py, "-c", "import harness.run.worker, harness.run.sandbox, "
                                                    "harness.perf.stats, harness.perf.timing"]}
    found = bwrap.binary()
    with tempfile.TemporaryDirectory() as notes:
        for name, argv in imports.items():
            bare = _median(argv, n)
            boxed = _median(bwrap.command(found, notes, argv), n) if found else float("nan")
            print(f"{name:32s} bare {bare * 1e3:7.0f} ms   in bwrap {boxed * 1e3:7.0f} ms")


def whole(n: int, timed: bool) -> None:
    """A worker through the runner as the perf phase starts one: fork -> "started" (interpreter and imports) ->
    "ready" (confinement, library loaded, aclblasCreate)."""
    from harness.model.settings import Settings, TimingConfig
    from harness.run import handle, runner, zygotes

    settings = Settings(timing=TimingConfig() if timed else None, timed_rows=timed, timeout_s=60.0)
    runner.ensure_twin()
    starts, readies, closes = [], [], []
    with zygotes.running():
        for _ in range(n):
            t0 = time.monotonic()
            w = handle.Worker(settings)
            started = ready = None
            while ready is None:
                wait(w.waitables(), timeout=1.0)
                message = w.receive()
                if message is None:
                    continue
                kind, payload = message
                if kind == "started":
                    started = time.monotonic()
                    w.handle(kind, payload)
                elif kind == "ready":
                    ready = time.monotonic()
                    w.handle(kind, payload)
            t1 = time.monotonic()
            w.close()
            closes.append(time.monotonic() - t1)
            starts.append(started - t0)
            readies.append(ready - t0)
    mode = "timed" if timed else "untimed"
    mode += ", fresh interpreter" if not timed or os.environ.get(zygotes.OFF_VARIABLE) == "1" else ", zygote"
    print(f"worker ({mode}): fork->started {statistics.median(starts) * 1e3:.0f} ms, "
          f"fork->ready {statistics.median(readies) * 1e3:.0f} ms, close {statistics.median(closes) * 1e3:.0f} ms "
          f"(median of {n}; min ready {min(readies) * 1e3:.0f} ms)")


def main() -> int:
    """Usage: worker_start.py [COUNT]: the steps of a worker's start, then whole starts untimed and timed."""
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    steps(count)
    whole(count, timed=False)
    whole(count, timed=True)
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
