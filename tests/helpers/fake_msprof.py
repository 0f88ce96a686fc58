"""A fake msprof (application mode) for the msprof scope's tests: runs `--application` with the fake ACL runtime
logging every kernel it times (FAKE_ACL_TASK_LOG), then writes what msprof's op_summary_*.csv holds for them
(PROF_*/device_0/summary/: Op Name, Task Type, Task Start Time(us), Task Duration(us), ...). FAKE_MSPROF_WRITE=0
writes no summary (a profile msprof could not export)."""
from __future__ import annotations

import csv
import os
import shlex
import subprocess
import sys
from pathlib import Path

#: Ascend/msprof analysis/msconfig/msprof_export_data_config.py 'op_summary' (abridged); older exports: "Block Dim",
#: "Mix Block Dim" (tests/perf/test_timing_scopes.py reads each variant).
COLUMNS = ["Device_id", "Op Name", "OP Type", "Task Type", "Task Start Time(us)", "Task Duration(us)",
           "Task Wait Time(us)", "Block Num", "Mix Block Num"]


def main(argv: list[str]) -> int:
    options = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
    out = Path(options["output"])
    out.mkdir(parents=True, exist_ok=True)
    log = out / "tasks.log"
    code = subprocess.run(shlex.split(options["application"]),
                          env={**os.environ, "FAKE_ACL_TASK_LOG": str(log)}).returncode
    if os.environ.get("FAKE_MSPROF_WRITE") == "0":
        return code
    summary = out / "PROF_000001_fake" / "device_0" / "summary"
    summary.mkdir(parents=True)
    tasks = sorted((int(start), int(end), name) for name, _, start, end in
                   (line.split(",") for line in (log.read_text().splitlines() if log.exists() else [])))
    with (summary / "op_summary_0_1_1.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        previous_end = None
        for start, end, name in tasks:
            wait = 0.0 if previous_end is None else max(0.0, (start - previous_end) / 1e3)
            writer.writerow([0, name, "Csymm", "AI_CORE", f"{start / 1e3:.3f}", f"{(end - start) / 1e3:.3f}",
                             f"{wait:.3f}", 24, "N/A"])
            previous_end = end
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
