"""pytest over a whole table: collecting its 1200 rows and running some costs a few tens of MB (measured: 88 MB peak
for the 49 TC_L0 rows of cases/csymm_test.csv). The 1.5 GB peaks seen over a whole table are its largest rows' own
buffers (TC_PF_0004, 4096^2 complex64: 1.56 GB in `pytest -k TC_PF_0004`, 1.66 GB in `harness run -k TC_PF_0004`,
its record's harness_peak_bytes 1.56 GB), not the plugin or the table reader holding on to anything."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Far above what the rows need and far below the 1.5 GB a leak through the items would show. Measured here: 72-92 MB
#: (pytest). The limit is on the pytest process, where the plugin and the table reader hold the items: its children
#: (each row's worker) are printed, not judged.
PEAK_LIMIT_MB = 600

#: The pytest process's own peak is its VmHWM, not getrusage's ru_maxrss: Linux keeps ru_maxrss across execve, and a
#: process forked from a large one starts with the parent's resident pages, so ru_maxrss named the xdist worker's
#: size at the fork (1017 MB in a loaded CI replica, after that worker had run a large row; 1030 MB and 408 MB
#: earlier for "a child"), not this pytest's (test_the_peak_is_this_process_s_own below). The children's figure is
#: ru_maxrss, with that caveat.
MEASURE = """
import resource, sys, pytest
code = pytest.main(sys.argv[1:])
hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(f"PEAK_KB {hwm}")
print(f"CHILDREN_PEAK_KB {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
sys.exit(code)
"""


def test_pytest_over_a_whole_table_stays_small(tmp_path):
    """Every row collected, a few small ones run (each in its forked worker, whose peak is printed)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", MEASURE, str(ROOT / "cases" / "csymm_test.csv"), "-k",
                           "TC_L0_000", "-q", "-p", "no:cacheprovider", "-p", "xdist", "-n", "0"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "9 passed, 1191 deselected" in done.stdout
    peak_mb = int(done.stdout.split("\nPEAK_KB ")[1].split()[0]) / 1024
    children_mb = int(done.stdout.split("CHILDREN_PEAK_KB ")[1].split()[0]) / 1024
    print(f"pytest peak RSS {peak_mb:.0f} MB, its largest child's {children_mb:.0f} MB")
    assert peak_mb < PEAK_LIMIT_MB, f"peak RSS {peak_mb:.0f} MB"


def test_the_peak_is_this_process_s_own():
    """The measure above, started by a process holding 300 MB: VmHWM is the child's own few MB, where ru_maxrss
    (the measure before) reports the parent's 300 MB (negative control)."""
    held = bytearray(300 << 20)
    held[::4096] = b"\1" * len(held[::4096])  # resident, not just reserved
    code = ("import resource; print(next(line.split()[1] for line in open('/proc/self/status') "
            "if line.startswith('VmHWM:')), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    hwm_kb, maxrss_kb = map(int, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                timeout=60, check=True).stdout.split())
    assert hwm_kb < 100 << 10 < 300 << 10 < maxrss_kb, (hwm_kb, maxrss_kb)
