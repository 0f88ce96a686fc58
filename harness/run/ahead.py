"""Planning the next row while the row before it is timed: its RowJudge made in a thread on the judge's own cores,
within a memory bound that keeps the run's peak that of its largest row."""
from __future__ import annotations

import os
import threading
from typing import Callable

from harness.model.case import Case
from harness.run.buffers import footprint_bytes
from harness.run.engine import RowJudge

#: A row is planned ahead only while its footprint and that of the row being timed fit in this together (two rows'
#: buffers are then held at once), or in the footprint of the perf phase's largest row where that is more
#: (ahead_bytes): the run's peak memory stays that of its largest row.
AHEAD_BYTES = 1 << 30


class Ahead:
    """The next row's RowJudge, made in a thread of the judge while the row before it is timed (state: the
    thread and what it made). The thread runs on the judge's own cores (`cpus`, set by the thread: the main thread
    may be on the timed cores too just then); `take` lets a plan that is still running onto the timed cores as
    well, for the rest of it, once no row is timed there (the worker waits for this very row). In the main job's
    first perf round the judge's planning (a large row's golden: seconds) took one core shared with the precision
    rows while the timed core waited idle."""

    THREAD = "plan-ahead"

    @staticmethod
    def running() -> list[threading.Thread]:
        """The threads planning a row now."""
        return [t for t in threading.enumerate() if t.name == Ahead.THREAD]

    def __init__(self, case: Case, make: Callable[[], RowJudge], cpus: set[int]):
        self.case = case
        self.judge: RowJudge | None = None
        self.thread = threading.Thread(target=self._make, args=(make, cpus), name=self.THREAD, daemon=True)
        self.thread.start()

    def _make(self, make: Callable[[], RowJudge], cpus: set[int]) -> None:
        os.sched_setaffinity(0, cpus)  # the judge's cores, whatever the thread that started it had just then
        self.judge = make()  # RowJudge turns every planning error into its row's ERROR record

    def take(self, idle_cpus: set[int]) -> RowJudge | None:
        """The planned RowJudge once the thread has made it (None if the thread failed), the thread allowed onto
        `idle_cpus` meanwhile."""
        if idle_cpus and self.thread.is_alive():
            try:
                os.sched_setaffinity(self.thread.native_id, os.sched_getaffinity(0) | idle_cpus)
            except OSError:  # it ended in between
                pass
        self.thread.join()
        return self.judge


def ahead_bytes(cases: list[Case], memory_cap: int) -> float:
    """The bound of planning a row ahead in a phase of `cases`: AHEAD_BYTES, or the largest footprint of a row
    within `memory_cap` (a row over it is refused unplanned) where that is more, so the two rows held at once
    never need more memory than that row alone. On the main job 1 GiB left 11 of its 405 pairs of consecutive
    perf rows planned one after the other, 3-5 s of the judge's planning (golden) per large row with the timed
    core idle."""
    return max([AHEAD_BYTES, *(f for f in map(row_footprint, cases) if f <= memory_cap)])


def row_footprint(case: Case | None) -> float:
    """A row's estimated harness footprint (harness.run.memory); infinite for one that cannot be planned."""
    try:
        if case is not None and case.args is not None and not case.skip and not case.errors:
            return footprint_bytes(case)
    except (ValueError, OverflowError, AttributeError, TypeError):
        pass
    return float("inf")
