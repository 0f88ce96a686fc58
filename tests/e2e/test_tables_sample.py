"""The project's own tables, sampled deterministically (every TC_L0 row plus every tenth other row), run end to end
on the CPU twin through the same engine as `harness run`: CI sees the real tables, not only unit tests.

Perf rows in the sample are checked for status and untouched memory only; timing them belongs to `harness run`.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.tables.load import load_table
from harness.run.row_judge import run_case

#: 410 rows of a few seconds at most, 71 s together on the loaded 2-core machine
pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
TABLES = sorted((ROOT / "cases").glob("*_test.csv"))


def _sample() -> list:
    return [pytest.param(case, id=case.id) for table in TABLES for i, case in enumerate(load_table(table))
            if case.name.startswith("TC_L0_") or i % 10 == 0]


@pytest.fixture(scope="module")
def twin():
    from harness.backends import open_backend

    backend = open_backend("cpu")
    yield backend
    backend.close()


def test_tables_exist():
    assert [t.name for t in TABLES] == ["csymm_test.csv", "sgemm_batched_test.csv", "sgemm_strided_batched_test.csv",
                                        "ssymm_test.csv"]


@pytest.mark.parametrize("case", _sample())
def test_sampled_row_passes_on_the_twin(case, twin):
    record = run_case(case, twin)
    assert record["verdict"] == "PASS", record["reason"]
