"""`harness` run in a child process, and the processes a run leaves behind: the isolation and job tests start the
command line and then look for survivors by a mark every process of the run carries in its environment."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def harness(args: list[str], cwd: Path, **env: str) -> subprocess.Popen:
    """`harness ...` in a child process; every process of the run carries HARNESS_TEST_MARK in its environment."""
    return subprocess.Popen([sys.executable, "-m", "harness.cli", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **env})


def survivors(mark: str) -> list[int]:
    """Live processes whose environment carries `mark` (a zombie's environment reads empty)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and f"HARNESS_TEST_MARK={mark}".encode() in Path(f"/proc/{entry}/environ").read_bytes():
                found.append(int(entry))
        except OSError:
            pass
    return found


def gone(mark: str, within_s: float = 5.0) -> bool:
    end = time.monotonic() + within_s
    while survivors(mark) and time.monotonic() < end:
        time.sleep(0.05)
    return not survivors(mark)
