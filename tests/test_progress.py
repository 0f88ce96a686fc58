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

from harness.progress import Progress
from harness.record import new_record
from tables import csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[1]
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


def test_a_pipe_gets_plain_status_lines(tmp_path, toy_lib):
    result = subprocess.run(_argv(tmp_path, toy_lib), cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert not ANSI.search(out) and "\r" not in out, repr(out)
    lines = out.splitlines()
    assert "precision phase: 3 rows" in lines and "perf phase: 1 rows" in lines
    assert any(re.fullmatch(r"precision 3/3 \(100%\) \S+ (rows/s|s/row) ETA \S+ failures 1", line)
               for line in lines), out
    assert any(re.fullmatch(r"perf 1/1 \(100%\) \S+ (rows/s|s/row) ETA \S+ failures 1 "
                            r"timing csymm_test\.csv::TC_PF_0001", line) for line in lines), out
    assert any(line.startswith("[FAIL] csymm_test.csv::TC_L0_bad: ") for line in lines)


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
    assert lines[-1] == "perf 0/3 (0%) - rows/s ETA ? failures 0 timing csymm_test.csv::TC_PF_3"


def test_perf_rows_in_rounds_get_a_rate_per_round_and_an_upper_bound_eta():
    now = [0.0]
    out = io.StringIO()
    progress = Progress({"perf": 2}, out=out, live=False, clock=lambda: now[0], rounds=10)
    progress.started(_case("TC_PF_1", perf=True))
    for name in ("TC_PF_2", "TC_PF_1", "TC_PF_2"):  # rounds 1-2 of both rows; nothing finished yet
        now[0] += 2
        progress.started(_case(name, perf=True))
    assert progress.status() == "perf 0/2 (0%) 2.0 s/round ETA <=0m34s failures 0 timing csymm_test.csv::TC_PF_2"
