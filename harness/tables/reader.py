"""Case tables read the way the ops-blas C++ frame (`test/frame/csv_loader.h`) reads them.

The same `*_test.csv` must mean the same thing to the upstream gtest binary and to this harness, so the reading
rules are the C++ ones, quirks included: `#` lines skipped anywhere, `"` toggles quoting and is dropped, fields are
trimmed, short rows vanish, an empty cell is a missing column (the parameter default applies), and numbers go
through `std::stoi`/`stof`-style prefix parsing. Where a quirk silently turns a cell into something its author
probably did not mean (`0xFF` -> 0, side `INVALID` -> LEFT, an unknown fill -> 1,2,3...) we follow the C++ and say
so in a warning; where the harness cannot run the row as written, we record an error.
"""
from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.model import abi
from harness.tables.fill import FillError, parse_fill, stod_prefix, stof_prefix

ERROR, WARNING, NOTE = "error", "warning", "note"
_BOM = b"\xef\xbb\xbf"
_TRIM = " \t\r\n"
_GTEST_NAME = re.compile(r"[A-Za-z0-9_]+")
_LEADING_INT = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")
_INT_RANGES = {"int": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1),
               "unsigned long": (1 - 2 ** 64, 2 ** 64 - 1)}  # stoul negates "-N" in unsigned arithmetic

#: Cell words that mean "pass a null pointer" (ssymm/strmm scalar cells, fill strings).
NULL_WORDS = ("null", "nullptr", "NULLPTR")

SIDE = abi.SIDE_NAMES  # no INVALID entry, as in parseSideMode
UPLO = {**abi.UPLO_NAMES, "INVALID": abi.INVALID_ENUM_VALUE}
TRANS = {**abi.TRANS_NAMES, "INVALID": abi.INVALID_ENUM_VALUE}
DIAG = {**abi.DIAG_NAMES, "INVALID": abi.INVALID_ENUM_VALUE}
STATUS = abi.STATUS_NAMES
#: What each C++ enum parser falls back to for text it does not know.
UNKNOWN_DEFAULT = {"side": abi.SIDE_LEFT, "uplo": abi.INVALID_ENUM_VALUE, "trans": abi.OP_N, "diag": abi.NON_UNIT,
                   "status": int(abi.Status.INTERNAL_ERROR)}


@dataclass(frozen=True)
class Diagnostic:
    """One finding about a table, printed compiler-style so editors can jump to it."""
    path: str
    line: int
    column: int
    severity: str
    message: str
    #: the harness reads this otherwise than the ops-blas frame does (a BOM, a fill extension the table does not
    #: declare): `harness run` refuses the table unless --lenient
    misread: bool = False

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.severity}: {self.message}"


@dataclass
class Row:
    """A data row as the C++ `csv_map`: only non-empty cells; `columns` maps a header name to its column number."""
    path: str
    line: int
    cells: dict[str, str]
    columns: dict[str, int]
    #: harness fill extensions the table declares it uses (`# harness-extensions: NORMAL`): not warned per cell
    extensions: frozenset[str] = frozenset()


@dataclass
class Table:
    path: str
    header: list[str]
    rows: list[Row]
    diagnostics: list[Diagnostic]
    sha256: str
    header_line: int = 1
    extensions: frozenset[str] = frozenset()


EXTENSIONS_KEY = "harness-extensions"


class TableError(Exception):
    """A file that cannot be a case table at all (empty, binary, no data rows...); the message is the one line
    `harness` prints, `file:line:column: error: reason` (exit 3)."""


#: path -> sha256 of the bytes this process last parsed from it: what a run's provenance records (a table
#: rewritten or deleted after it was read must not be recorded in its new form, nor fail the report).
PARSED_SHA256: dict[str, str] = {}


