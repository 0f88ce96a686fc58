"""The Csymm kernel's instruction counts per output tile on the ascend-cpu emulator, for the three task-book rows:
what the vector cores' panel building (SIMT calls, UB -> L1 copies), the cube (GM -> L1 and L1 -> L0 copies,
Mmads) and the epilogue (Fixpipe, DataCopyPad) issue per tile of C, as the emulator counts them
(`AscendCpuBackend.instr_counts`). A call of these rows is one launch and each tile ends in one Fixpipe, so
per call = counts / launches and per tile = counts / Fixpipes (the NaN scan's SIMT calls are shared out over the
tiles). `ub_to_l1_bytes / 4` is the number of floats the vector cores built with SIMT for the cube.

    python benchmarks/panel_counts.py          # ~1 min on 2 cores (two 1024^2 calls on the emulated cube)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.backends import ascend_cpu
from harness.run.row_judge import run_case

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_cost  # noqa: E402  (the task-book rows)


def counts(backend, case) -> dict:
    """One run of the row: its verdict, launches, tiles, and every instruction count per call and per tile."""
    backend.reset_stats()
    record = run_case(case, backend)
    launches = backend.stats()["launches"]
    instr = backend.instr_counts()
    tiles = instr["fixpipes"] // launches
    return {"case": case.id, "verdict": record["verdict"], "launches": launches, "tiles_per_call": tiles,
            "per_call": {k: v // launches for k, v in instr.items()},
            "per_tile": {k: round(v / (tiles * launches), 1) for k, v in instr.items()},
            "simt_built_floats_per_tile": round(instr["ub_to_l1_bytes"] / 4 / (tiles * launches), 1)}


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    rows = kernel_cost.cases()
    backend = ascend_cpu.open()
    try:
        out = {row: counts(backend, rows[row]) for row in kernel_cost.CSYMM_ROWS}
    finally:
        backend.close()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
