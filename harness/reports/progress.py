"""What a run shows while it runs: phase (precision, then perf), rows done of total, rate, ETA, failures so far
and, in the perf phase, the row being timed; at the end, the closing lines (counts, where the reports are, the
verdict word and exit code).

Perf rows run in rounds (a fresh process each, every row's round 1 before any round 2) and finish only after their
last one, so the perf ETA is an estimate (`ETA ~`) from the work the row-rounds started so far took: a row's work
is its FLOP count plus a fixed set-up share (ROW_OVERHEAD_FLOPS), which turns the measured seconds per work unit
into a predicted time per round for every row, big or small, from the first finished row-round on; each row's
rounds are predicted with the runner's own rule (harness.perf.timing.more_rounds), so a row whose round exceeds its cap
counts once and a cheap row counts its extra rounds.

On a terminal a rich live display redraws in place; anywhere else (CI logs, pipes) plain lines, one per phase
start, every failing row, and a status line at most every PLAIN_EVERY_S seconds or STEP rows, so a log stays
readable and still shows a run is alive during 20 s perf rows.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable, TextIO

from harness.model.record import DISPUTED, FAILING, Record

PLAIN_EVERY_S = 10.0
#: A perf row-round's fixed cost (fill, golden, checks, warm-up) in FLOP-equivalents of a row's own work. Measured
#: on the main job (twin, 2 loaded cores, 406 perf rows): a row under 1e7 FLOPs took 0.27 s a round (median), a row
#: over 1e10 FLOPs 2.6e-10 s per FLOP, so the fixed part weighs as much as ~1e9 FLOPs.
ROW_OVERHEAD_FLOPS = 1e9
#: Plain status lines come at least every STEP rows (and at a phase's last row).
STEP = 100
PHASES = ("precision", "perf")


#: What each exit code means, for the last line of a run (the report says the same in Chinese).
EXIT_WORDS = {0: "every row passed", 1: "a row or a baseline verdict failed",
              2: "nothing failed, but the evidence is insufficient"}


def closing_lines(meta: dict[str, Any], records: list[Record], paths: dict[str, Path], code: int,
                  accepted: bool = False) -> list[str]:
    """The last lines of a run: counts per verdict, precision / perf / memory (perf says when it was not judged
    and why), where the reports are, and last the verdict word with the exit code."""
    from harness.reports import overview

    counts = overview.counts(records, meta["hardware"]["name"])
    lines = [overview.outcome_line(counts["cases"], accepted), *overview.count_lines(counts), *skip_lines(records),
             f"report: {paths.get('md', '')}", f"report (HTML): {paths.get('html', '')}"]
    if paths.get("junitxml"):
        lines.append(f"JUnit XML: {paths['junitxml']}")
    unjudged = "; perf rows were timed, not judged" if counts["timed"] and not overview.perf_judged(counts) else ""
    lines.append(f"{overview.verdict_word(code)}: exit {code} ({EXIT_WORDS.get(code, '')}){unjudged}")
    return lines


def skip_lines(records: list[Record], groups: int = 5, examples: int = 3) -> list[str]:
    """Why rows were skipped: one line per reason, most rows first, naming the first few (report.md lists every
    reason; a run whose rows were skipped must not leave the reader to guess why)."""
    by_reason: dict[str, list[str]] = {}
    for rec in records:
        if rec["verdict"] == "SKIP":
            by_reason.setdefault(rec.get("reason") or "no reason given", []).append(rec["case_name"])
    ranked = sorted(by_reason.items(), key=lambda item: -len(item[1]))
    lines = [f"skipped {len(names)}: {reason} ({', '.join(names[:examples])}{', ...' if len(names) > examples else ''})"
             for reason, names in ranked[:groups]]
    if len(ranked) > groups:
        lines.append(f"skipped {sum(len(n) for _, n in ranked[groups:])} more for {len(ranked) - groups} other "
                     "reasons (report.md lists them)")
    return lines


def failure_line(rec: Record) -> str:
    return f"[{rec['verdict']}] {Path(rec['table']).name}::{rec['case_name']}: {rec['reason']}"


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    """Counts per phase and the failures so far (state), drawn live on a terminal or as plain lines."""

    def __init__(self, totals: dict[str, int], out: TextIO | None = None, live: bool | None = None,
                 clock: Callable[[], float] = time.monotonic, timing: Any = None,
                 work: dict[str, float] | None = None):
        self.totals = {p: n for p, n in totals.items() if n}
        self.done = {p: 0 for p in self.totals}
        self.failures = 0
        self.timing, self.work = timing, dict(work or {})
        self.rounds = timing.rounds if timing is not None else 1
        #: perf rows: rounds started per row, rows finished, work of the row-rounds done and of the one in flight
        self.starts: dict[str, int] = {}
        self.perf_finished: set[str] = set()
        self.work_done = self.work_in_flight = 0.0
        self.phase, self.row, self.out, self.clock = "", "", out or sys.stdout, clock
        self.phase_start = self.last_line = clock()
        self.began: dict[str, float] = {}  # when each phase first had a row
        self.live = self.out.isatty() if live is None else live
        self._rich: Any = None
        self._tasks: dict[str, Any] = {}

    @classmethod
    def for_cases(cls, cases: list[Any], timing: Any = None, out: TextIO | None = None) -> Progress:
        perf = [c for c in cases if c.is_perf]
        return cls({"precision": len(cases) - len(perf), "perf": len(perf)}, out, timing=timing,
                   work={_key(c.table, c.name): _work(c) for c in perf})

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
            key = _key(case.table, case.name)
            self.starts[key] = self.starts.get(key, 0) + 1
            self.work_done += self.work_in_flight
            self.work_in_flight = self._work_of(key)
            self.row = f"timing {key}"
            self._show()

    def finished(self, rec: Record) -> None:
        phase = "perf" if rec["is_perf"] else "precision"
        self._enter(phase)
        self.done[phase] = self.done.get(phase, 0) + 1
        if phase == "perf":
            self.perf_finished.add(_key(rec["table"], rec["case_name"]))
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
        if self.phase == "perf":
            return self._perf_rate_eta(elapsed)
        if done == 0 or elapsed <= 0:
            return "- rows/s", "?"
        per_s = done / elapsed
        rate = f"{per_s:.1f} rows/s" if per_s >= 1 else f"{elapsed / done:.1f} s/row"
        return rate, duration((total - done) / per_s)

    def _perf_rate_eta(self, elapsed: float) -> tuple[str, str]:
        """Seconds per row-round so far, and the estimated time left: every unfinished row's remaining rounds at
        its predicted round time (seconds per work unit so far x its work)."""
        rounds_done = sum(self.starts.values()) - 1  # the one started last is still running
        if self.done.get("perf", 0) >= self.totals.get("perf", 0):
            return (f"{elapsed / max(rounds_done + 1, 1):.1f} s/round", duration(0))
        if rounds_done <= 0 or self.work_done <= 0 or elapsed <= 0:
            return "- s/round", "?"
        per_work = elapsed / self.work_done
        left = 0.0
        for key in self._perf_keys():
            if key in self.perf_finished:
                continue
            round_s = per_work * self._work_of(key)
            left += max(self._rounds_for(round_s) - self.starts.get(key, 0), 0) * round_s
        left += per_work * self.work_in_flight / 2  # the row in flight: half of it, on average, still to go
        return f"{elapsed / rounds_done:.1f} s/round", "~" + duration(left)

    def _perf_keys(self) -> list[str]:
        return list(self.work) if self.work else list(self.starts)

    def _work_of(self, key: str) -> float:
        return self.work.get(key, ROW_OVERHEAD_FLOPS)

    def _rounds_for(self, round_s: float) -> int:
        """How many rounds a row whose rounds take round_s each gets (harness.perf.timing.more_rounds' rule)."""
        if self.timing is None or self.rounds <= 1:
            return 1
        from harness.perf.timing import more_rounds

        done = 1  # a predicted round past the row's whole cap stands for calls that fill a round (calls_fill_round
        # reads that from the first round's samples, which a prediction does not have)
        while more_rounds(done, done * round_s, self.timing, round_s > self.timing.max_time_s):
            done += 1
        return done

    def _enter(self, phase: str) -> None:
        if phase == self.phase:
            return
        self.phase, self.row = phase, ""
        if phase in self.began:  # the phases interleave (precision rows beside the perf phase): one start each
            self.phase_start = self.began[phase]
            return
        self.phase_start = self.last_line = self.began[phase] = self.clock()
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


def _key(table: str, name: str) -> str:
    return f"{Path(table).name}::{name}"


def _work(case: Any) -> float:
    """A perf row's work per round for the ETA: its FLOP count (the operator package's) plus the fixed share."""
    from harness.model import operators as ops

    spec = ops.get(case.op) if getattr(case, "args", None) is not None else None
    return (float(spec.flops(case.args)) if spec is not None else 0.0) + ROW_OVERHEAD_FLOPS


class _Null:
    """A stream for sessions that show nothing (ab prints its own lines; the pytest plugin has pytest's)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
