"""The machine is unreliable: a full disk or an unusable history/report path is one line and exit 3, and nothing
already written is lost (history consistent with its earlier runs, results.jsonl whole strict-JSON lines, no
`.tmp` left). Provenance names the harness's commit, the operator library and every table by sha256."""
from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from harness.store import provenance
from run_files import check_history, strict_lines
from tables import csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[2]


def _harness(args: list[str], cwd: Path, file_limit: int | None = None) -> subprocess.CompletedProcess:
    def limit() -> None:  # a file may not grow past file_limit bytes: the kernel's "disk full" for this process
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, preexec_fn=limit if file_limit else None)


def _table(tmp_path: Path, rows: int) -> Path:
    return write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row(f"TC_L0_{i:03d}", 3 + i % 5, 2, seed=i)
                                                           for i in range(rows)])


@pytest.mark.slow  # 53 s of a bare pytest -n 2 at load ~20
def test_history_filling_the_disk_mid_run_is_one_line_exit_3_and_loses_nothing(tmp_path, toy_lib):
    table = _table(tmp_path, 40)
    args = ["run", str(table), "--operator-lib", str(toy_lib), "--report-dir", "r", "--history", "h.sqlite"]
    assert _harness([*args, "-k", "TC_L0_000"], tmp_path).returncode == 0
    size = (tmp_path / "h.sqlite").stat().st_size
    result = _harness(args, tmp_path, file_limit=size + 64 * 1024)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "cannot write h.sqlite: " in result.stderr  # sqlite says "disk I/O error" for EFBIG, "full" for ENOSPC
    db = check_history(tmp_path / "h.sqlite", runs=2)
    assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] > 1  # the first run and some of the second
    for stream in tmp_path.glob("r/*/results.jsonl"):
        strict_lines(stream)
    assert not list(tmp_path.glob("r/*/.*.tmp"))


@pytest.mark.slow  # 29 s of a bare pytest -n 2 at load ~20
def test_report_dir_filling_up_is_one_line_exit_3_and_keeps_the_rows(tmp_path, toy_lib):
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(small)], capture_output=True,
                      check=False).returncode != 0:
        pytest.skip("requires root (mounts a 48 KiB tmpfs as the full report directory)")
    try:
        table = _table(tmp_path, 20)
        result = _harness(["run", str(table), "--operator-lib", str(toy_lib), "--report-dir", str(small),
                           "--history", "h.sqlite"], tmp_path)
        assert result.returncode == 3, result.stdout + result.stderr
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert "No space left on device" in result.stderr
        (stream,) = small.glob("*/results.jsonl")
        assert len(strict_lines(stream)) == 20
        assert not list(small.glob("*/.*.tmp"))
        check_history(tmp_path / "h.sqlite", runs=1)
    finally:
        subprocess.run(["umount", str(small)], check=False)


@pytest.mark.parametrize("argv,words", [
    (["-k", "TC_A and ("], "-k 'TC_A and ('"), (["-k", "import os"], "-k 'import os'"),
    (["--memory-cap", "nan"], "--memory-cap"), (["--memory-cap", "-1"], "--memory-cap"),
    (["--min-samples", "0"], "--min-samples"), (["--warmup", "-1"], "--warmup"),
    (["--timeout", "nan"], "--timeout"), (["--timeout", "0"], "--timeout"), (["--timeout", "-1"], "--timeout"),
    (["--timeout", "inf"], "--timeout"), (["-n", "0"], "--workers"), (["--max-time", "0"], "--max-time"),
    (["--history", "{notdb}"], "not a database"), (["--history", "{dir}"], "--history"),
    (["--history", "/proc/no/h.sqlite"], "--history"), (["--report-dir", "{notdb}"], "--report-dir"),
    (["{table}", "{table}"], "given twice"), (["{dir}"], "not a regular file"),
])
def test_bad_options_are_one_line_and_exit_3(tmp_path, toy_lib, capsys, argv, words):
    from harness.cli import main

    (tmp_path / "notdb.sqlite").write_text("this is not a database\n" * 100)
    (tmp_path / "d").mkdir()
    table = _table(tmp_path, 1)
    fill = {"{notdb}": str(tmp_path / "notdb.sqlite"), "{dir}": str(tmp_path / "d"), "{table}": str(table)}
    argv = [fill.get(a, a) for a in argv]
    tables = [] if str(table) in argv else [str(table)]
    try:
        code = main(["run", "--operator-lib", str(toy_lib), "--report-dir", str(tmp_path / "r"),
                     "--history", str(tmp_path / "h.sqlite"), *argv, *tables])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 3 and len(err.strip().splitlines()) == 1 and words in err, err
    assert (tmp_path / "notdb.sqlite").read_text().startswith("this is not a database")


