"""The perf phase in rounds: each round of a row on a fresh worker, rows dealt over the devices, goldens kept
between rounds, a row decided as soon as its rounds settle it."""
from __future__ import annotations

from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from harness.model import operators as ops
from harness.run.ahead import ahead_bytes
from harness.model.case import Case
from harness.run.phase import run_phase
from harness.run.process import StopSignals
from harness.run.spares import Spares
from harness.model.settings import Settings
from harness.model.record import Record

if TYPE_CHECKING:
    from harness.run.beside import Beside


def run_perf(perf: list[Case], settings: Settings, devices: list[int], on_record: Callable[[Record], None],
              stop: StopSignals, on_start: Callable[[Case], None] = lambda case: None, tally: dict | None = None,
              beside: Beside | None = None, cpus: set[int] | None = None) -> None:
    """Perf rows in up to `timing.rounds` rounds, each round a fresh worker process (like pyperf), rounds in table
    order so slow machine drift spreads over every row. A row stops early once it has spent its time budget
    (harness.perf.timing.more_rounds: three rounds, one when its first round's calls filled that round). Its record
    goes out after its last round, rounds merged and judged once (harness.perf.verdict.merge_round_records); a row
    that fails, crashes or is not timed leaves at once. Each row keeps one device for all its rounds (rows dealt
    over the devices in table order), and each device runs one row at a time: rows never share a device, and the
    precision phase has ended before, or runs `beside` on other cores than `cpus`, which the timed workers are
    pinned to. Each row's golden is computed once and kept for its later rounds (the judge plans every round's
    buffers from the row's seed: the same inputs)."""
    from harness.perf.verdict import merge_round_records, round_decides
    from harness.perf.timing import calls_fill_round, more_rounds

    config = settings.timing
    rounds = config.rounds if config is not None else 1
    per_round = replace(settings, timing=config.per_round(), timed_rows=True) if config is not None else settings
    if cpus:
        per_round = replace(per_round, cpus=sorted(cpus))
    goldens: dict = {}
    ahead = ahead_bytes(perf, settings.memory_cap)
    by_id = {c.id: c for c in perf}
    taken: dict[str, list[Record]] = {c.id: [] for c in perf}

    def finish(key: str) -> None:
        goldens.pop(key, None)
        on_record(merge_round_records(taken.pop(key), by_id[key], config, settings.baselines, settings.hardware))

    home = {c.id: devices[i % len(devices)] for i, c in enumerate(perf)}

    def spent(key: str) -> float:
        return sum(rec.get("duration_s") or 0.0 for rec in taken[key])

    def last_round(key: str) -> bool:
        """Whether the rounds the row has run are all it gets (harness.perf.timing.more_rounds)."""
        rounds = taken[key]
        return config is None or not more_rounds(len(rounds), spent(key), config,
                                                 calls_fill_round(rounds[0].get("timing") or {}, config))

    def collect(rec: Record) -> None:
        key = f"{Path(rec['table']).name}::{rec['case_name']}"
        if key not in taken:  # a row already finished (its settling pass did not end)
            return
        taken[key].append(rec)
        # decided as soon as its round ends, not at the round's end: its golden is no longer held while the
        # rows after it keep theirs (KEPT_GOLDENS_BYTES), and its record goes out at once
        if round_decides(rec) or last_round(key):
            finish(key)
    todo = list(perf)
    spares = Spares(per_round, tally, goldens, ahead) if Spares.allowed(per_round) else None
    try:
        for r in range(rounds):
            if not todo:
                break
            # A fresh process's first row pays for page faults, thread start-up and caches (measured on the twin:
            # the first row of a round ran ~20 % slow); each round's worker opens with the cheapest row once, untimed.
            settle = min(todo, key=lambda c: (spent(c.id), ops.get(c.op).flops(c.args)
                                              if c.args is not None and ops.get(c.op) else 0))
            queues = {d: deque(c for c in todo if home[c.id] == d) for d in devices}
            run_phase(queues, per_round, devices, collect, stop, settle=settle, on_start=on_start, tally=tally,
                       goldens=goldens, beside=beside, ahead_bytes=ahead, spares=spares)
            for case in [c for c in todo if c.id in taken]:  # rows this round brought no record
                if r == rounds - 1 or last_round(case.id):
                    finish(case.id)
            todo = [c for c in todo if c.id in taken]
    finally:
        if spares is not None:
            spares.kill()
