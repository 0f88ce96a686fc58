"""The judge's golden cache (harness/judge/golden_cache.py): the second run of a table reads its goldens instead of
computing them, an entry that is not what it says is recomputed, the cache stays under its cap, `--no-golden-cache`
bypasses it, and a process that runs the operator never touches it."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.model.case import Case
from harness.tables.load import load_cases
from harness.cli import main
from harness.judge import golden_cache
from harness.run import row_judge
from harness.run.sandbox import BackendInfo

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "cases" / "csymm_test.csv"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(golden_cache.SWITCH_ENV, "1")
    return tmp_path / "cache" / "goldens"


def entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("*/*.npz"))


def first_cases(n: int, perf: bool = False) -> list[Case]:
    return [c for c in load_cases([TABLE]) if c.expected_status == 0 and c.is_perf == perf][:n]


def judged(case: Case) -> row_judge.RowJudge:
    judge = row_judge.RowJudge(case, BackendInfo())
    assert judge.done is None and judge.golden is not None
    return judge


def test_the_code_version_is_read_back_by_the_next_process(cache_dir, monkeypatch):
    """The golden code's version is kept under the digest of every source's bytes: the next process reads it (the
    same value) instead of following the imports again."""
    golden_cache.code_version.cache_clear()
    computed = golden_cache.code_version("csymm")
    [memo] = (cache_dir.parent / "code-versions").iterdir()
    golden_cache.code_version.cache_clear()  # as a fresh process
    monkeypatch.setattr(golden_cache, "_code_version", lambda op, versions: pytest.fail("followed the imports"))
    assert golden_cache.code_version("csymm") == computed == memo.read_text()
    golden_cache.code_version.cache_clear()


def test_a_damaged_code_version_is_computed_again(cache_dir):
    """Negative control: a memo that is not a sha256 is not trusted; the version is computed and written anew."""
    golden_cache.code_version.cache_clear()
    computed = golden_cache.code_version("csymm")
    [memo] = (cache_dir.parent / "code-versions").iterdir()
    memo.write_text("not a digest")
    golden_cache.code_version.cache_clear()
    assert golden_cache.code_version("csymm") == computed == memo.read_text()
    golden_cache.code_version.cache_clear()


def test_the_second_judge_of_a_row_reads_the_golden_the_first_computed(cache_dir):
    for case in [*first_cases(2), *first_cases(1, perf=True)]:  # a perf row's golden is a sample: cached too
        first, second = judged(case), judged(case)
        assert not first.golden_hit and second.golden_hit
        np.testing.assert_array_equal(first.golden.expected, second.golden.expected)
        np.testing.assert_array_equal(first.golden.truth, second.golden.truth)
    assert len(entries(cache_dir)) == 3


def test_an_entry_that_is_not_what_it_says_is_recomputed(cache_dir):
    case = first_cases(1)[0]
    truth = judged(case).golden.expected
    [path] = entries(cache_dir)
    with np.load(path) as npz:
        arrays = {name: npz[name] for name in npz.files}
    arrays["expected"] = arrays["expected"] + 1  # a tampered golden, its recorded digest kept
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    # negative control: the entry now holds a wrong golden, which an unverified read would hand the judge
    with np.load(path) as npz:
        assert not np.array_equal(npz["expected"], truth)
    again = judged(case)
    assert not again.golden_hit, "a tampered entry was trusted"
    np.testing.assert_array_equal(again.golden.expected, truth)
    path.write_bytes(path.read_bytes()[:100])  # a torn file
    torn = judged(case)
    assert not torn.golden_hit and judged(case).golden_hit  # recomputed, then stored whole again


def test_the_key_changes_with_any_input_byte_and_with_the_parameters(cache_dir):
    case = first_cases(1)[0]
    judge = judged(case)
    bufs = judge.golden.bufs
    before = golden_cache.key(case.op, case.args, bufs)
    name = sorted(bufs)[0]
    bufs[name].host.view(np.uint8)[-1] ^= 1
    assert golden_cache.key(case.op, case.args, bufs) != before
    bufs[name].host.view(np.uint8)[-1] ^= 1
    assert golden_cache.key(case.op, case.args, bufs) == before
    other = first_cases(2)[1]
    assert golden_cache.key(case.op, other.args, bufs) != before


def test_the_cache_stays_under_its_cap(cache_dir, monkeypatch):
    monkeypatch.setattr(golden_cache, "_size", {})
    monkeypatch.setenv(golden_cache.CAP_ENV, str(40_000))
    for case in first_cases(30):
        judged(case)
    total = sum(p.stat().st_size for p in entries(cache_dir))
    assert 0 < total <= 40_000 and len(entries(cache_dir)) < 30


def test_a_process_running_the_operator_never_touches_the_cache(cache_dir):
    """row_judge.run_case runs judge and operator in one process: it computes its goldens itself."""
    from harness.backends import open_backend

    backend = open_backend("cpu")
    try:
        record = row_judge.run_case(first_cases(1)[0], backend)
    finally:
        backend.close()
    assert record["verdict"] == "PASS" and entries(cache_dir) == []
    judged(first_cases(1)[0])  # negative control: a judge on its own does write there
    assert len(entries(cache_dir)) == 1


def run_goldens(tmp_path: Path, *extra: str) -> dict:
    """One cpu run of three precision rows and a perf row; its report.json's job."""
    out = tmp_path / f"r{len(list(tmp_path.glob('r*')))}"
    code = main(["run", str(TABLE), "-k", "TC_L0_0001 or TC_L0_0002 or TC_L0_0004 or TC_PF_0015",
                 "--min-samples", "4", "--max-time", "0.05", "--warmup", "1", "--rounds", "1",
                 "--report-dir", str(out), "--history", str(tmp_path / "h.sqlite"), *extra])
    assert code == 0
    return json.loads(next(out.glob("*/report.json")).read_text(encoding="utf-8"))["job"]


@pytest.mark.slow  # 43 s of a bare pytest -n 2 at load ~20
def test_the_second_run_reads_every_golden_and_no_golden_cache_computes_them(cache_dir, tmp_path, capsys):
    first = run_goldens(tmp_path)
    assert first["goldens"] == 4 and first["golden_hits"] == 0
    second = run_goldens(tmp_path)
    assert second["goldens"] == 0 and second["golden_hits"] == 4
    bypass = run_goldens(tmp_path, "--no-golden-cache")
    assert bypass["goldens"] == 4 and bypass["golden_hits"] == 0