@pytest.mark.parametrize("content,reason", [
    ("", "empty file"), ("# a\n# b\n", "comments only"), ("case_name,m,n\n", "header only"),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary file"), ('case_name,"m,n\nx,1,2\n', "unbalanced quote"),
    ("case_name,m\rc1,1\r", "CR only"),
])
def test_tables_that_cannot_run_are_exit_3_naming_the_file(tmp_path, toy_lib, capsys, content, reason):
    from harness.cli import main

    path = tmp_path / "csymm_test.csv"
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    code = main(["run", str(path), "--operator-lib", str(toy_lib), "--report-dir", str(tmp_path / "r"),
                 "--history", str(tmp_path / "h.sqlite")])
    err = capsys.readouterr().err
    assert code == 3 and len(err.strip().splitlines()) == 1 and f"{path}:" in err and reason in err, err


def test_short_row_is_an_error_naming_file_and_line_and_the_others_run(tmp_path, toy_lib):
    from harness.cli import main

    good = csymm_row("TC_L0_ok", 4, 3)
    table = write_csymm_table(tmp_path / "csymm_test.csv", [good, "TC_L0_short,t,ACLBLAS_SIDE_LEFT,ACLBLAS_UPPER,4"])
    assert main(["run", str(table), "--operator-lib", str(toy_lib), "--report-dir", str(tmp_path / "r"),
                 "--history", str(tmp_path / "h.sqlite")]) == 1
    cases = {c["case_name"]: c for c in json.loads(next(tmp_path.glob("r/*/report.json")).read_text())["cases"]}
    assert cases["TC_L0_ok"]["verdict"] == "PASS"
    assert cases["TC_L0_short"]["verdict"] == "ERROR" and f"{table}:3:6: error: row has 5 fields" in \
        cases["TC_L0_short"]["reason"]


def test_lint_on_a_fifo_does_not_hang(tmp_path):
    fifo = tmp_path / "x_test.csv"
    os.mkfifo(fifo)
    result = subprocess.run([sys.executable, "-m", "harness.cli", "lint", str(fifo)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 3 and "not a regular file" in result.stderr


def test_history_keys_rows_by_table_and_line_and_never_overwrites(tmp_path, toy_lib):
    from harness.cli import main
    from harness.store.history import History

    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_same", 4, 3),
                                                            csymm_row("TC_L0_same", 5, 2)])
    main(["run", str(table), "--operator-lib", str(toy_lib), "--report-dir", str(tmp_path / "r"),
          "--history", str(tmp_path / "h.sqlite")])
    (run_id,) = History(tmp_path / "h.sqlite").runs()["run_id"]
    _, records = History(tmp_path / "h.sqlite").load_run(run_id)
    assert [(r["case_name"], r["line"], r["verdict"]) for r in records] == [
        ("TC_L0_same", 2, "PASS"), ("TC_L0_same", 3, "ERROR")]  # the duplicate is an error row of its own


