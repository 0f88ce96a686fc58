"""Fuzzing whole table files and command lines: every input ends in a diagnostic, a verdict or a one-line error with
an exit code of the contract, never a traceback (issue 11). tests/fuzz/test_fuzz_tables.py fuzzes cells and rows; this
module fuzzes the bytes of the file (binary, CR-only, cut anywhere, quotes) and the options of every command.
"""
from __future__ import annotations

import io
import os
import random
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from harness.tables.reader import TableError, read_table
from harness.cli import main
from harness.tables.load import load_table
from harness.tables.lint import lint_rows
from tables import CSYMM_HEADER, csymm_row

FILE_INPUTS = 260
ARGV_INPUTS = 260
GOOD = "\n".join([CSYMM_HEADER, *(csymm_row(f"TC_L0_{i}", 3 + i, 2) for i in range(4))]) + "\n"


def _mutate_file(rng: random.Random) -> bytes:
    data = bytearray(GOOD.encode())
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(data) + 1)
        kind = rng.choice(["nul", "cr", "cut", "quote", "bytes", "delete", "comment", "empty", "header", "dup"])
        if kind == "nul":
            data[at:at] = b"\0"
        elif kind == "cr":
            data = data.replace(b"\n", b"\r")
        elif kind == "cut":
            del data[at:]
        elif kind == "quote":
            data[at:at] = b'"'
        elif kind == "bytes":
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif kind == "delete":
            del data[at:at + rng.randint(1, 40)]
        elif kind == "comment":
            data = bytearray(b"\n".join(b"# " + line for line in bytes(data).split(b"\n")))
        elif kind == "empty":
            data = bytearray(rng.choice([b"", b"\n", b" \t\n\n"]))
        elif kind == "header":
            data = bytearray(CSYMM_HEADER.encode() + b"\n")
        else:
            lines = bytes(data).split(b"\n")
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def test_fuzzed_table_files_give_diagnostics_not_tracebacks(tmp_path):
    rng = random.Random(11)
    tracebacks, refused = [], 0
    for n in range(FILE_INPUTS):
        path = tmp_path / f"f{n}" / "csymm_test.csv"
        path.parent.mkdir()
        path.write_bytes(_mutate_file(rng))
        try:
            cases = load_table(path)
            lint_rows(read_table(str(path)))
        except TableError as exc:  # a file that cannot be a table: one line naming it
            assert str(exc).startswith(f"{path}:") and "\n" not in str(exc)
            refused += 1
            continue
        except Exception as exc:  # the property under test: nothing else escapes
            tracebacks.append(f"{path}: {type(exc).__name__}: {exc}")
            continue
        for case in cases:  # an unrunnable row says where
            assert all(e.startswith(f"{path}:{case.line}:") for e in case.errors), case.errors
    assert tracebacks == []
    assert 0 < refused < FILE_INPUTS  # both outcomes are exercised


