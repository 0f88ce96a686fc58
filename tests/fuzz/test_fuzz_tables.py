"""Fuzzing case tables: malformed input yields diagnostics and verdicts, never a traceback, and good rows still run.

Mutations mirror what breaks real tables: truncated rows, wrong types, unknown enums and fills, duplicate names,
a BOM, CRLF line ends, unbalanced quotes, and dimensions whose buffers would exceed the memory cap (refused before
anything is allocated). The operator is the toy ABI library, so the test isolates the harness's own handling.
"""
from __future__ import annotations

import random

import pytest

from harness.backends import open_backend
from harness.tables.load import load_table
from harness.run.row_judge import run_case
from harness.model.record import VERDICTS
from tables import CSYMM_HEADER, csymm_row

GOOD_ROWS = [csymm_row(f"TC_L0_{i:03d}", 2 + i % 5, 1 + i % 4, uplo="ACLBLAS_LOWER" if i % 2 else "ACLBLAS_UPPER",
                       seed=i) for i in range(12)]
GARBAGE = ["abc", "1.5", "0xFF", "", "-1", "99999999999999", "nan", "inf", "NULLPTR", "null", "RANDOM_N",
           "VALUE_NORM_1E", "INVALID", "999", "\u00e9\u00e8", '"', "1;2;3", "RANDOM_BANDED_x_y", " ", "1e40"]
FUZZ_INPUTS = 240
MEMORY_CAP = 64 << 20


def _mutate(rng: random.Random) -> tuple[str, set[int]]:
    """A mutated table text and the indices of the rows the mutation touched."""
    rows = [r.split(",") for r in GOOD_ROWS]
    touched: set[int] = set()
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(rows))
        kind = rng.choice(["cell", "truncate", "duplicate", "huge", "extra"])
        if kind == "cell":
            rows[i][rng.randrange(2, len(rows[i]))] = rng.choice(GARBAGE)
        elif kind == "truncate":
            rows[i] = rows[i][: rng.randrange(1, len(rows[i]))]
        elif kind == "duplicate":
            j = rng.randrange(len(rows))
            rows[i][0] = rows[j][0]
            touched.add(j)
        elif kind == "huge":
            rows[i][4] = rows[i][5] = str(rng.choice([60000, 2**20, 2**31 - 1]))
        else:
            rows[i].append("surplus")
        touched.add(i)
    text = "\n".join([CSYMM_HEADER, *(",".join(r) for r in rows)]) + "\n"
    if rng.random() < 0.2:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.1:
        text = "\ufeff" + text
    return text, touched


@pytest.fixture(scope="module")
def backend(toy_lib):
    b = open_backend("cpu", operator_lib=str(toy_lib))
    yield b
    b.close()


def test_fuzzed_tables_give_verdicts_not_tracebacks(tmp_path, backend):
    rng = random.Random(20261130)
    tracebacks = []
    for n in range(FUZZ_INPUTS):
        text, touched = _mutate(rng)
        path = tmp_path / f"f{n}" / "csymm_test.csv"
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8", newline="")
        try:
            cases = load_table(path)
            records = [run_case(c, backend, memory_cap=MEMORY_CAP) for c in cases]
        except Exception as exc:  # the property under test: nothing escapes
            tracebacks.append(f"{path}: {type(exc).__name__}: {exc}")
            continue
        assert all(r["verdict"] in VERDICTS for r in records)
        by_line = {c.line: r for c, r in zip(cases, records)}
        for idx in range(len(GOOD_ROWS)):
            line = idx + 2  # the header is line 1
            if idx not in touched and line in by_line:
                assert by_line[line]["verdict"] == "PASS", (text, by_line[line])
    assert tracebacks == []


def test_oversized_dimensions_are_refused_before_allocating(tmp_path, backend):
    path = tmp_path / "csymm_test.csv"
    path.write_text("\n".join([CSYMM_HEADER, csymm_row("TC_ED_huge", 2**20, 2**20)]) + "\n")
    (case,) = load_table(path)
    record = run_case(case, backend, memory_cap=MEMORY_CAP)
    assert record["verdict"] == "ERROR"
    assert "refused before allocating" in record["reason"]


def test_malformed_cell_reason_names_file_line_and_column(tmp_path, backend):
    path = tmp_path / "csymm_test.csv"
    path.write_text("\n".join([CSYMM_HEADER, csymm_row("TC_ED_bad", 4, 4).replace(",4,4,", ",four,4,", 1)]) + "\n")
    (case,) = load_table(path)
    record = run_case(case, backend)
    assert record["verdict"] == "ERROR"
    assert f"{path}:2:5:" in record["reason"] and "integer" in record["reason"]
