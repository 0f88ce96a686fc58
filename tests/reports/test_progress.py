"""The progress display of `harness run`, seen as a user sees it: through a pseudo-terminal (live display redrawn in
place) and through a pipe (plain lines a CI log can hold). Each test runs the real command line in a subprocess."""
from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.reports.progress import ROW_OVERHEAD_FLOPS, Progress, closing_lines
from harness.model.record import new_record
from tables import csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _table(tmp_path: Path) -> Path:
    return write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L0_ok", 4, 3), csymm_row("TC_L0_bad", 4, 3, expect="ACLBLAS_STATUS_INVALID_VALUE"),
        csymm_row("TC_L1_ok", 5, 2), csymm_row("TC_PF_0001", 16, 16)])


def _argv(tmp_path: Path, lib: Path) -> list[str]:
    return [sys.executable, "-m", "harness.cli", "run", str(_table(tmp_path)), "--operator-lib", str(lib),
            "--report-dir", str(tmp_path / "r"), "--history", str(tmp_path / "h.sqlite"), "--rounds", "1",
            "--warmup", "1", "--min-samples", "2", "--max-time", "0.05", "-n", "1"]


def _run_in_pty(argv: list[str], timeout: float = 240) -> tuple[int, str]:
    """The command with a pseudo-terminal as stdin/stdout/stderr; everything it wrote, and its exit code."""
    controller, terminal = pty.openpty()
    env = {**os.environ, "COLUMNS": "160", "LINES": "40", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(argv, stdin=terminal, stdout=terminal, stderr=terminal, cwd=ROOT, env=env,
                            close_fds=True)
    os.close(terminal)
    chunks, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.5)
        if ready:
            try:
                data = os.read(controller, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(controller)
    return proc.wait(timeout=30), b"".join(chunks).decode(errors="replace")


@pytest.mark.slow  # 25 s of a bare pytest -n 2 at load ~20
def test_terminal_gets_a_live_display_with_phase_rate_eta_failures_and_row_being_timed(tmp_path, toy_lib):
    code, out = _run_in_pty(_argv(tmp_path, toy_lib))
    assert code == 1, out  # TC_L0_bad fails
    assert ANSI.search(out), "no terminal control sequences: the display is not live"
    assert "\x1b[?25l" in out  # the cursor hidden while the display redraws in place
    text = ANSI.sub("", out)
    assert re.search(r"precision .*3/3", text), text
    assert re.search(r"perf .*1/1", text), text
    assert re.search(r"\d+(\.\d+)? (rows/s|s/row)", text) and "ETA" in text, text
    assert "1 failed" in text
    assert "timing csymm_test.csv::TC_PF_0001" in text
    assert "[FAIL] csymm_test.csv::TC_L0_bad" in text  # failing rows printed above the live display
    assert "4 rows: 3 passed, 1 failed" in text


@pytest.mark.slow  # 26 s of a bare pytest -n 2 at load ~20
def test_a_pipe_gets_plain_status_lines(tmp_path, toy_lib):
    result = subprocess.run(_argv(tmp_path, toy_lib), cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert not ANSI.search(out) and "\r" not in out, repr(out)
    lines = out.splitlines()
    assert "precision phase: 3 rows" in lines and "perf phase: 1 rows" in lines
    assert any(re.fullmatch(r"precision 3/3 \(100%\) \S+ (rows/s|s/row) ETA \S+ failures 1", line)
               for line in lines), out
    assert any(re.fullmatch(r"perf 1/1 \(100%\) \S+ s/round ETA \S+ failures 1 "
                            r"timing csymm_test\.csv::TC_PF_0001", line) for line in lines), out
    assert any(line.startswith("[FAIL] csymm_test.csv::TC_L0_bad: ") for line in lines)
    # the last lines: where both reports are, a word that perf was not judged, and the verdict with the exit code
    html = Path(next(line for line in lines if line.startswith("report (HTML): ")).split(": ", 1)[1])
    assert html.name == "report.html" and html.is_file() and html.with_name("report.md").is_file()
    assert any(line.startswith("perf: NOT JUDGED: 1 rows timed, 0 judged") for line in lines), out
    assert lines[-1] == "FAIL: exit 1 (a row or a baseline verdict failed); perf rows were timed, not judged"


def _case(name: str, perf: bool = False) -> SimpleNamespace:
    return SimpleNamespace(name=name, table="t/csymm_test.csv", is_perf=perf)


def test_plain_lines_come_every_step_rows_or_after_a_quiet_interval_not_per_row():
    now = [0.0]
    out = io.StringIO()
    progress = Progress({"precision": 250, "perf": 3}, out=out, live=False, clock=lambda: now[0])
    progress.start()
    progress.started(_case("TC_L1_0"))
    for i in range(250):
        now[0] += 0.01
        progress.finished(new_record(f"TC_L1_{i}", "csymm", "t/csymm_test.csv", i + 2, 0) | {"verdict": "PASS"})
    precision = [line for line in out.getvalue().splitlines() if re.match(r"precision \d", line)]
    assert [line.split()[1] for line in precision] == ["100/250", "200/250", "250/250"]
    assert precision[0] == "precision 100/250 (40%) 100.0 rows/s ETA 0m02s failures 0"
    progress.started(_case("TC_PF_1", perf=True))  # a new phase: its own line and counters
    now[0] += 5
    progress.started(_case("TC_PF_2", perf=True))  # quiet for 5 s: no line yet
    now[0] += 6
    progress.started(_case("TC_PF_3", perf=True))  # 11 s without a line: the row being timed is shown
    lines = out.getvalue().splitlines()
    assert lines[-2] == "perf phase: 3 rows"
    assert lines[-1] == "perf 0/3 (0%) 5.5 s/round ETA ~0m03s failures 0 timing csymm_test.csv::TC_PF_3"


def test_the_perf_eta_weighs_rows_by_work_and_predicts_their_rounds():
    """Round 1 of a big row (10 s, over the 0.4 s cap: one round) then cheap rows (0.1 s: rounds until 2.5 x the
    cap, at most 10): the estimate is the cheap rows' remaining rounds, not every row's ten rounds at the big row's
    pace (the old bound: 29 rounds x 10 s; on the main job it said <=9h04m)."""
    from harness.model.settings import TimingConfig

    now = [0.0]
    progress = Progress({"perf": 3}, out=io.StringIO(), live=False, clock=lambda: now[0],
                        timing=TimingConfig(max_time_s=0.4, rounds=10),
                        work={"csymm_test.csv::TC_PF_1": 100 * ROW_OVERHEAD_FLOPS,
                              "csymm_test.csv::TC_PF_2": ROW_OVERHEAD_FLOPS,
                              "csymm_test.csv::TC_PF_3": ROW_OVERHEAD_FLOPS})
    progress.started(_case("TC_PF_1", perf=True))
    assert progress.status().endswith("- s/round ETA ? failures 0 timing csymm_test.csv::TC_PF_1")
    now[0] += 10.0  # the big row's round: a cheap round (a hundredth of its work) is predicted at 0.1 s
    progress.started(_case("TC_PF_2", perf=True))
    # big: 1 round (10 s > cap), done; cheap rows at 0.1 s a round: 10 rounds each (the budget 2.5 x 0.4 s is
    # never spent before the tenth): TC_PF_2 has 9 to go, TC_PF_3 10, plus half of the round in flight = 1.95 s
    assert progress.status() == "perf 0/3 (0%) 10.0 s/round ETA ~0m02s failures 0 timing csymm_test.csv::TC_PF_2"
    for name in ("TC_PF_1", "TC_PF_2", "TC_PF_3"):
        progress.finished(new_record(name, "csymm", "t/csymm_test.csv", 2, 0, is_perf=True) | {"verdict": "PASS"})
    assert " ETA 0m00s " in progress.status()  # every row done: nothing left, whatever rounds were predicted


def test_the_closing_lines_say_the_verdict_exit_code_both_reports_and_an_unjudged_perf_phase():
    records = [new_record("TC_L0_1", "csymm", "t/csymm_test.csv", 2, 0) | {"verdict": "PASS"},
               new_record("TC_PF_1", "csymm", "t/csymm_test.csv", 3, 0, is_perf=True) | {
                   "verdict": "PASS", "timing": {"n": 50, "mean_us": 10.0},
                   "baseline": [{"kind": "taskbook", "verdict": "NO_REF", "value_us": 7.53, "hardware": "Ascend 950PR",
                                 "measured_mean_us": 10.0}]}]
    meta = {"hardware": {"name": "cpu twin (2 emulated cores)"}}
    paths = {"md": Path("r/x/report.md"), "html": Path("r/x/report.html")}
    lines = closing_lines(meta, records, paths, 0)
    assert lines[0].startswith("2 rows: 2 passed, 0 failed")
    assert lines[2] == ("perf: NOT JUDGED: 1 rows timed, 0 judged against a baseline; NO_REF: timed on cpu twin "
                        "(2 emulated cores); task-book limits hold on Ascend 950PR (1 rows)")
    assert "report: r/x/report.md" in lines and "report (HTML): r/x/report.html" in lines
    assert lines[-1] == "PASS: exit 0 (every row passed); perf rows were timed, not judged"
    records[1]["baseline"][0]["verdict"] = "FAIL"  # judged on its hardware: the perf word goes away
    lines = closing_lines({"hardware": {"name": "Ascend 950PR"}}, records, paths | {"junitxml": Path("j.xml")}, 1)
    assert lines[2].startswith("perf: judged: 1 rows timed, 1 judged against a baseline (0 PASS, 1 FAIL")
    assert lines[-2:] == ["JUnit XML: j.xml", "FAIL: exit 1 (a row or a baseline verdict failed)"]


def test_a_first_run_announces_the_twin_compile(monkeypatch, capsys, tmp_path):
    from harness.backends import build
    from harness.commands import run as run_command

    compiled = []
    monkeypatch.setattr(build, "DEFAULT_CACHE_DIR", tmp_path)  # nothing cached here: a first run
    monkeypatch.setattr("harness.run.runner.ensure_twin", lambda: compiled.append(capsys.readouterr().out))
    run_command._build_twin_announced()
    assert compiled == ["compiling the CPU twin (operators/cpu_twin, once per source change) ...\n"]
    assert re.fullmatch(r"compiled the CPU twin in \d+\.\d s\n", capsys.readouterr().out)
    target = tmp_path / build.build_key({}, build.OPERATORS_DIR) / build.LIB_NAME
    target.parent.mkdir(parents=True)
    target.touch()  # built: not a word, no compile
    run_command._build_twin_announced()
    assert capsys.readouterr().out == "" and len(compiled) == 1
