"""The judge's memory over a large perf row, tied to the row's own buffers (docs/running.md, "What the memory
figures measure").

The row: sgemm_strided_batched, 4 batches of a 4096 x 4096 A (256 MiB) times a 4096 x 8 B, so A is nearly all of the
row's bytes and its sampled golden reads all of A, while the operator's work stays small (1 GFLOP a call). The judge
(the `harness run` process: a lone perf row has no precision judge beside it) plans the row's host data, computes
its golden and writes the shared memory, letting each buffer's host data go once written there: at that step it holds
the row twice. From the checked call on (the worker works on the shared memory's pages then) it holds the shared
memory and chunks of it: a judge that also kept the golden's view of A (as it did before its inputs were let go) or a
copy of every buffer holds the row twice or three times.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADER = ("case_name,description,transA,transB,m,n,k,alpha,beta,lda,strideA,ldb,strideB,ldc,strideC,batchCount,"
          "a_fill,b_fill,c_fill,expect_result,mere_threshold,mare_multiplier,random_seed")
ROW = "TC_PF_big_a,memory,ACLBLAS_OP_N,ACLBLAS_OP_N,4096,8,4096,1,0,,,,,,,4,RANDOM_0_5,RANDOM_0_5,RANDOM_0_5," \
      "ACLBLAS_STATUS_SUCCESS,0.0001220703125,50,1"
#: From the checked call to the row's end, the judge may hold at most this many times the row's buffers beyond what it
#: held before planning the row: the shared memory is one; the rest is a read chunk and numpy's temporaries.
BOUND = 1.25
#: Over the whole row, planning included: the host data of a buffer beside the shared memory, and the golden.
PLANNING_BOUND = 2.25

MEASURE = """
import sys
from harness.cli import main
from harness.run import goldens, memory as footprint
from harness.run import row_judge as engine
grown, judging = [], []
init, begin, end = engine.RowJudge.__init__, engine.RowJudge.begin_called, engine.RowJudge.on_end
golden_of = engine.golden_of

def measured_init(self, *args, **kwargs):  # each row from its planning on: VmHWM reset, the resident bytes noted
    self.memory_start = footprint.reset_peak()
    init(self, *args, **kwargs)

def measured_begin(self, payload):  # the checked call made: the judge's peak from here on is measured apart
    grown.append(footprint.peak() - self.memory_start)
    footprint.reset_peak()
    return begin(self, payload)

def measured_end(self, payload):
    record = end(self, payload)
    judging.append(footprint.peak() - self.memory_start)
    grown.append(judging[-1])
    return record

def keeping_begin(self, payload):  # a negative control: a judge that keeps one more copy of the row's buffers
    self.kept = self._copy()
    return measured_begin(self, payload)

def keeping_inputs(case, bufs, cache=False, replan=None):  # the other: a sampled golden keeps its view of A
    return golden_of(case, bufs, cache)

engine.RowJudge.__init__, engine.RowJudge.begin_called, engine.RowJudge.on_end = measured_init, measured_begin, \
    measured_end
if sys.argv[1] == "keep-copy":
    engine.RowJudge.begin_called = keeping_begin
if sys.argv[1] == "keep-inputs":
    engine.golden_of = keeping_inputs
try:
    main(sys.argv[2:])
except SystemExit:
    pass
print("GROWTH", max(grown), max(judging))
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


def _growth(tmp_path: Path, mode: str) -> tuple[int, int]:
    """The judge process's peak resident bytes less its resident bytes as the row was planned (VmHWM, reset
    then): over the whole row, and from the checked call to the row's end; the most of the run's rows (a settling
    pass and the timed row)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, mode, "run", str(_table(tmp_path)), "--rounds", "1", "--warmup", "1",
         "--min-samples", "2", "--no-golden-cache", "--report-dir", str(tmp_path / "reports"),
         "--history", str(tmp_path / "history.sqlite")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert "PASS: exit 0" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    whole, judging = (int(x) for x in re.search(r"GROWTH (\d+) (\d+)", done.stdout).groups())
    print(f"{mode}: the judge grew {whole / 2**20:.0f} MiB over the row, {judging / 2**20:.0f} MiB from the call on")
    return whole, judging


@pytest.mark.slow
def test_from_the_call_on_the_judge_of_a_large_row_holds_its_buffers_once(tmp_path):
    row = _row_bytes(tmp_path)
    assert row > 256 << 20
    whole, judging = _growth(tmp_path, "as-is")
    assert judging <= BOUND * row, f"the judge grew {judging / 2**20:.0f} MiB for a row of {row / 2**20:.0f} MiB"
    assert whole <= PLANNING_BOUND * row, f"the judge grew {whole / 2**20:.0f} MiB for a row of {row / 2**20:.0f} MiB"
    # negative controls: the golden's view of A kept (the judge before its inputs were let go), or one more copy
    # of the row held by the judge (as its copy of every buffer was), fails it
    for mode in ("keep-inputs", "keep-copy"):
        _, judging = _growth(tmp_path, mode)
        assert judging > BOUND * row, f"{mode}: the judge grew {judging / 2**20:.0f} MiB for a row of " \
                                      f"{row / 2**20:.0f} MiB"
