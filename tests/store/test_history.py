"""History: round trips, per-commit trends, two concurrent writer processes, and a writer killed halfway."""
import multiprocessing as mp
import re
import sqlite3

import pytest

from harness.store.history import History
from harness.model.record import new_record
from history_records import kill_writer_halfway, meta, perf_record, writer

ctx = mp.get_context("fork")


def test_round_trip_keeps_records_and_samples(tmp_path):
    h = History(tmp_path / "h.sqlite")
    h.start_run(meta("r1"))
    rec = perf_record("TC_PF_001")
    plain = new_record("TC_AC_001", "csymm", "cases/csymm_test.csv", 1, 0)
    plain.update(verdict="FAIL", precision={"mere": {"real": 1e-6, "imag": 2e-6}, "max_abs_error": 0.5})
    h.record("r1", rec)
    h.record("r1", plain)
    h.finish_run("r1", {"total": 2, "passed": 1, "failed": 1})
    m, records = History(tmp_path / "h.sqlite").load_run("r1")   # a fresh handle reads what the first wrote
    assert m["commit"] == "a" * 40 and m["inputs"][0]["sha256"] == "ab" * 32 and m["summary"]["failed"] == 1
    assert [r["case_name"] for r in records] == ["TC_AC_001", "TC_PF_001"]       # table/line order
    assert records[1] == rec and records[0] == plain
    runs = h.runs()
    assert list(runs["run_id"]) == ["r1"] and runs["records"][0] == 2 and runs["passed"][0] == 1
    with pytest.raises(KeyError):
        h.load_run("nope")


def test_samples_live_in_their_own_table(tmp_path):
    h = History(tmp_path / "h.sqlite")
    h.start_run(meta("r1"))
    h.record("r1", perf_record("TC_PF_001", n=7))
    db = sqlite3.connect(tmp_path / "h.sqlite")
    assert db.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 1
    assert "samples_us" not in db.execute("SELECT record FROM results").fetchone()[0]


def test_trend_per_commit_and_latest_run(tmp_path):
    h = History(tmp_path / "h.sqlite")
    runs = [("r1", "c1" * 20, "2026-01-01", 10.0), ("r2", "c2" * 20, "2026-01-02", 11.0),
            ("r3", "c2" * 20, "2026-01-03", 12.0), ("r4", "c3" * 20, "2026-01-04", 9.0)]
    for run_id, commit, started, median in runs:
        h.start_run(meta(run_id, commit, started))
        h.record(run_id, perf_record("TC_PF_001", median))
        h.record(run_id, perf_record("TC_PF_001", 100.0, table="cases/sgemm.csv", op="sgemm"))
    t = h.trend("TC_PF_001")
    csymm = t[t["op"] == "csymm"]
    assert list(csymm["commit"]) == ["c1" * 6, "c2" * 6, "c3" * 6]
    assert list(csymm["median_us"]) == [10.0, 12.0, 9.0]          # c2: the newer of its two runs
    assert list(csymm["runs"]) == [1, 2, 1]
    assert csymm["change_vs_prev"].iloc[1] == pytest.approx(0.2)
    assert len(t[t["op"] == "sgemm"]) == 3
    assert list(h.trend("TC_PF_001", op="sgemm")["op"]) == ["sgemm"] * 3
    totals = h.trend(None)
    c1 = totals[totals["commit"] == "c1" * 6]
    assert list(c1["op"]) == ["csymm", "sgemm"] and list(c1["rows"]) == [1, 1]   # operators never pooled
    assert list(c1["perf_geomean_us"]) == pytest.approx([10.0, 100.0])
    assert h.latest_run_of_commit("c2c2c2c") == "r3" and h.latest_run_of_commit("ffff") is None
    assert h.trend("TC_NOPE").empty


def test_dirty_runs_are_their_own_trend_point(tmp_path):
    h = History(tmp_path / "h.sqlite")
    h.start_run(meta("r1", "c1" * 20, "2026-01-01"))
    h.start_run(meta("r2", "c1" * 20, "2026-01-02", dirty=True))
    for r in ("r1", "r2"):
        h.record(r, perf_record("TC_PF_001"))
    assert list(h.trend("TC_PF_001")["commit"]) == ["c1" * 6, "c1" * 6 + "+dirty"]


