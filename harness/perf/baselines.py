"""Performance baselines that live beside the case tables (`cases/baselines/`), never inside them.

Two kinds, reported separately because they disagree by design (task package vs task book):
  `<op>_taskbook.csv`      absolute limits from the task book: key params, `limit_us`, hardware, source, method;
                           a row passes if its measured mean is at or under the limit.
  `<op>_gpu_baseline.csv`  per perf row GPU times: `case_name`, key params, `gpu_ms`, hardware, driver, cuda,
                           cublas, method, date; a row passes if gpu_us / npu_us >= 0.4.
Both may carry a `scope` column: the timing scope (harness.model.settings.SCOPES) their figures were measured in; a
verdict is judged on the row's figure in that scope (harness.perf.verdict). A table without the column is in
DEFAULT_SCOPE. A case with no matching baseline is NO_REF (harness.perf.verdict), with a reason naming where its baselines
were looked for.

Where they are found: the limits belong to the operator and the hardware, not to a folder, so a table's baselines
are those of `--baselines DIR` (each given directory, in order), then of `<table dir>/baselines/`, then of the
project's own `cases/baselines/`, which serve every table of their operator wherever it lives; where two
directories hold the same baseline (the same GPU case name, the same task-book key), the earlier one is used.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from harness.generate import cells
from harness.model.settings import DEFAULT_SCOPE, SCOPES

GPU_RATIO_RULE = 0.4
TASKBOOK_FIXED = ("limit_us", "hardware", "source", "method")
GPU_FIXED = ("gpu_ms", "hardware", "driver", "cuda", "cublas", "method", "date")
#: Optional in both kinds: the timing scope of the figures (DEFAULT_SCOPE when the table has no such column).
SCOPE_COLUMN = "scope"
#: Key columns holding enums; compared by integer value so `ACLBLAS_SIDE_LEFT` == 141.
ENUM_COLUMNS = {"side": cells.SIDES, "uplo": cells.UPLOS, "transA": cells.TRANS, "transB": cells.TRANS}


@dataclass(frozen=True)
class Baseline:
    kind: str                      # "taskbook" | "gpu" | "none" (a lookup that matched nothing: `unmatched`)
    op: str
    case_name: str | None          # gpu rows match by name; task-book rows by key params
    key: dict[str, str] = field(hash=False)
    value_us: float | None         # task-book limit, or the GPU time (None for kind "none")
    hardware: str
    source: str
    method: str
    ratio_rule: float | None       # gpu: pass if value_us / measured_us >= ratio_rule
    scope: str = DEFAULT_SCOPE     # the timing scope value_us was measured in; judged on the row's figure in it


def _records(path: Path) -> tuple[int, list[str], list[tuple[int, list[str]]]]:
    """(header line, header, [(line, cells)]): `#` comments and blank lines skipped, cells trimmed."""
    header_line, header, rows = 0, [], []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [c.strip() for c in next(csv.reader([line]))]
        if not header:
            header_line, header = number, fields
        else:
            rows.append((number, fields))
    return header_line, header, rows


def _number(path: Path, line: int, header: list[str], cells_: list[str], col: str) -> float:
    column = header.index(col) + 1
    try:
        value = float(cells_[column - 1])
    except ValueError:
        raise ValueError(f"{path}:{line}:{column}: {col} {cells_[column - 1]!r} is not a number") from None
    if not value > 0:
        raise ValueError(f"{path}:{line}:{column}: {col} must be > 0, got {value!r}")
    return value


def _scope(path: Path, line: int, header: list[str], cells_: list[str]) -> str:
    if SCOPE_COLUMN not in header:
        return DEFAULT_SCOPE
    column = header.index(SCOPE_COLUMN) + 1
    scope = cells_[column - 1]
    if scope not in SCOPES:
        raise ValueError(f"{path}:{line}:{column}: scope {scope!r} is not one of {', '.join(SCOPES)}")
    return scope


def _load(path: Path, op: str, kind: str) -> list[Baseline]:
    fixed = (*(TASKBOOK_FIXED if kind == "taskbook" else ("case_name", *GPU_FIXED)), SCOPE_COLUMN)
    header_line, header, rows = _records(path)
    missing = [c for c in fixed if c not in header and c != SCOPE_COLUMN]
    if missing:
        raise ValueError(f"{path}:{header_line or 1}:1: missing column(s) {', '.join(missing)}")
    key_cols = [c for c in header if c not in fixed]
    if not key_cols and kind == "taskbook":
        raise ValueError(f"{path}:{header_line}:1: no key parameter columns")
    out = []
    for line, fields in rows:
        if len(fields) != len(header):
            raise ValueError(f"{path}:{line}:1: {len(fields)} cells, the header has {len(header)}")
        cell = dict(zip(header, fields))
        key = {c: cell[c] for c in key_cols}
        scope = _scope(path, line, header, fields)
        if kind == "taskbook":
            out.append(Baseline("taskbook", op, None, key, _number(path, line, header, fields, "limit_us"),
                                cell["hardware"], cell["source"], cell["method"], None, scope))
        else:
            if not cell["case_name"]:
                raise ValueError(f"{path}:{line}:{header.index('case_name') + 1}: empty case_name")
            versions = ", ".join(f"{c} {cell[c]}" for c in ("driver", "cuda", "cublas", "date") if cell[c])
            out.append(Baseline("gpu", op, cell["case_name"], key,
                                _number(path, line, header, fields, "gpu_ms") * 1e3, cell["hardware"],
                                f"{path.name} ({versions})" if versions else path.name, cell["method"],
                                GPU_RATIO_RULE, scope))
    return out


def load_baselines(directory: Path, op: str) -> list[Baseline]:
    """Every baseline of an operator found in `directory` (missing files give none)."""
    directory = Path(directory)
    out: list[Baseline] = []
    for kind, name in (("taskbook", f"{op}_taskbook.csv"), ("gpu", f"{op}_gpu_baseline.csv")):
        if (directory / name).is_file():
            out += _load(directory / name, op, kind)
    return out


#: The project's own baseline tables (of the checkout this harness runs from).
PROJECT_DIR = Path(__file__).resolve().parents[2] / "cases" / "baselines"


def search_dirs(table: str | Path, extra: tuple[str, ...] = ()) -> list[Path]:
    """Where a table's baselines are looked for, in order of precedence, each directory once: the `--baselines`
    directories, the table's own `baselines/`, the project's `cases/baselines/`."""
    out: list[Path] = []
    for d in (*map(Path, extra), Path(table).parent / "baselines", PROJECT_DIR):
        if d.resolve() not in [o.resolve() for o in out]:
            out.append(d)
    return out


def _identity(b: Baseline) -> tuple:
    """What two baselines share when they are the same one: a GPU case name, or a task-book key compared as
    `match` compares cells (`LEFT` is `ACLBLAS_SIDE_LEFT`, `256` is `256.0`)."""
    if b.kind == "gpu":
        return b.kind, b.case_name
    return b.kind, tuple(sorted((col, _canonical(col, cell)) for col, cell in b.key.items()))


def _canonical(column: str, cell: str) -> object:
    if column in ENUM_COLUMNS:
        return cells.enum_value(cell, ENUM_COLUMNS[column], -1)
    try:
        return float(cell)
    except ValueError:
        return cell


def for_operator(op: str, dirs: list[Path]) -> list[Baseline]:
    """Every baseline of `op` in `dirs`; a baseline an earlier directory already holds is left out."""
    out: list[Baseline] = []
    seen: set[tuple] = set()
    for d in dirs:
        for b in load_baselines(d, op):
            if _identity(b) not in seen:
                seen.add(_identity(b))
                out.append(b)
    return out


def unmatched(op: str, dirs: list[Path]) -> Baseline:
    """What a perf row that no baseline matches is judged against: nothing, and the reason (its verdict is NO_REF,
    the reason in its record and report) naming the tables that were searched, or that there were none."""
    files = [str(d / f"{op}_{kind}.csv") for d in dirs for kind in ("taskbook", "gpu_baseline")
             if (d / f"{op}_{kind}.csv").is_file()]
    where = ", ".join(map(str, dirs))
    reason = (f"no row of {', '.join(files)} matches it" if files else
              f"no {op}_taskbook.csv or {op}_gpu_baseline.csv in {where}") + " (--baselines DIR adds a directory)"
    return Baseline("none", op, None, {}, None, "", reason, "", None)


def _same(column: str, cell: str, value: object) -> bool:
    if column in ENUM_COLUMNS:
        names = ENUM_COLUMNS[column]
        number = value if isinstance(value, int) else cells.enum_value(str(value), names, -1)
        return cells.enum_value(cell, names, -1) == number
    try:
        return float(cell) == float(value)
    except (TypeError, ValueError):
        return cell == str(value)


def match(baselines: list[Baseline], case_name: str, params: dict[str, object]) -> list[Baseline]:
    """The baselines that apply to one case: GPU rows by case name, task-book rows when every key param equals the
    case's (a key the case does not have never matches)."""
    out = []
    for b in baselines:
        if b.kind == "gpu":
            if b.case_name == case_name:
                out.append(b)
        elif all(col in params and _same(col, cell, params[col]) for col, cell in b.key.items()):
            out.append(b)
    return out


def write_gpu_baseline(path: Path | str, rows: list[dict]) -> None:
    """Write a GPU-baseline table: `case_name`, the key params (in the first row's order; enum values as their
    `ACLBLAS_*` names), then the fixed columns. Every row must carry the same columns."""
    if not rows:
        raise ValueError("no rows to write")
    keys = [c for c in rows[0] if c != "case_name" and c not in GPU_FIXED]
    header = ["case_name", *keys, *GPU_FIXED]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for i, row in enumerate(rows):
        if set(row) != set(header):
            raise ValueError(f"row {i} ({row.get('case_name')}): columns {sorted(set(row) ^ set(header))} differ "
                             f"from the first row's")
        out = []
        for col in header:
            value = row[col]
            if col in ENUM_COLUMNS and isinstance(value, int):
                value = cells.enum_cell(value, ENUM_COLUMNS[col])
            out.append("" if value is None else str(value))
        writer.writerow(out)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(buf.getvalue(), encoding="utf-8")