def test_old_history_database_is_migrated_to_the_line_key(tmp_path):
    from harness.store.history import History

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE runs (run_id TEXT PRIMARY KEY, commit_sha TEXT, dirty INTEGER, branch TEXT, backend TEXT,
            device TEXT, host TEXT, started TEXT, finished TEXT, meta TEXT NOT NULL, summary TEXT);
        CREATE TABLE results (run_id TEXT NOT NULL, table_name TEXT NOT NULL, case_name TEXT NOT NULL, op TEXT,
            line INTEGER, verdict TEXT, is_perf INTEGER, n INTEGER, mean_us REAL, median_us REAL, min_us REAL,
            converged INTEGER, record TEXT NOT NULL, PRIMARY KEY (run_id, table_name, case_name));
        CREATE TABLE samples (run_id TEXT NOT NULL, table_name TEXT NOT NULL, case_name TEXT NOT NULL,
            samples_us TEXT NOT NULL, PRIMARY KEY (run_id, table_name, case_name));
        INSERT INTO runs VALUES ('r0', 'c', 0, 'b', 'cpu', 'd', 'h', '2026', '2026', '{"run_id": "r0"}', NULL);
        INSERT INTO results VALUES ('r0', 't.csv', 'TC_PF_1', 'csymm', 7, 'PASS', 1, 50, 1.0, 1.0, 1.0, 1,
            '{"case_name": "TC_PF_1", "line": 7, "timing": {"n": 50}}');
        INSERT INTO samples VALUES ('r0', 't.csv', 'TC_PF_1', '[1.0, 2.0]');
    """)
    db.close()
    _, records = History(path).load_run("r0")
    assert records == [{"case_name": "TC_PF_1", "line": 7, "timing": {"n": 50, "samples_us": [1.0, 2.0]}}]
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_provenance_names_the_harness_commit_the_library_and_the_tables(tmp_path, toy_lib, monkeypatch):
    from harness.cli import main

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("requires the harness to run from a git checkout")
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    subprocess.run(["git", "init", "-q", str(elsewhere)], check=True)
    monkeypatch.chdir(elsewhere)  # a different repository as cwd must not be the commit recorded
    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 4, 3)])
    main(["run", str(table), "--operator-lib", str(toy_lib), "--report-dir", str(tmp_path / "r"),
          "--history", str(tmp_path / "h.sqlite")])
    report = json.loads(next(tmp_path.glob("r/*/report.json")).read_text())
    assert report["commit"] == provenance.git_state(ROOT)["commit"] != "unknown"
    assert report["operator_lib"] == {"path": str(toy_lib), "sha256": provenance.sha256(toy_lib)}
    assert report["inputs"] == [{"path": str(table), "sha256": provenance.sha256(table)}]


def test_results_line_cut_short_by_a_full_disk_is_taken_back_whole(tmp_path):
    script = f"""
import os, resource, signal
from harness.flows.session import append_line
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
fd = os.open({str(tmp_path / 'r.jsonl')!r}, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
append_line(fd, '{{"row": 1, "pad": "{'x' * 40}"}}')
try:
    append_line(fd, '{{"row": 2, "pad": "{'y' * 40}"}}')
except OSError as exc:
    print(exc.strerror)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "No space left on device", result.stderr
    assert strict_lines(tmp_path / "r.jsonl") == [{"row": 1, "pad": "x" * 40}]  # the half line is gone


def test_results_jsonl_is_strict_json(tmp_path):
    from harness.store.history import History
    from harness.model.record import new_record
    from harness.flows.session import Session
    from harness.store.stored import load_meta

    session = Session(History(tmp_path / "h.sqlite"), tmp_path / "out", load_meta({"run_id": "r1"}), [])
    session.start()
    rec = new_record("TC_L0_nan", "csymm", "t.csv", 2, 0)
    rec["precision"] = {"max_abs_error": float("inf"), "mere": {"real": float("nan"), "imag": -float("inf")}}
    session.record(rec)
    (line,) = strict_lines(tmp_path / "out" / "results.jsonl")
    assert line["precision"] == {"max_abs_error": "Infinity", "mere": {"real": "NaN", "imag": "-Infinity"}}
