"""Digest of the twin's outputs on a sample of every table's rows, to show that a change of the twin's threading
(not of its arithmetic) leaves every output byte as it was: run it before and after, compare the two files.

Each sampled row (every STEP-th row of each table under cases/, up to a FLOP cap) is planned, filled and called once
on the cpu backend with the given emulated core count; the line printed per row is its name, status and the sha256
of its output buffers (guard zones included, so a write outside C shows too).

    python3 benchmarks/twin_digest.py --cores 2 --out before.txt
    python3 benchmarks/twin_digest.py --cores 2 --out after.txt && cmp before.txt after.txt
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from harness.model import operators as ops
from harness.backends import open_backend
from harness.tables.load import load_table
from harness.run.engine import prepare_call

REPO = Path(__file__).resolve().parents[1]


def digest_lines(step: int, max_flops: float, cores: int, lib: str | None) -> list[str]:
    backend = open_backend("cpu", cores=cores, operator_lib=lib)
    lines = []
    for table in sorted((REPO / "cases").glob("*.csv")):
        for case in load_table(table)[::step]:
            if case.skip or case.errors or ops.get(case.op).flops(case.args) > max_flops:
                continue
            try:
                prepared = prepare_call(case, backend)
            except MemoryError:
                continue
            status = prepared.call()
            prepared.download()
            outs = (prepared.raw(s) for s in prepared.job.slots if s.output)
            sha = hashlib.sha256(b"".join(bytes(o) for o in outs)).hexdigest()
            prepared.close()
            lines.append(f"{table.name}:{case.line} {case.name} status={int(status)} {sha[:24]}")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--step", type=int, default=8, help="every STEP-th row of each table (default 8)")
    p.add_argument("--max-mflop", type=float, default=200.0, help="skip rows above this many MFLOP (default 200)")
    p.add_argument("--cores", type=int, default=2, help="emulated cores (default 2)")
    p.add_argument("--operator-lib", help="a prebuilt twin instead of this checkout's")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    lines = digest_lines(args.step, args.max_mflop * 1e6, args.cores, args.operator_lib)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} rows digested into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
