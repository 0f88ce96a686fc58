"""harness.tables.reader: tables read with the C++ frame's csv_loader.h semantics, typed cells with the C++ defaults."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from harness.model import abi
from harness.tables.reader import (DIAG, SIDE, STATUS, TRANS, UPLO, CellReader, Diagnostic, Row, TableError, base_fields,
                           op_for_table, read_table, seed_of, split_fields)

SHARED = Path("/work/shared/data/ops-blas-csv")


def write(tmp_path: Path, text: str | bytes, name: str = "demo_test.csv") -> str:
    path = tmp_path / name
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return str(path)


def reader_for(cells: dict[str, str]) -> tuple[CellReader, list[Diagnostic]]:
    diags: list[Diagnostic] = []
    columns = {name: i + 1 for i, name in enumerate(cells)}
    row = Row("t.csv", 7, {k: v for k, v in cells.items() if v}, columns)
    return CellReader(row, diags), diags


def messages(diags: list[Diagnostic], severity: str | None = None) -> list[str]:
    return [d.message for d in diags if severity is None or d.severity == severity]


# --- reading ---------------------------------------------------------------------------------------------------

def test_quotes_toggle_and_are_dropped():
    assert split_fields('a,"b,c", d ,"e""f"') == (["a", "b,c", "d", "ef"], False)
    assert split_fields('a,"b,c') == (["a", "b,c"], True)


def test_header_comments_blank_lines_and_crlf(tmp_path):
    text = "# licence\r\n\r\n  # more\r\ncase_name,m,a_fill\r\n# disabled,1,X\r\nc1, 4 ,\"RANDOM_1\"\r\n\r\nc2,5,\r\n"
    table = read_table(write(tmp_path, text))
    assert table.header == ["case_name", "m", "a_fill"] and table.header_line == 4
    assert [(r.line, r.cells) for r in table.rows] == [
        (6, {"case_name": "c1", "m": "4", "a_fill": "RANDOM_1"}), (8, {"case_name": "c2", "m": "5"})]
    assert table.rows[1].columns == {"case_name": 1, "m": 2, "a_fill": 3}
    assert table.diagnostics == []
    assert len(table.sha256) == 64


def test_short_rows_kept_as_errors_and_extra_fields_warned(tmp_path):
    path = write(tmp_path, "case_name,m,n\nok,1,2\nshort,1\nlong,1,2,3\ntrailing,1,2,\n")
    table = read_table(path)
    assert [r.cells["case_name"] for r in table.rows] == ["ok", "short", "long", "trailing"]
    assert [str(d) for d in table.diagnostics] == [
        f"{path}:3:3: error: row has 2 fields, the header has 3 (the C++ frame drops this row silently)",
        f"{path}:4:4: warning: field 4 is beyond the header's 3 columns; the C++ frame ignores it",
    ]


def test_bom_is_stripped_but_warned(tmp_path):
    table = read_table(write(tmp_path, b"\xef\xbb\xbfcase_name,m\nc1,3\n"))
    assert table.header[0] == "case_name" and table.rows[0].cells["case_name"] == "c1"
    assert len(table.diagnostics) == 1 and "byte order mark" in table.diagnostics[0].message
    assert (table.diagnostics[0].line, table.diagnostics[0].severity) == (1, "warning")


def test_duplicate_and_empty_case_names_are_errors(tmp_path):
    path = write(tmp_path, "case_name,m\nc1,1\nc2,1\nc1,2\n,3\nbad-name,4\n")
    diags = read_table(path).diagnostics
    assert [(d.line, d.column, d.severity) for d in diags] == [(4, 1, "error"), (5, 1, "error"), (6, 1, "warning")]
    assert "duplicate case_name 'c1' (first on line 2)" in diags[0].message


@pytest.mark.parametrize("content,reason", [
    ("", "1:1: error: empty file"), ("  \n\n", "1:1: error: empty file"),
    ("# only comments\n\n", "1:1: error: comments only: no header line"),
    ("# note\ncase_name,m,n\n# no rows\n", "2:1: error: header only: no data rows"),
    (b"case_name,m\nc1,1\n\x00\x01\x02", "3:1: error: binary file (NUL byte)"),
    ("case_name,m\rc1,1\rc2,2\r", "1:1: error: lines end in CR only"),
    ('"case_name,m,n\nc1,1,2\n', "1:1: error: unbalanced quote in the header"),
])
def test_files_that_cannot_be_tables_name_the_file_line_and_reason(tmp_path, content, reason):
    path = write(tmp_path, content)
    with pytest.raises(TableError) as err:
        read_table(path)
    assert str(err.value).startswith(f"{path}:{reason}")


def test_fifo_is_refused_without_blocking(tmp_path):
    path = tmp_path / "fifo_test.csv"
    os.mkfifo(path)
    with pytest.raises(OSError, match="not a regular file"):
        read_table(str(path))


def test_unbalanced_quote_in_a_row_makes_it_short_and_an_error(tmp_path):
    table = read_table(write(tmp_path, 'case_name,m,n\nc1,"1,2\nc2,1,2\n', "q_test.csv"))
    assert [r.cells["case_name"] for r in table.rows] == ["c1", "c2"]
    assert any("unbalanced quote" in m for m in messages(table.diagnostics))
    assert [(d.line, d.severity) for d in table.diagnostics if d.severity == "error"] == [(2, "error")]


def test_duplicate_header_column_keeps_last_non_empty(tmp_path):
    table = read_table(write(tmp_path, "case_name,m,m\nc1,1,2\nc2,3,\n"))
    assert [r.cells["m"] for r in table.rows] == ["2", "3"]
    assert [r.columns["m"] for r in table.rows] == [3, 2]
    assert "repeats column 2" in table.diagnostics[0].message


def test_missing_file_raises(tmp_path):
    with pytest.raises(OSError):
        read_table(str(tmp_path / "absent_test.csv"))


def test_op_for_table(tmp_path):
    for name, op in [("csymm_test.csv", "csymm"), ("sgemm_strided_batched_test.csv", "sgemm_strided_batched"),
                     ("ssymm_test.csv", "ssymm"), ("cgemm_batched_test.csv", "cgemm_batched"),
                     ("notes.csv", None), ("_test.csv", None)]:
        assert op_for_table(read_table(write(tmp_path, "case_name\nc1\n", name))) == op


@pytest.mark.parametrize("name,rows,header_len", [("cgemm_batched_test.csv", 165, 22),
                                                  ("gemv_strided_batched_test.csv", 115, 22),
                                                  ("sgemm_batched_test.csv", 156, 22), ("ssymm_test.csv", 62, 14)])
def test_shared_tables_load(tmp_path, name, rows, header_len):
    if not (SHARED / name).exists():
        pytest.skip(f"{SHARED / name} is not on this machine")
    copy = tmp_path / name
    shutil.copy(SHARED / name, copy)
    table = read_table(str(copy))
    assert (len(table.rows), len(table.header), table.diagnostics) == (rows, header_len, [])
    diags: list[Diagnostic] = []
    bases = [base_fields(CellReader(r, diags)) for r in table.rows]
    assert diags == [] and len({b.case_name for b in bases}) == rows
    assert all(b.expect_result in STATUS.values() for b in bases)


# --- typed cells -----------------------------------------------------------------------------------------------

def test_empty_cell_means_default():
    r, diags = reader_for({"m": "", "alpha": "", "side": "", "a_fill": "", "expect_result": ""})
    assert r.int("m", 5) == 5 and r.float("alpha", 1.5) == 1.5 and r.enum("side", SIDE, 141, "side") == 141
    assert r.fill("a_fill", "RANDOM") == "RANDOM" and r.status() == 0 and r.int("absent", 9) == 9
    assert diags == []


def test_int_quirks_and_errors():
    r, diags = reader_for({"a": "0xFF", "b": "1.5", "c": "abc", "d": "-7", "e": "99999999999", "f": " +12"})
    assert [r.int("a", 3), r.int("b", 3), r.int("c", 3), r.int("d", 3), r.int("e", 3), r.int("f", 3)] == \
        [0, 1, 3, -7, 3, 12]
    assert r.int64("e", 3) == 99999999999
    assert [(d.column, d.severity) for d in diags] == [(1, "warning"), (2, "warning"), (3, "error"), (5, "error")]
    assert messages(diags)[2] == "c 'abc': expected an integer"


def test_exact_diagnostic_text_for_malformed_cell(tmp_path):
    path = write(tmp_path, "case_name,description,m,n\nc1,d,4,four\n")
    diags: list[Diagnostic] = []
    assert CellReader(read_table(path).rows[0], diags).int("n", 0) == 0
    assert [str(d) for d in diags] == [f"{path}:2:4: error: n 'four': expected an integer"]


def test_floats_and_doubles():
    r, diags = reader_for({"a": "inf", "b": "nan", "c": "1e-3", "d": "0xFF", "e": "x1", "f": "2.5x", "g": "1e39"})
    assert r.float("a", 0) == float("inf") and r.float("b", 0) != r.float("b", 0)
    assert r.float("c", 0) == pytest.approx(1e-3) and r.float("d", 0) == 255.0
    assert r.float("e", 7.0) == 7.0 and r.float("f", 0) == 2.5 and r.float("g", 0) == 0
    assert r.double("g", 0) == 1e39 and r.double("c", 0) == 1e-3
    assert [d.severity for d in diags] == ["error", "warning", "error"]


def test_enums_names_ints_and_fallbacks():
    r, diags = reader_for({"side": "RIGHT", "side2": "ACLBLAS_SIDE_LEFT", "side3": "INVALID", "side4": "999",
                           "uplo": "INVALID", "uplo2": "0xFF", "uplo3": "lower", "trans": "H", "trans2": "INVALID",
                           "trans3": "X", "diag": "UNIT", "diag2": "INVALID"})
    assert r.enum("side", SIDE, abi.SIDE_LEFT, "side") == abi.SIDE_RIGHT
    assert r.enum("side2", SIDE, abi.SIDE_LEFT, "side") == abi.SIDE_LEFT
    assert r.enum("side3", SIDE, abi.SIDE_LEFT, "side") == abi.SIDE_LEFT  # no INVALID entry for side
    assert r.enum("side4", SIDE, abi.SIDE_LEFT, "side") == 999
    assert r.enum("uplo", UPLO, 0xFF, "uplo") == 0xFF
    assert r.enum("uplo2", UPLO, 0xFF, "uplo") == 0  # std::stoi("0xFF") stops at 'x'
    assert r.enum("uplo3", UPLO, 0xFF, "uplo") == 0xFF  # case-sensitive
    assert r.enum("trans", TRANS, abi.OP_N, "trans") == abi.OP_C
    assert r.enum("trans2", TRANS, abi.OP_N, "trans") == 0xFF
    assert r.enum("trans3", TRANS, abi.OP_N, "trans") == abi.OP_N
    assert r.enum("diag", DIAG, abi.NON_UNIT, "diag") == abi.UNIT
    assert r.enum("diag2", DIAG, abi.NON_UNIT, "diag") == 0xFF
    assert messages(diags) == [
        "unknown side 'INVALID': the C++ frame reads it as LEFT (141)",
        "uplo '0xFF': the C++ frame reads it as 0 (std::stoi stops at 'xFF')",
        "unknown uplo 'lower': the C++ frame reads it as INVALID (255)",
        "unknown trans 'X': the C++ frame reads it as N (111)",
    ]
    assert all(d.severity == "warning" for d in diags)


def test_status_names_and_unknowns():
    r, diags = reader_for({"expect_result": "ACLBLAS_STATUS_INVALID_ENUM", "s2": "INVALID_VALUE", "s3": "3",
                           "s4": "ACLBLAS_STATUS_BOGUS"})
    assert r.status() == abi.Status.INVALID_ENUM and r.status("s2") == abi.Status.INVALID_VALUE
    assert r.status("s3") == 3 and r.status("s4") == abi.Status.INTERNAL_ERROR and r.status("none") == 0
    assert messages(diags) == ["unknown status 'ACLBLAS_STATUS_BOGUS': the C++ frame reads it as INTERNAL_ERROR (6)"]


def test_null_words_and_flags():
    r, diags = reader_for({"alpha": "null", "beta": "nullptr", "x": "NULLPTR", "y": "Null",
                           "alpha_null": "true", "beta_null": "TRUE", "c_null": "false"})
    assert [r.is_null(c) for c in ("alpha", "beta", "x", "y", "none")] == [True, True, True, False, False]
    assert [r.flag(c) for c in ("alpha_null", "beta_null", "c_null", "none")] == [True, False, False, False]
    assert messages(diags) == ["beta_null 'TRUE': only lowercase 'true' is true; the C++ frame reads this as false"]


def test_complex_cells():
    r, diags = reader_for({"alpha": "1.5;0.3", "beta": "2", "g": "abc;1", "h": "1;zz", "i": "0.0;2.0"})
    assert r.complex("alpha", 0j) == complex(1.5, float(np.float32(0.3)))
    assert r.complex("beta", 0j) == 2 + 0j
    assert r.complex("g", 0j) == 1 + 1j and r.complex("h", 0j) == 1 + 0j  # C++ fallbacks: real 1.0, imag 0.0
    assert r.complex("i", 0j) == 2j and r.complex("none", 1 + 0j) == 1 + 0j
    assert [d.severity for d in diags] == ["warning", "warning"]


def test_complex_pair_and_null_pointer():
    r, diags = reader_for({"alpha_real": "null", "alpha_imag": "", "beta_real": "0.5", "beta_imag": "-1",
                           "g_real": "1", "g_imag": "null"})
    assert r.complex_pair("alpha_real", "alpha_imag", 1 + 0j) is None
    assert r.complex_pair("beta_real", "beta_imag", 0j) == 0.5 - 1j
    assert r.complex_pair("x_real", "x_imag", 1 + 0j) == 1 + 0j
    assert r.complex_pair("g_real", "g_imag", 0j) == 0j and diags[0].severity == "error"


def test_fill_cells():
    r, diags = reader_for({"a_fill": "RANDOM_NORM_1", "b_fill": "RANDOM:-10:10", "c_fill": "NORMAL_N2_0.5",
                           "x": "RANDOM_abc", "y": "RANDOM_BANDED_2_3_N5_5"})
    assert r.fill("a_fill", "D") == "RANDOM_NORM_1" and r.fill("b_fill", "D") == "RANDOM:-10:10"
    assert r.fill("c_fill", "D") == "NORMAL_N2_0.5" and r.fill("x", "D") == "D" and r.fill("y", "D").startswith("R")
    assert [d.severity for d in diags] == ["warning", "warning", "error", "warning"]
    assert "index sequence 1,2,3" in diags[0].message and "extension unknown to the C++ frame" in diags[1].message
    assert "FLT_MAX" in diags[3].message


def test_base_fields_and_seed():
    r, diags = reader_for({"case_name": "c1", "description": "handle_null", "expect_result": "SUCCESS",
                           "mere_threshold": "0.00012207031", "mare_multiplier": "10.0", "random_seed": "4294967295"})
    base = base_fields(r)
    assert (base.case_name, base.description, base.expect_result, base.mare_multiplier, base.random_seed) == \
        ("c1", "handle_null", 0, 10.0, 4294967295)
    assert base.mere_threshold == 0.00012207031 and diags == []
    for text, seed, warned in [("", 0, False), ("-1", 0, True), ("4294967296", 0, True), ("12", 12, False)]:
        r, diags = reader_for({"random_seed": text})
        assert seed_of(r) == seed and bool(diags) == warned
