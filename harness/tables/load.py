"""A table's rows as Cases: the one loader every shell and the row judge share (`reader.py` knows cells and
diagnostics; this turns a read table into the cases of its operator, SKIP cases saying why where none applies)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.model import operators as ops
from harness.model.case import Case
from harness.tables import header
from harness.tables.keywords import matches
from harness.tables.reader import CellReader, Table, base_fields, read_table


def load_table(path: str | Path) -> list[Case]:
    """Every row of one table as a Case of the operator its file name or header names (harness.tables.header);
    `harness run` checks the header first (harness.tables.preflight), this reads any table."""
    table = read_table(str(path))
    return table_cases(table, header.resolve(table)[0])


def table_cases(table: Table, op: str | None) -> list[Case]:
    """Every row of a read table as a Case of `op`; rows of an operator this harness lacks, or of none that could
    be told, become SKIP cases that say so."""
    spec = ops.get(op)
    cases = []
    for row in table.rows:
        diags: list = []
        reader = CellReader(row, diags)
        base = base_fields(reader)
        case = Case(table=table.path, line=row.line, name=base.case_name, op=op, description=base.description,
                    expected_status=base.expect_result, seed=base.random_seed,
                    thresholds=(base.mere_threshold, base.mare_multiplier))
        if op is None:
            case.skip = "no operator: the file is not named <op>_test.csv and its header tells none (harness lint)"
        elif spec is None:
            case.skip = f"operator {op} is not implemented by this harness"
        else:
            case.args = spec.parse(reader, base.description)
            case.params = _plain(case.args)
        case.errors = [str(d) for d in diags if d.severity == "error"]
        case.warnings = [str(d) for d in diags if d.severity == "warning"]
        cases.append(case)
    for d in table.diagnostics:  # table-level errors (e.g. a duplicate case name) belong to the row they name
        if d.severity == "error":
            for case in cases:
                if case.line == d.line:
                    case.errors.append(str(d))
    return cases


def _plain(args: Any) -> dict[str, Any]:
    """JSON-friendly params: complex scalars as [re, im]."""
    out = {}
    for key, value in vars(args).items():
        out[key] = [value.real, value.imag] if isinstance(value, complex) else value
    return out


def load_cases(paths: list[str | Path], select: str | None = None) -> list[Case]:
    """All cases of the given tables, optionally filtered by a pytest-style keyword expression over case names."""
    cases = [c for p in paths for c in load_table(p)]
    return [c for c in cases if matches(select, c.name)] if select else cases
