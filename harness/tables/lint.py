"""Lint a case table: every place where the C++ frame would reject a cell or silently read it differently than its
author probably meant, with `file:line:column` positions.

The header is checked against the table's operator (harness.tables.header). The cells of an operator this harness
implements are read by the operator's own reader, the one `harness run` uses, so `harness lint` and `harness run`
can never disagree about what a cell means; the cells of any other table by the CellReader rules chosen per column
by its name (the ops-blas naming conventions).
"""
from __future__ import annotations

import re

from harness.model import abi
from harness.model import operators as ops
from harness.tables import header
from harness.tables.cases import (DIAG, NULL_WORDS, SIDE, TRANS, UPLO, WARNING, CellReader, Diagnostic, Table,
                                  base_fields, read_table, seed_of)
from harness.tables.fill import stof_prefix

_INT_COLUMN = re.compile(r"(m|n|k|M|N|K|nrhs|kl|ku|ld[a-z]*|inc[a-z]*|batch_?[cC]ount|batch_size|group_?[cC]ount"
                         r"|group_size)")
_INT64_COLUMN = re.compile(r"stride\w*")
_TRANS_COLUMN = re.compile(r"trans[ABab]?")
_ENUM_COLUMNS = {"side": (SIDE, abi.SIDE_LEFT), "uplo": (UPLO, abi.INVALID_ENUM_VALUE), "diag": (DIAG, abi.NON_UNIT)}
#: Columns named after the array itself hold a fill string in most ops, but a plain scalar in a few (srotg a, b).
_ARRAY_NAMED = {"a", "b", "c", "x", "y", "A", "B", "C", "ap", "aPacked"}
_SCALARS = {"alpha": complex(1, 0), "beta": complex(0, 0)}


def _is_plain_number(text: str) -> bool:
    try:
        return stof_prefix(text)[1] == len(text)
    except ValueError:
        return False


def _check_cell(reader: CellReader, col: str, header: set[str]) -> None:
    """Read one cell with the rule its column name implies (a no-op for columns without a rule)."""
    text = reader.cell(col)
    if col == "expect_result":
        reader.status(col)
    elif col in ("mere_threshold", "mare_multiplier"):
        reader.double(col, 0.0)
    elif col == "random_seed":
        seed_of(reader)
    elif col.endswith("_fill") or (col in _ARRAY_NAMED and text not in NULL_WORDS and not _is_plain_number(text)):
        reader.fill(col, "")
    elif col in _ENUM_COLUMNS:
        reader.enum(col, *_ENUM_COLUMNS[col], col)
    elif _TRANS_COLUMN.fullmatch(col):
        reader.enum(col, TRANS, abi.OP_N, col)
    elif _INT_COLUMN.fullmatch(col):
        reader.int(col, 0)
    elif _INT64_COLUMN.fullmatch(col):
        reader.int64(col, 0)
    elif col.endswith("_null"):
        reader.flag(col)
    elif col in _SCALARS and text not in NULL_WORDS:
        if ";" in text:
            reader.complex(col, _SCALARS[col])
        else:
            reader.float(col, 1.0)
    elif col.endswith("_real") and col[:-5] + "_imag" in header:
        reader.complex_pair(col, col[:-5] + "_imag", complex(0, 0))
    elif col.endswith("_imag") and col[:-5] + "_real" in header:
        pass  # read together with its _real column
    elif col.endswith(("_real", "_imag")) and text not in NULL_WORDS:
        reader.float(col, 0.0)


def lint_rows(table: Table, operator: str | None = None) -> list[Diagnostic]:
    """Diagnostics of an already-read table, in file order: its header for its operator (`operator`, else the one
    harness.tables.header finds), reading problems and every cell."""
    op, found = header.resolve(table, operator)
    return sorted(found + lint_cells(table, op), key=lambda d: (d.line, d.column))


def lint_cells(table: Table, op: str | None) -> list[Diagnostic]:
    """The table's reading problems and every row's cells as `op` reads them (the generic rules for an operator
    this harness does not implement), with the output overlaps and frame readings of its rows."""
    diags = list(table.diagnostics)
    spec = ops.get(op)
    names = set(table.header)
    for row in table.rows:
        reader = CellReader(row, diags)
        if spec is None:
            for col in row.cells:
                _check_cell(reader, col, names)
            continue
        base = base_fields(reader)
        args = spec.parse(reader, base.description)
        if base.expect_result == abi.Status.SUCCESS and (overlap := spec.output_overlap(args)):
            # strideC under C's span, or 0 with batchCount > 1: the result depends on the order batches run in
            diags.append(Diagnostic(table.path, row.line, row.columns.get("strideC", 1), WARNING,
                                    f"output batches overlap: {overlap}; `harness run` refuses this row (ERROR)"))
    return diags + frame_readings(table, spec)


def frame_readings(table: Table, spec) -> list[Diagnostic]:
    """Cells the operator's ops-blas frame reads otherwise than their literal value (the package's optional
    `frame_notes`, e.g. csymm's ld cells <= 0, which its frame runs as compact): a warning on each, since the table
    means one thing to the frame and another to a reader who takes the cell at its word."""
    notes = getattr(spec, "frame_notes", None)
    if notes is None:
        return []
    return [Diagnostic(table.path, row.line, row.columns.get(col, 1), WARNING, message)
            for row in table.rows for col, message in notes(CellReader(row, []))]


def unimplemented(table: Table, op: str | None) -> Diagnostic | None:
    """A warning for a table of an operator this harness does not implement: its cells were read with the C++
    frame's generic rules only (no column or operator check), and `harness run` would skip every row, so a clean
    lint must not read as "this table is fine to run". None for an implemented operator, or none at all (the
    header's error says why)."""
    if op is None or ops.get(op) is not None:
        return None
    return Diagnostic(table.path, table.header_line, 1, WARNING,
                      f"operator {op!r}: this harness does not implement it (it implements {', '.join(ops.names())}); "
                      "only the C++ frame's generic cell rules were checked, and `harness run` skips every row")


def lint_table(path: str, operator: str | None = None) -> list[Diagnostic]:
    """Every diagnostic for one table file, in file order. A missing file raises OSError."""
    return lint_rows(read_table(path), operator)