def test_two_concurrent_writer_processes(tmp_path):
    path = tmp_path / "h.sqlite"
    h = History(path)
    h.start_run(meta("r1"))
    h.db  # the parent's open connection must not be reused by the forked children
    go = ctx.Event()
    procs = [ctx.Process(target=writer, args=(path, run_id, 300, go)) for run_id in ("r1", "r1b")]
    for p in procs:
        p.start()
    go.set()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert len(h.load_run("r1")[1]) == 300
    n = sqlite3.connect(path).execute("SELECT COUNT(*) FROM results WHERE run_id = 'r1b'").fetchone()[0]
    assert n == 300


def test_writer_killed_halfway_keeps_every_finished_row(tmp_path):
    path = tmp_path / "h.sqlite"
    History(path).start_run(meta("r1"))
    finished = kill_writer_halfway(path, stall_s=30)
    h = History(path)
    assert h.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    _, records = h.load_run("r1")
    stored = {r["case_name"] for r in records}
    assert {f"TC_PF_{i:05d}" for i in finished} <= stored
    assert all(len(r["timing"]["samples_us"]) == 1000 for r in records)   # no row without its samples
    assert h.runs()["finished"].isna().all()                              # the run never finished


def test_history_command(tmp_path, capsys):
    from harness.cli import Parser
    from harness.commands import history as command

    parser = Parser(prog="harness")
    command.add_parser(parser.add_subparsers(dest="command", parser_class=Parser))

    def run(*argv):
        args = parser.parse_args(["history", "--history", str(tmp_path / "h.sqlite"), *argv])
        return args.func(args)
    assert run() == 3                                    # no database: environment error, nothing created
    assert not (tmp_path / "h.sqlite").exists()
    h = History(tmp_path / "h.sqlite")
    for run_id, commit, started, median in [("r1", "c1" * 20, "2026-01-01", 10.0),
                                            ("r2", "c2" * 20, "2026-01-02", 11.0)]:
        h.start_run(meta(run_id, commit, started))
        h.record(run_id, perf_record("TC_PF_001", median))
    assert run("--case", "TC_PF_001") == 0
    out = capsys.readouterr().out
    assert "c2c2c2c2c2c2" in out and "+10.00%" in out
    assert run() == 0 and "perf_geomean_us" in capsys.readouterr().out
    assert run("--case", "TC_NOPE") == 2


def test_a_small_run_after_a_full_one_hides_none_of_the_commits_rows(tmp_path):
    h = History(tmp_path / "h.sqlite")
    h.start_run(meta("full", "c1" * 20, "2026-01-01"))
    for i in range(5):
        h.record("full", perf_record(f"TC_PF_{i:04d}", 10.0, line=i + 2))
    h.start_run(meta("small", "c1" * 20, "2026-01-02"))
    h.record("small", perf_record("TC_PF_0000", 40.0, line=2))
    totals = h.trend(None)
    assert list(totals["rows"]) == [5] and list(totals["runs"]) == [2]
    assert totals["perf_geomean_us"].iloc[0] == pytest.approx((40.0 * 10.0 ** 4) ** 0.2)  # the newer figure


def test_history_command_keeps_operators_apart_and_prints_plain_numbers(tmp_path, capsys):
    from harness.cli import main

    path = tmp_path / "h.sqlite"
    h = History(path)
    h.start_run(meta("r1", "c1" * 20, "2026-01-01"))
    rec = perf_record("TC_PF_0001", 10.0)
    rec["precision"] = {"max_abs_error": {"real": 0.25, "imag": 0.5}, "mere": {"real": 1e-6, "imag": 2e-6}}
    h.record("r1", rec)
    h.record("r1", perf_record("TC_PF_0001", 100.0, table="cases/ssymm_test.csv", op="ssymm"))
    assert main(["history", "--history", str(path), "--case", "TC_PF_0001"]) == 0
    out = capsys.readouterr().out
    assert "TC_PF_0001 of csymm (cases/csymm_test.csv):" in out
    assert "TC_PF_0001 of ssymm (cases/ssymm_test.csv):" in out
    assert "{" not in out and re.search(r"\|\s+0\.5 \|", out)     # the worse part, not a Python dict
    assert main(["history", "--history", str(path), "--case", "TC_PF_0001", "--op", "ssymm"]) == 0
    out = capsys.readouterr().out
    assert "csymm" not in out and re.search(r"\|\s+100 \|", out)
    assert main(["history", "--history", str(path), "--case", "TC_PF_0001", "--op", "sgemm"]) == 2


def test_history_help_example_is_a_real_case_name(capsys):
    from harness.cli import main

    with pytest.raises(SystemExit):
        main(["history", "--help"])
    assert "TC_PF_0001" in capsys.readouterr().out