def read_bytes(path: str) -> bytes:
    """A table file's bytes; opened without blocking so a FIFO or device is refused instead of waited on."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a case table must be one)", path)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _unusable(path: str, raw: bytes, text: str) -> Diagnostic | None:
    """Why a file cannot be a table at all, before any line is read; None when it may be one."""
    def error(line: int, message: str) -> Diagnostic:
        return Diagnostic(path, line, 1, ERROR, message)

    if b"\0" in raw:
        return error(raw.count(b"\n", 0, raw.index(b"\0")) + 1, "binary file (NUL byte): not a CSV case table")
    if not text.strip(_TRIM):
        return error(1, "empty file: no header, no rows")
    if "\n" not in text and "\r" in text.strip(_TRIM):
        return error(1, "lines end in CR only: the C++ frame's getline reads the whole file as one line "
                        "(save it with LF or CRLF line ends)")
    return None


def split_fields(line: str) -> tuple[list[str], bool]:
    """`CsvSplitLine`: split on commas outside quotes, drop the quotes, trim each field; also whether a quote was
    left open (the C++ then swallows every later comma into one field)."""
    fields, current, quoted = [], [], False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            fields.append("".join(current).strip(_TRIM))
            current = []
        else:
            current.append(ch)
    fields.append("".join(current).strip(_TRIM))
    return fields, quoted


def _is_skipped(line: str) -> bool:
    stripped = line.lstrip(_TRIM)
    return not stripped or stripped[0] == "#"


def _decode(raw: bytes, path: str, diags: list[Diagnostic]) -> str:
    if raw.startswith(_BOM):
        diags.append(Diagnostic(path, 1, 1, WARNING, "UTF-8 byte order mark: the C++ frame reads it as part of the "
                                "first column name, so it never finds that column (save the file without BOM)",
                                misread=True))
        raw = raw[len(_BOM):]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        diags.append(Diagnostic(path, line, 1, WARNING, "bytes that are not UTF-8; read with replacement characters"))
        return raw.decode("utf-8", errors="replace")


def read_table(path: str) -> Table:
    """Load a case table with the C++ frame's semantics; problems with cells and rows become diagnostics. A file
    that cannot be a table at all (empty, binary, comments only, header only, CR line ends, an unreadable header)
    raises TableError naming it; a missing or non-regular file raises OSError."""
    raw = read_bytes(path)
    diags: list[Diagnostic] = []
    text = _decode(raw, path, diags)
    if (problem := _unusable(path, raw, text)) is not None:
        raise TableError(str(problem))
    lines = text.split("\n")  # std::getline splits on '\n' only; '\r' is trimmed per field
    table = Table(path, [], [], diags, hashlib.sha256(raw).hexdigest())
    PARSED_SHA256[str(path)] = table.sha256
    numbered = iter(enumerate(lines, start=1))
    for number, line in numbered:
        table.extensions |= _declared_extensions(line)
        if not _is_skipped(line):
            table.header, open_quote = split_fields(line)
            table.header_line = number
            _check_header(table, number, open_quote)
            break
    else:
        raise TableError(str(Diagnostic(path, 1, 1, ERROR, "comments only: no header line (the C++ frame throws "
                                                           "'CSV file has no header')")))
    first_line_of: dict[str, int] = {}
    for number, line in numbered:
        if _is_skipped(line):
            continue
        row = _make_row(table, number, line)
        _check_case_name(table, row, first_line_of)
        table.rows.append(row)
    if not table.rows:
        raise TableError(str(Diagnostic(path, table.header_line, 1, ERROR, "header only: no data rows")))
    return table


def _declared_extensions(line: str) -> frozenset[str]:
    """A comment line before the header such as `# harness-extensions: NORMAL` declares, once for the whole table,
    that it uses fills the C++ frame does not know (the C++ skips the comment); lint then stops warning per cell."""
    text = line.strip(_TRIM)
    if not text.startswith("#") or ":" not in text:
        return frozenset()
    key, _, value = text[1:].partition(":")
    if key.strip() != EXTENSIONS_KEY:
        return frozenset()
    return frozenset(v.strip() for v in value.split(",") if v.strip())


def _check_header(table: Table, line: int, open_quote: bool) -> None:
    seen: dict[str, int] = {}
    for col, name in enumerate(table.header, start=1):
        if not name:
            table.diagnostics.append(Diagnostic(table.path, line, col, WARNING,
                                                "empty column name in the header; every row needs a field for it"))
        elif name in seen:
            table.diagnostics.append(Diagnostic(table.path, line, col, WARNING, f"column {name!r} repeats column "
                                                f"{seen[name]}; the C++ frame keeps the last non-empty cell"))
        seen.setdefault(name, col)
    if open_quote:
        raise TableError(str(Diagnostic(table.path, line, 1, ERROR, "unbalanced quote in the header: every later "
                                        "comma is part of one column name, so no column can be found")))


def _make_row(table: Table, line: int, text: str) -> Row:
    fields, open_quote = split_fields(text)
    width = len(table.header)
    if open_quote:
        table.diagnostics.append(Diagnostic(table.path, line, 1, WARNING,
                                            "unbalanced quote: every later comma on this line is part of one field"))
    if len(fields) < width:  # the C++ frame drops it silently; here it stays, as an ERROR row
        table.diagnostics.append(Diagnostic(table.path, line, len(fields) + 1, ERROR, f"row has {len(fields)} fields, "
                                            f"the header has {width} (the C++ frame drops this row silently)"))
        fields += [""] * (width - len(fields))
    extra = [col for col in range(width + 1, len(fields) + 1) if fields[col - 1]]
    if extra:
        table.diagnostics.append(Diagnostic(table.path, line, extra[0], WARNING, f"field {extra[0]} is beyond the "
                                            f"header's {width} columns; the C++ frame ignores it"))
    cells: dict[str, str] = {}
    columns: dict[str, int] = {}
    for col, name in enumerate(table.header, start=1):
        if fields[col - 1]:
            cells[name], columns[name] = fields[col - 1], col
        elif name not in cells:
            columns[name] = col
    return Row(table.path, line, cells, columns, table.extensions)


def _check_case_name(table: Table, row: Row, first_line_of: dict[str, int]) -> None:
    name = row.cells.get("case_name", "")
    col = row.columns.get("case_name", 1)
    if not name:
        table.diagnostics.append(Diagnostic(table.path, row.line, col, ERROR, "case_name is empty"))
        return
    if name in first_line_of:
        table.diagnostics.append(Diagnostic(table.path, row.line, col, ERROR,
                                            f"duplicate case_name {name!r} (first on line {first_line_of[name]})"))
        return
    first_line_of[name] = row.line
    if not _GTEST_NAME.fullmatch(name):
        table.diagnostics.append(Diagnostic(table.path, row.line, col, WARNING, f"case_name {name!r} is not a valid "
                                            "gtest parameter name ([A-Za-z0-9_] only); the C++ test binary rejects it"))


def op_for_table(table: Table) -> str | None:
    """The operator a table is for, from its file name: `<op>_test.csv` -> `<op>`."""
    stem = Path(table.path).stem
    return stem[: -len("_test")] if stem.endswith("_test") and len(stem) > len("_test") else None


def _stoi(text: str, kind: str) -> tuple[int, int]:
    """`std::stoi`/`stoll` (base 10): the value and how many characters were read; ValueError where they throw."""
    m = _LEADING_INT.match(text)
    if m is None:
        raise ValueError("expected an integer")
    value = int(m.group(1))
    lo, hi = _INT_RANGES[kind]
    if not lo <= value <= hi:
        raise ValueError(f"integer out of {kind} range")
    return value, m.end()


def _enum_label(names: dict[str, int], value: int) -> str:
    short = sorted((k for k, v in names.items() if v == value), key=len)
    return f"{short[0]} ({value})" if short else str(value)


class CellReader:
    """Typed access to one row's cells with the C++ defaults; every problem is appended to `diagnostics`.

    A cell is absent when it was empty or its column is missing; then the given default applies silently.
    """

    def __init__(self, row: Row, diagnostics: list[Diagnostic]):
        self.row = row
        self.diagnostics = diagnostics

    def _report(self, col: str, severity: str, message: str, misread: bool = False) -> None:
        self.diagnostics.append(Diagnostic(self.row.path, self.row.line, self.row.columns.get(col, 1), severity,
                                           message, misread))

    def cell(self, col: str) -> str | None:
        return self.row.cells.get(col)

    def text(self, col: str, default: str = "") -> str:
        return self.row.cells.get(col, default)

    def _leading(self, col: str, default: Any, parse: Callable[[str], tuple[Any, int]], fmt: str, reader: str,
                 expected: str | None = None) -> Any:
        """A number the C++ frame reads from the start of the cell: `parse` gives the value and how many characters
        it read (ValueError where the C++ throws: an error, `expected` or the exception's text); a tail it stops
        before is a warning."""
        text = self.cell(col)
        if text is None:
            return default
        try:
            value, used = parse(text)
        except ValueError as exc:
            self._report(col, ERROR, f"{col} {text!r}: {expected or exc}")
            return default
        if text[used:].strip(_TRIM):
            self._report(col, WARNING, f"{col} {text!r}: the C++ frame reads it as {value:{fmt}} "
                                       f"({reader} stops at {text[used:]!r})")
        return value

    def _integer(self, col: str, default: int, kind: str) -> int:
        return self._leading(col, default, lambda text: _stoi(text, kind), "", "std::stoi")

    def int(self, col: str, default: int) -> int:
        return self._integer(col, default, "int")

    def int64(self, col: str, default: int) -> int:
        return self._integer(col, default, "int64")

    def uint32(self, col: str, default: int = 0) -> int:
        """`parseUint` (`std::stoul`): negative text wraps past UINT32_MAX, which the C++ replaces by the default."""
        value = self._integer(col, default, "unsigned long")
        if not 0 <= value <= 0xFFFFFFFF:
            self._report(col, WARNING, f"{col} {self.cell(col)!r}: not a uint32, the C++ frame reads it as {default}")
            return default
        return value

    def float(self, col: str, default: float) -> float:
        """`std::stof`: accepts inf, nan, 1e-3, hex; the value is rounded to float32."""
        return self._leading(col, default, stof_prefix, "g", "the number", "expected a number")

    def double(self, col: str, default: float) -> float:
        return self._leading(col, default, stod_prefix, "g", "the number", "expected a number")

    def enum(self, col: str, names: dict[str, int], default: int, what: str, unknown: int | None = None) -> int:
        """`parseEnum`: exact (case-sensitive) name, else `std::stoi`, else the parser's fallback.

        `default` is the value for an absent cell (the param struct's ReadMap default); `unknown` the parser's
        fallback for unrecognised text (`parseFillMode` gives 0xFF, not the struct default); None means the same.
        """
        text = self.cell(col)
        if text is None:
            return default
        default = default if unknown is None else unknown
        if text in names:
            return names[text]
        try:
            value, used = _stoi(text, "int")
        except ValueError:
            self._report(col, WARNING, f"unknown {what} {text!r}: the C++ frame reads it as "
                                       f"{_enum_label(names, default)}")
            return default
        if text[used:].strip(_TRIM):
            self._report(col, WARNING, f"{what} {text!r}: the C++ frame reads it as {value} "
                                       f"(std::stoi stops at {text[used:]!r})")
        return value

    def status(self, col: str = "expect_result") -> int:
        """`parseStatus`: `ACLBLAS_STATUS_X` or `X`; absent -> SUCCESS; unknown text -> INTERNAL_ERROR."""
        if self.cell(col) is None:
            return int(abi.Status.SUCCESS)
        return self.enum(col, STATUS, UNKNOWN_DEFAULT["status"], "status")

    def is_null(self, col: str) -> bool:
        return self.cell(col) in NULL_WORDS

    def null_scalar(self, col: str) -> bool:
        """A NULL scalar pointer, in either convention: a null word in the scalar cell itself (ssymm, strmm) or
        the gemm family's `<col>_null` column set to `true`."""
        return self.is_null(col) or self.flag(f"{col}_null")

    def flag(self, col: str) -> bool:
        """gemm-family `*_null` flags: exactly lowercase `true` is true, anything else false."""
        text = self.cell(col)
        if text is not None and text not in ("true", "false"):
            self._report(col, WARNING, f"{col} {text!r}: only lowercase 'true' is true; the C++ frame reads this "
                                       "as false")
        return text == "true"

    def _complex_part(self, col: str, text: str, fallback: float, part: str) -> float:
        try:
            value, used = stof_prefix(text)
        except ValueError:
            self._report(col, WARNING, f"{col}: {part} part {text!r} is not a number; the C++ frame reads it as "
                                       f"{fallback:g}")
            return fallback
        if text[used:].strip(_TRIM):
            self._report(col, WARNING, f"{col}: {part} part {text!r} is read as {value:g} "
                                       f"(the number stops at {text[used:]!r})")
        return value

    def complex(self, col: str, default: complex = 1 + 0j) -> complex:
        """cgemm_batched `parseComplex`: `re;im` in one cell, `re` alone means imag 0; an unreadable real part
        becomes 1.0 and an unreadable imaginary part 0.0 (the C++ fallbacks, with a warning)."""
        text = self.cell(col)
        if text is None:
            return default
        re_text, sep, im_text = text.partition(";")
        real = self._complex_part(col, re_text, 1.0, "real")
        imag = self._complex_part(col, im_text, 0.0, "imaginary") if sep else 0.0
        return complex(real, imag)

    def complex_pair(self, re_col: str, im_col: str, default: complex) -> complex | None:
        """A complex scalar split over `*_real`/`*_imag` columns; a null word in the real cell is a null pointer
        (None)."""
        if self.is_null(re_col):
            return None
        if self.is_null(im_col):
            self._report(im_col, ERROR, f"{im_col} {self.cell(im_col)!r}: a null pointer is written in {re_col}")
            return default
        return complex(self.float(re_col, default.real), self.float(im_col, default.imag))

    def fill(self, col: str, default: str) -> str:
        """A fill string, validated with `parse_fill`; a malformed one is an error and yields `default`."""
        text = self.cell(col)
        if text is None:
            return default
        try:
            spec = parse_fill(text)
        except FillError as exc:
            self._report(col, ERROR, f"{col}: {exc}")
            return default
        if not spec.recognised:
            self._report(col, WARNING, f"{col} {text!r}: unknown fill method; the C++ frame fills the index "
                                       "sequence 1,2,3…")
        elif not spec.cpp_known and spec.method not in self.row.extensions:
            self._report(col, WARNING, f"{col} {text!r}: {spec.method} is an extension unknown to the C++ frame "
                                       "(it would fill the index sequence 1,2,3…)", misread=True)
        for note in spec.notes:
            self._report(col, WARNING, f"{col} {text!r}: {note}")
        if spec.method == "RANDOM" and (spec.val1 < 0 or spec.val2 < 0):
            self._report(col, WARNING, f"{col} {text!r}: RANDOM_a_b draws from [-a, b); a negative bound means "
                                       "FLT_MAX on that side, not a signed bound")
        return text


#: The columns every operator's rows need: without a case_name a row has no name, without expect_result no
#: expected status (harness.tables.header refuses a header lacking one).
BASE_REQUIRED = ("case_name", "expect_result")
#: What every frame gives a row for a base column the header lacks (said once per table).
BASE_DEFAULTS = {"description": "empty", "mere_threshold": "0 (the gate's default)",
                 "mare_multiplier": "0 (the gate's default)", "random_seed": "0 (seed 42)"}


@dataclass(frozen=True)
class BaseFields:
    """The columns every C++ param struct reads (`BlasTestParamBase`)."""
    case_name: str
    description: str
    expect_result: int
    mere_threshold: float
    mare_multiplier: float
    random_seed: int


def seed_of(reader: CellReader) -> int:
    """`random_seed`: uint32, default 0 (fill.h later turns a final seed of 0 into 42)."""
    return reader.uint32("random_seed", 0)


def base_fields(reader: CellReader) -> BaseFields:
    return BaseFields(
        case_name=reader.text("case_name"), description=reader.text("description"), expect_result=reader.status(),
        mere_threshold=reader.double("mere_threshold", 0.0), mare_multiplier=reader.double("mare_multiplier", 0.0),
        random_seed=seed_of(reader))

