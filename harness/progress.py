"""What a run shows while it runs: phase (precision, then perf), rows done of total, rate, ETA, failures so far
and, in the perf phase, the row being timed. Perf rows run in rounds (a fresh process each) and finish only after
their last one, so the perf phase's rate and ETA count row-rounds started, and the ETA is an upper bound (`ETA <=`:
a row whose time budget is spent stops before its last round).

On a terminal a rich live display redraws in place; anywhere else (CI logs, pipes) plain lines, one per phase
start, every failing row, and a status line at most every PLAIN_EVERY_S seconds or STEP rows, so a log stays
readable and still shows a run is alive during 20 s perf rows.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable, TextIO

from harness.record import DISPUTED, FAILING, Record

PLAIN_EVERY_S = 10.0
#: Plain status lines come at least every STEP rows (and at a phase's last row).
STEP = 100
PHASES = ("precision", "perf")


def failure_line(rec: Record) -> str:
    return f"[{rec['verdict']}] {Path(rec['table']).name}::{rec['case_name']}: {rec['reason']}"


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    """Counts per phase and the failures so far (state), drawn live on a terminal or as plain lines."""

    def __init__(self, totals: dict[str, int], out: TextIO | None = None, live: bool | None = None,
                 clock: Callable[[], float] = time.monotonic, rounds: int = 1):
        self.totals = {p: n for p, n in totals.items() if n}
        self.done = {p: 0 for p in self.totals}
        self.failures = 0
        self.rounds, self.perf_starts = rounds, 0
        self.phase, self.row, self.out, self.clock = "", "", out or sys.stdout, clock
        self.phase_start = self.last_line = clock()
        self.live = self.out.isatty() if live is None else live
        self._rich: Any = None
        self._tasks: dict[str, Any] = {}

    @classmethod
    def for_cases(cls, cases: list[Any], rounds: int = 1, out: TextIO | None = None) -> Progress:
        perf = sum(1 for c in cases if c.is_perf)
        return cls({"precision": len(cases) - perf, "perf": perf}, out, rounds=rounds)

    @classmethod
    def quiet(cls) -> Progress:
        return cls({}, out=_Null())

    def start(self) -> None:
        if not self.live or not self.totals:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress as Live, TextColumn, TimeElapsedColumn

        self._rich = Live(TextColumn("{task.description:>9}"), BarColumn(bar_width=30), MofNCompleteColumn(),
                          TextColumn("{task.fields[rate]}"), TextColumn("ETA {task.fields[eta]}"),
                          TimeElapsedColumn(), TextColumn("[red]{task.fields[failed]}"),
                          TextColumn("{task.fields[row]}"),
                          console=Console(file=self.out, force_terminal=True), refresh_per_second=4, transient=False)
        for phase, total in self.totals.items():
            self._tasks[phase] = self._rich.add_task(phase, total=total, start=False, rate="", eta="?", failed="",
                                                     row="")
        self._rich.start()

    def started(self, case: Any) -> None:
        phase = "perf" if case.is_perf else "precision"
        self._enter(phase)
        if phase == "perf":
            self.perf_starts += 1
            self.row = f"timing {Path(case.table).name}::{case.name}"
            self._show()

    def finished(self, rec: Record) -> None:
        phase = "perf" if rec["is_perf"] else "precision"
        self._enter(phase)
        self.done[phase] = self.done.get(phase, 0) + 1
        if rec["verdict"] in FAILING or rec["verdict"] == DISPUTED:
            self.failures += rec["verdict"] in FAILING
            self._print(failure_line(rec))
        done = self.done[phase]
        self._show(due=done == self.totals.get(phase) or done % STEP == 0)

    def stop(self) -> None:
        if self._rich is not None:
            self._rich.stop()
            self._rich = None

    def status(self) -> str:
        """The plain status line: what a live display shows, in words."""
        done, total = self.done.get(self.phase, 0), self.totals.get(self.phase, 0)
        rate, eta = self._rate_eta()
        return (f"{self.phase} {done}/{total} ({100 * done // max(total, 1)}%) {rate} ETA {eta} "
                f"failures {self.failures}" + (f" {self.row}" if self.phase == "perf" and self.row else ""))

    def _rate_eta(self) -> tuple[str, str]:
        done, total = self.done.get(self.phase, 0), self.totals.get(self.phase, 0)
        elapsed = self.clock() - self.phase_start
        if self.phase == "perf" and self.rounds > 1:
            return self._rounds_rate_eta(elapsed)
        if done == 0 or elapsed <= 0:
            return "- rows/s", "?"
        per_s = done / elapsed
        rate = f"{per_s:.1f} rows/s" if per_s >= 1 else f"{elapsed / done:.1f} s/row"
        return rate, duration((total - done) / per_s)

    def _rounds_rate_eta(self, elapsed: float) -> tuple[str, str]:
        """Perf rate and ETA by row-rounds: the one started last is still running."""
        finished = self.perf_starts - 1
        if finished <= 0 or elapsed <= 0:
            return "- s/round", "?"
        per_round = elapsed / finished
        left = self.totals.get("perf", 0) * self.rounds - finished
        return f"{per_round:.1f} s/round", "<=" + duration(max(left, 0) * per_round)

    def _enter(self, phase: str) -> None:
        if phase == self.phase:
            return
        self.phase, self.row = phase, ""
        self.phase_start = self.last_line = self.clock()
        if self._rich is not None:
            self._rich.start_task(self._tasks[phase])
        else:
            self._print(f"{phase} phase: {self.totals.get(phase, 0)} rows")

    def _show(self, due: bool = False) -> None:
        if self._rich is not None:
            rate, eta = self._rate_eta()
            self._rich.update(self._tasks[self.phase], completed=self.done.get(self.phase, 0), rate=rate, eta=eta,
                              failed=f"{self.failures} failed" if self.failures else "", row=self.row)
            return
        now = self.clock()
        if due or now - self.last_line >= PLAIN_EVERY_S:
            self.last_line = now
            self._print(self.status())

    def _print(self, line: str) -> None:
        if self._rich is not None:
            self._rich.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=self.out, flush=True)


class _Null:
    """A stream for sessions that show nothing (ab prints its own lines; the pytest plugin has pytest's)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
