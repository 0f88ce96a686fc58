"""The judge's peak memory for a large perf row, tied to the row's own buffers (docs/performance.md, "Memory").

The row: sgemm_strided_batched, 4 batches of a 4096 x 4096 A (256 MiB) times a 4096 x 8 B, so A is nearly all of the
row's bytes and its sampled golden reads all of A, while the operator's work stays small (1 GFLOP a call). The judge
(the `harness run` process: a lone perf row has no precision judge beside it) needs the row's shared memory and
its golden's view of A; a judge that also keeps the host data, a copy of every buffer or a copy of the golden's
inputs, as it did before, holds the row's bytes four or five times (measured: 1.18 GiB of growth).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEADER = ("case_name,description,transA,transB,m,n,k,alpha,beta,lda,strideA,ldb,strideB,ldc,strideC,batchCount,"
          "a_fill,b_fill,c_fill,expect_result,mere_threshold,mare_multiplier,random_seed")
ROW = "TC_PF_big_a,memory,ACLBLAS_OP_N,ACLBLAS_OP_N,4096,8,4096,1,0,,,,,,,4,RANDOM_0_5,RANDOM_0_5,RANDOM_0_5," \
      "ACLBLAS_STATUS_SUCCESS,0.0001220703125,50,1"
#: The judge's growth over the row may be at most this many times the row's buffers: its shared memory and the
#: golden's view of A are two; the rest is the output's copy, read chunks and numpy's temporaries.
BOUND = 2.5

MEASURE = """
import sys
from harness.cli import main
from harness.run import memory as footprint
from harness.run import row_judge as engine
grown = []
init, begin, end = engine.RowJudge.__init__, engine.RowJudge.begin_called, engine.RowJudge.on_end

def measured_init(self, *args, **kwargs):  # each row from its planning on: VmHWM reset, the resident bytes noted
    self.memory_start = footprint.reset_peak()
    init(self, *args, **kwargs)

def measured_end(self, payload):
    record = end(self, payload)
    grown.append(footprint.peak() - self.memory_start)
    return record

def keeping_begin(self, payload):  # the negative control: a judge that keeps one more copy of the row's buffers
    self.kept = self._copy()
    return begin(self, payload)

engine.RowJudge.__init__, engine.RowJudge.on_end = measured_init, measured_end
if sys.argv[1] == "keep-copy":
    engine.RowJudge.begin_called = keeping_begin
try:
    main(sys.argv[2:])
except SystemExit:
    pass
print("GROWTH", max(grown))
"""


def _row_bytes(tmp_path: Path) -> int:
    from harness.model import operators as ops
    from harness.tables.load import load_table

    case = load_table(_table(tmp_path))[0]
    return sum(ops.get(case.op).buffer_bytes(case.args).values())


def _table(folder: Path) -> Path:
    path = folder / "sgemm_strided_batched_test.csv"
    path.write_text(f"{HEADER}\n{ROW}\n")
    return path


def _growth(tmp_path: Path, mode: str) -> int:
    """The judge process's peak resident bytes over a row (VmHWM, reset as the row is planned), less its resident
    bytes then: the most of the run's rows (a settling pass and the timed row)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, mode, "run", str(_table(tmp_path)), "--rounds", "1", "--warmup", "1",
         "--min-samples", "2", "--no-golden-cache", "--report-dir", str(tmp_path / "reports"),
         "--history", str(tmp_path / "history.sqlite")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert "PASS: exit 0" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    growth = int(re.search(r"GROWTH (\d+)", done.stdout).group(1))
    print(f"{mode}: the judge grew {growth / 2**20:.0f} MiB")
    return growth


@pytest.mark.slow
def test_the_judge_of_a_large_row_holds_its_buffers_at_most_two_and_a_half_times(tmp_path):
    row = _row_bytes(tmp_path)
    assert row > 256 << 20
    growth = _growth(tmp_path, "as-is")
    assert growth <= BOUND * row, f"the judge grew {growth / 2**20:.0f} MiB for a row of {row / 2**20:.0f} MiB"
    # negative control: one more copy of the row held by the judge (as its copy of every buffer was) fails it
    growth = _growth(tmp_path, "keep-copy")
    assert growth > BOUND * row, f"the judge grew {growth / 2**20:.0f} MiB for a row of {row / 2**20:.0f} MiB"
