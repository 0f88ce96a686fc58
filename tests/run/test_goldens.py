"""harness/run/goldens.py: a sampled golden planned with `replan` lets the row's inputs go once computed and judges as
one that keeps them, its failed gate's error scale computed from the inputs planned again."""
from __future__ import annotations

import numpy as np

from golden import sample
from harness.run import goldens
from harness.run.buffers import plan
from harness.tables.load import load_table
from tables import csymm_row, write_csymm_table


def _shares(golden: goldens.Golden, bufs: dict) -> bool:
    return any(np.shares_memory(g.host, b.host) for g in golden.bufs.values() for b in bufs.values()
               if not g.output)


def test_a_replanned_sampled_golden_holds_no_input_and_judges_alike(tmp_path, monkeypatch):
    monkeypatch.setattr(sample, "BUDGET_FLOPS", 2e4)  # a small perf row sampled as the largest are
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_PF_a", 24, 16)]))[0]
    bufs = plan(case)
    kept = goldens.golden_of(case, bufs)
    planned = []

    def replan():
        planned.append(1)
        return plan(case)
    let_go = goldens.golden_of(case, bufs, replan=replan)
    assert kept.index is not None and np.array_equal(kept.index, let_go.index)
    assert _shares(kept, bufs), "the golden that keeps its inputs holds a view of the row's (the negative control)"
    assert not _shares(let_go, bufs) and all(b.output for b in let_go.bufs.values())
    out = kept.expected.copy()  # C as the sample sees it: right, then wrong enough to fail the gate
    full = np.zeros(bufs["C"].host.size, np.complex64)
    full[kept.index] = out
    assert let_go.judge(full).to_dict() == kept.judge(full).to_dict() and not planned
    full[kept.index[:5]] *= np.complex64(1.01)
    wrong = kept.judge(full)
    assert not wrong.passed and let_go.judge(full).to_dict() == wrong.to_dict()
    assert planned, "the failed gate's error scale came from the inputs planned again"


def test_a_row_judge_lets_a_sampled_rows_inputs_go(tmp_path, monkeypatch):
    from harness.run.row_judge import RowJudge
    from harness.run.sandbox import BackendInfo

    monkeypatch.setattr(sample, "BUDGET_FLOPS", 2e4)
    case = load_table(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_PF_a", 24, 16)]))[0]
    judge = RowJudge(case, BackendInfo())
    try:
        assert judge.golden.index is not None and judge.golden.inputs is not None
        assert all(b.host is None for b in judge.bufs.values()), "host data held beside the shared memory"
    finally:
        judge.close()
