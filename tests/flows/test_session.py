"""harness.flows.session: one run's life on disk (run.json first, one strict line per row, the history beside it, the
reports and the exit code at the end, interruption, write failures) and the meta model read back (load_meta)."""
from __future__ import annotations

import errno
import json
import signal
from types import SimpleNamespace

import pytest

from harness.model import codec
from harness.model.exitcodes import Exit
from harness.store.history import History
from harness.model.settings import Settings
from harness.model.record import new_record
from harness.model.meta import RESULTS, new_settings
from harness.flows.session import Session, why
from harness.store.stored import load_meta


def make(tmp_path, *, accept_disputed: bool = False, cases=(), backend: str = "cpu", **meta) -> Session:
    settings = new_settings(Settings(accept_disputed=accept_disputed), gates={"csymm": "mere_mare"},
                            timing={"mode": "sync"})
    raw = {"run_id": "r1", "backend": backend, "settings": settings, "inputs": [{"path": "t.csv", "sha256": "0"}],
           **meta}
    return Session(History(tmp_path / "h.sqlite"), tmp_path / "out", load_meta(raw), list(cases))


def row(line: int, verdict: str = "PASS", **fields) -> dict:
    return {**new_record(f"TC_L0_{line:04d}", "csymm", "t.csv", line, 0), "verdict": verdict, **fields}


def case(line: int, description: str) -> SimpleNamespace:
    return SimpleNamespace(table="t.csv", line=line, description=description)


def test_the_meta_is_on_disk_and_in_the_history_before_the_first_row(tmp_path):
    session = make(tmp_path)
    session.start()
    assert json.loads((tmp_path / "out" / "run.json").read_text())["run_id"] == "r1"
    assert (tmp_path / "out" / RESULTS).read_text() == ""
    assert History(tmp_path / "h.sqlite").has_run("r1")
    session.finish()


def test_each_row_is_one_strict_line_with_its_description_and_the_users_acceptance(tmp_path):
    session = make(tmp_path, accept_disputed=True, cases=[case(2, "左侧"), case(3, "right")])
    session.start()
    session.record(row(3, "DISPUTED", precision={"max_abs_error": float("nan")}))
    session.record(row(2, description="own words"))
    lines = (tmp_path / "out" / RESULTS).read_text().splitlines()
    first = json.loads(lines[0], parse_constant=lambda token: pytest.fail(f"bare {token}"))
    assert first["description"] == "right" and first["disputed_accepted"] is True
    assert first["precision"]["max_abs_error"] == "NaN"
    assert json.loads(lines[1])["description"] == "own words"  # a row's own description is kept
    assert lines == [codec.dumps(r) for r in session.records]
    _, stored = History(tmp_path / "h.sqlite").load_run("r1")
    assert [r["line"] for r in stored] == [2, 3]
    session.finish()


def test_finish_orders_rows_as_the_cases_and_records_the_interruption(tmp_path):
    session = make(tmp_path, cases=[case(2, "a"), case(3, "b"), case(4, "c")])
    session.start()
    for line in (4, 2, 3):
        session.record(row(line))
    paths = session.finish(interrupted_by=signal.SIGTERM)
    report = json.loads(paths["json"].read_text())
    assert [c["line"] for c in report["cases"]] == [2, 3, 4]
    assert report["interrupted"] is True and report["finished"]
    assert json.loads((tmp_path / "out" / "run.json").read_text())["interrupted"] is True
    meta, _ = History(tmp_path / "h.sqlite").load_run("r1")
    assert meta["summary"]["interrupted"] is True and meta["summary"]["total"] == 3


def test_a_meta_that_arrives_interrupted_stays_so_and_an_uninterrupted_one_is_not_marked(tmp_path):
    session = make(tmp_path, interrupted=True)  # harness merge of an interrupted shard
    session.start()
    session.finish()
    assert session.meta["interrupted"] is True
    clean = make(tmp_path / "clean")
    clean.start()
    clean.finish()
    assert clean.meta["interrupted"] is False


def test_end_prints_the_outcome_and_returns_the_one_rules_code(tmp_path, capsys):
    session = make(tmp_path)
    session.start()
    session.record(row(2))
    session.record(row(3, "FAIL"))
    assert session.end() == Exit.FAIL
    out = capsys.readouterr().out
    assert "2 rows: 1 passed, 1 failed" in out and "report: " in out


def test_end_of_a_device_run_that_judged_no_perf_row_is_insufficient(tmp_path, capsys):
    session = make(tmp_path, backend="npu", hardware={"name": "Ascend 950PR", "detected": "", "override": None})
    session.start()
    session.record(row(2, is_perf=True, timing={"mode": "sync", "n": 2, "mean_us": 1.5, "samples_us": [1.0, 2.0]},
                       baseline=[{"kind": "taskbook", "verdict": "NO_REF"}]))
    assert session.end() == Exit.INSUFFICIENT
    assert "no perf row got a judged baseline on Ascend 950PR" in capsys.readouterr().out


def test_end_after_a_signal_is_128_plus_it_with_the_reports_written(tmp_path, capsys):
    session = make(tmp_path, cases=[case(2, "a"), case(3, "b")])
    session.start()
    session.record(row(2))
    assert session.end(interrupted_by=signal.SIGINT) == 130
    assert "interrupted by SIGINT: 1 of 2 rows finished" in capsys.readouterr().err
    assert (tmp_path / "out" / "report.json").is_file()


def test_recording_finishes_however_the_body_ends(tmp_path):
    session = make(tmp_path)
    stop = KeyboardInterrupt()
    stop.signum = signal.SIGTERM
    with pytest.raises(KeyboardInterrupt):
        with session.recording():
            session.record(row(2))
            raise stop
    assert session.meta["interrupted"] is True and (tmp_path / "out" / "report.json").is_file()


def test_a_write_failure_is_one_line_exit_3_and_leaves_no_temporary_file(tmp_path, capsys):
    session = make(tmp_path)
    session.start()
    session.record(row(2))
    (tmp_path / "out" / ".report.json.123.tmp").write_text("half")
    full = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out" / "report.json"))
    assert session.fail(full) == Exit.ENV
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "No space left on device" in err and "1 finished rows are kept" in err
    assert not list((tmp_path / "out").glob(".*.tmp")) and session.stream == -1


def test_load_meta_fills_what_older_runs_lack_and_reads_their_spellings():
    meta = load_meta({"run_id": "old", "criteria": {"csymm": "g"}, "settings": {"timing_mode": "steady"},
                      "hardware": "Ascend 910B", "host": "box", "summary": {"interrupted": True}, "extra": 1})
    assert meta["settings"]["gates"] == {"csymm": "g"} and meta["settings"]["timing"] == {"mode": "steady"}
    assert meta["hardware"] == {"name": "Ascend 910B", "detected": "Ascend 910B", "override": None}
    assert meta["host"] == {"hostname": "box"} and meta["interrupted"] is True and "extra" not in meta
    assert meta["kind"] == "run" and meta["settings"]["workers"] == 1 and meta["inputs"] == []
    assert load_meta({"run_id": "new", "backend": None})["backend"] == ""  # null reads as absent


def test_why_is_the_short_phrase_of_an_error():
    assert why(OSError(errno.EACCES, "Permission denied", "/r/x")) == "Permission denied (/r/x)"
    assert why(ValueError("bad")) == "bad" and why(RuntimeError()) == "RuntimeError"