def _argv(rng: random.Random, files: dict[str, str]) -> list[str]:
    """One command line: a subcommand and a few options, each value valid (the first of its list) or broken; valid
    often enough that a few command lines run to the end (each such run costs seconds: they are kept rare)."""
    def pick(pool: list, valid: float = 0.6):
        return pool[0] if rng.random() < valid else rng.choice(pool)
    values = {
        "-k": ["TC_L0_0", "TC_L0 or TC_X", "not TC_L0_1", "TC_A and (", "import os", "(", "and", "a b", "", "or or",
               "__import__('os')", "TC_L0_0 and not", "\x00"],
        "--timeout": ["5", "nan", "0", "-1", "inf", "abc", "1e309", "-0", ""],
        "--memory-cap": ["1", "nan", "-1", "0", "inf", "x"],
        "--warmup": ["0", "3", "-1", "1.5", "x", "99999999999999999999999"],
        "--min-samples": ["1", "5", "0", "-5", "nan"],
        "--max-time": ["0.1", "0", "-1", "nan", "inf"],
        "-n": ["1", "2", "0", "-3", "x"],
        "--timing-mode": ["sync", "steady", "bogus"],
        "--history": [files["history"], files["notdb"], files["dir"], "/proc/nope/h.sqlite", files["table"]],
        "--report-dir": [files["reports"], files["table"], "/proc/nope"],
        "--threshold": ["0.05", "0", "-1", "nan", "x"], "--alpha": ["0.05", "0", "1", "2", "nan"],
        "--every": ["1", "0", "-1", "x"], "--case": ["TC_L0_0", "", "x' OR 1=1 --"],
        "--no-poison": [None], "--bogus-option": [None, "1"],
    }
    tables = [files["table"], files["missing"], files["dir"], files["empty"], files["binary"], files["fifo"]]
    command = rng.choice(["run", "run", "run", "lint", "history", "compare", "mutants", "ab", "baseline",
                          "nonsense"])
    allowed = {"run": ["-k", "--timeout", "--memory-cap", "--warmup", "--min-samples", "--max-time", "-n",
                       "--timing-mode", "--history", "--report-dir", "--no-poison", "--bogus-option"],
               "lint": ["--bogus-option"], "history": ["--history", "--case", "--bogus-option"],
               "compare": ["--history", "--threshold", "--alpha"],
               "mutants": ["-k", "--every", "-n", "--timeout"], "ab": ["-k", "--threshold", "--alpha", "--warmup",
                                                                        "--max-time", "--min-samples"],
               "baseline": ["-k", "--warmup", "--min-samples", "--max-time", "--timing-mode", "--history",
                            "--report-dir"], "nonsense": []}
    argv = [command]
    if command in ("ab", "compare"):
        argv += [pick(["HEAD", "no-such-run", "", "..", "-"]) for _ in range(2)]
    if command in ("run", "lint", "mutants", "ab", "baseline"):
        argv += [pick(tables, 0.15) for _ in range(1 if command == "baseline" else rng.randint(1, 2))]
    for option in rng.sample(allowed[command], k=min(len(allowed[command]), rng.randint(0, 2))):
        value = pick(values[option])
        argv += [option] if value is None else [option, value]
    if command in ("run", "baseline"):
        argv += ["--operator-lib", files["lib"], "--backend", "cpu"]
    if command == "run" and "--history" not in argv:
        argv += ["--history", files["history"], "--report-dir", files["reports"]]
    if command in ("mutants", "ab"):  # these build twins; only their option checks are fuzzed here
        argv += ["--timeout" if command == "mutants" else "--alpha", "nan"]
    return argv


def test_fuzzed_command_lines_give_one_line_errors_not_tracebacks(tmp_path, toy_lib, monkeypatch):
    files = {"table": str(tmp_path / "csymm_test.csv"), "missing": str(tmp_path / "missing_test.csv"),
             "dir": str(tmp_path / "dir"), "empty": str(tmp_path / "empty_test.csv"),
             "binary": str(tmp_path / "bin_test.csv"), "fifo": str(tmp_path / "fifo_test.csv"),
             "notdb": str(tmp_path / "notdb.sqlite"), "history": str(tmp_path / "h.sqlite"),
             "reports": str(tmp_path / "reports"), "lib": str(toy_lib)}
    Path(files["table"]).write_text("\n".join([CSYMM_HEADER, csymm_row("TC_L0_0", 3, 2)]) + "\n")
    Path(files["empty"]).write_text("")
    Path(files["binary"]).write_bytes(b"\x7fELF\0\0\0")
    Path(files["notdb"]).write_text("not a database\n" * 64)
    Path(files["dir"]).mkdir()
    os.mkfifo(files["fifo"])
    monkeypatch.chdir(tmp_path)
    rng = random.Random(1111)
    tracebacks, codes = [], []
    for _ in range(ARGV_INPUTS):
        argv = _argv(rng, files)
        out, err = io.StringIO(), io.StringIO()
        try:
            with redirect_stdout(out), redirect_stderr(err):
                code = main(argv)
        except SystemExit as exc:
            code = exc.code
        except Exception as exc:  # the property under test: nothing escapes
            tracebacks.append(f"{argv}: {type(exc).__name__}: {exc}")
            continue
        codes.append(code)
        assert code in (0, 1, 2, 3), (argv, code, err.getvalue())
        assert "Traceback" not in err.getvalue() + out.getvalue(), argv
        if code == 3:  # one line (lint: one per table it cannot read)
            per_file = argv[0] == "lint" and len([a for a in argv if a in files.values()])
            assert 1 <= len(err.getvalue().strip().splitlines()) <= max(1, per_file), (argv, err.getvalue())
    assert tracebacks == []
    assert {0, 3} <= set(codes)  # valid command lines ran, broken ones were refused
    assert Path(files["notdb"]).read_text().startswith("not a database")
