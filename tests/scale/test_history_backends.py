"""One shared history: the same behaviour on SQLite and on a real PostgreSQL server (started here on loopback) -
concurrent writers, SIGKILL durability, versioned migrations, and `harness run` x2 at once, then runs/compare/history
reading them back."""
from __future__ import annotations

import json
import multiprocessing as mp
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import postgres
from harness.store.history import MIGRATIONS, History
from history_records import kill_writer_halfway, meta, perf_record, writer

ctx = mp.get_context("fork")
#: With `pytest -n 2 --dist loadgroup` (.ci/run) this module's tests share one PostgreSQL server.
pytestmark = pytest.mark.xdist_group("postgresql")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pg_server():
    if postgres.binaries() is None:
        pytest.skip("requires PostgreSQL server binaries (initdb, pg_ctl: apt-get install postgresql)")
    pytest.importorskip("psycopg", reason="requires psycopg 3 (pip install '.[cluster]')")
    with postgres.server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite")
    url = request.getfixturevalue("pg_server")
    postgres.reset(url)
    return url


def record(name: str, line: int, device: int | None = None) -> dict:
    rec = perf_record(name, line=line)
    rec["device"] = device
    return rec


def test_two_concurrent_writer_processes(location):
    """store/test_history.py's concurrent writers (the SQLite-only original), now against either backend."""
    h = History(location)
    for run_id in ("r1", "r2"):
        h.start_run(meta(run_id, started=f"2026-01-0{run_id[1]}"))
    go = ctx.Event()
    procs = [ctx.Process(target=writer, args=(location, run_id, 150, go)) for run_id in ("r1", "r2")]
    for p in procs:
        p.start()
    go.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    for run_id in ("r1", "r2"):
        _, records = h.load_run(run_id)
        assert len(records) == 150 and len(records[0]["timing"]["samples_us"]) == 50
    assert [r["run_id"] for r in h.run_list()] == ["r2", "r1"]


def test_each_row_keeps_its_device(location):
    h = History(location)
    h.start_run(meta("r1"))
    for i in range(4):
        h.record("r1", record(f"TC_PF_{i:03d}", i + 2, device=i % 2))
    h.record("r1", record("TC_PF_100", 100))
    devices = h.db.execute("SELECT device FROM results ORDER BY line").fetchall()
    assert [d[0] for d in devices] == ["0", "1", "0", "1", None]


def test_writer_killed_halfway_keeps_every_finished_row(location):
    History(location).start_run(meta("r1"))
    finished = kill_writer_halfway(location, stall_s=60)
    _, records = History(location).load_run("r1")
    assert {r["case_name"] for r in records} >= {f"TC_PF_{i:05d}" for i in finished}


def test_migrations_are_versioned_on_both_backends(location):
    h = History(location)
    versions = [r[0] for r in h.db.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()]
    assert versions == [v for v, _, _ in MIGRATIONS]
    History(location).run_list()     # opening again applies nothing twice
    assert h.db.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)


def test_a_version_1_sqlite_history_gains_the_device_column(tmp_path):
    """A history written before schema_migrations (PRAGMA user_version 1, no results.device) is migrated on open."""
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE runs (run_id TEXT PRIMARY KEY, commit_sha TEXT, dirty INTEGER, branch TEXT, backend TEXT,
            device TEXT, host TEXT, started TEXT, finished TEXT, meta TEXT NOT NULL, summary TEXT);
        CREATE TABLE results (run_id TEXT NOT NULL, table_name TEXT NOT NULL, case_name TEXT NOT NULL, op TEXT,
            line INTEGER, verdict TEXT, is_perf INTEGER, n INTEGER, mean_us REAL, median_us REAL, min_us REAL,
            converged INTEGER, record TEXT NOT NULL, PRIMARY KEY (run_id, table_name, line, case_name));
        CREATE TABLE samples (run_id TEXT NOT NULL, table_name TEXT NOT NULL, case_name TEXT NOT NULL,
            samples_us TEXT NOT NULL, line INTEGER, PRIMARY KEY (run_id, table_name, line, case_name));
        INSERT INTO runs (run_id, started, meta) VALUES ('old', '2025-01-01', '{}');
        PRAGMA user_version = 1;""")
    db.close()
    columns = lambda: [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(results)")]  # noqa: E731
    assert "device" not in columns()
    h = History(path)
    h.record("old", record("TC_PF_001", 2, device=3))
    assert "device" in columns()
    assert h.db.execute("SELECT device FROM results").fetchone()[0] == "3"
    assert [r["run_id"] for r in h.run_list()] == ["old"]


def _harness(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", *argv], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_two_concurrent_harness_runs_then_runs_compare_history(location, tmp_path):
    args = ["run", str(ROOT / "cases" / "csymm_test.csv"), "-k", "TC_PF_0010 or TC_PF_0011 or TC_L0_0001",
            "--history", location, "--rounds", "3", "--min-samples", "5", "--max-time", "0.6", "--device", "0-1"]
    # 0.2 s a round: time for a perf row's samples on a loaded machine (0.05 s, 17 ms a round, left a side of
    # this test with no row to compare under a load average of 20)
    procs = [subprocess.Popen([sys.executable, "-m", "harness.cli", *args, "--report-dir", str(tmp_path / side)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for side in ("a", "b")]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, out + err
    listed = _harness("runs", "--history", location, "--json")
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert len(runs) == 2 and all(r["summary"]["total"] == 3 for r in runs)
    compared = _harness("compare", runs[1]["run_id"], runs[0]["run_id"], "--history", location, "--json")
    # two runs timed side by side on a loaded machine may legitimately differ: any verdict, but no refusal (3)
    assert compared.returncode in (0, 1, 2), compared.stderr
    result = json.loads(compared.stdout)
    assert (result["base"]["run_id"], result["head"]["run_id"]) == (runs[1]["run_id"], runs[0]["run_id"])
    # a row timed too briefly on one side has no samples to compare; at least one row is compared
    assert {r["case_name"] for r in result["rows"]} & {"TC_PF_0010", "TC_PF_0011"}
    trend = _harness("history", "--history", location, "--case", "TC_PF_0010")
    assert trend.returncode == 0 and "TC_PF_0010" in trend.stdout


def test_an_unreachable_server_is_one_line_without_the_password():
    url = "postgresql://harness:s3cret@127.0.0.1:1/none"
    for command in (["runs"], ["history"], ["run", str(ROOT / "cases" / "csymm_test.csv"), "-k", "TC_L0_0001"]):
        done = _harness(*command, "--history", url)
        assert done.returncode == 3, done.stdout + done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
        assert "s3cret" not in done.stderr and "127.0.0.1" in done.stderr
