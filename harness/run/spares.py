"""Spare workers: the next worker of each device started while a row is timed, so a round begins on a ready
process."""
from __future__ import annotations

import os
import sys
import time

from harness.run.ahead import Ahead
from harness.run.handle import STARTUP_GRACE_S, Garbage, Worker
from harness.model.settings import Settings


class Spares:
    """The next worker of each device, started early: while a row is timed, a spare forked on the judge's cores
    does its interpreter start-up, imports and backend open (nothing that depends on a row), so the next round, or
    the worker replacing a failed one, begins on a ready process instead of ~4 s of start-up with the timed core
    idle. A spare has run no operator call before its row (rounds stay fresh processes). It is started only once
    its device's worker has said "ready" (the library loaded and was checked the same way), holds no row's buffers
    (within --memory-cap like any idle worker), is bounded like a row's start-up (timeout + STARTUP_GRACE_S) and is
    killed with the run. One that dies unused is replaced silently; after MAX_DEATHS in a row, spares stop (said
    once) and workers start at hand-over as before, where a worker that cannot start fails its row as ever."""

    MAX_DEATHS = 3

    def __init__(self, settings: Settings, tally: dict | None, goldens: dict, ahead: float):
        self.settings, self.tally, self.goldens, self.ahead = settings, tally, goldens, ahead
        self.idle: dict[int, Worker] = {}
        self.deaths = 0

    @staticmethod
    def allowed(settings: Settings) -> bool:
        """Where timed workers have cores of their own and the judge others to start a spare on."""
        return (bool(settings.cpus) and getattr(settings, "service", None) is None
                and bool(os.sched_getaffinity(0) - set(settings.cpus)))

    def start(self, device: int) -> None:
        """A spare for `device`, unless it has one, or a row is being planned (fork would wait for it: the next
        call, a loop turn later, starts it)."""
        if self.deaths < self.MAX_DEATHS and device not in self.idle and not Ahead.running():
            w = self.idle[device] = Worker(self.settings, device, spare=True)
            w.tally, w.goldens, w.ahead_bytes = self.tally, self.goldens, self.ahead

    def take(self, settings: Settings, device: int) -> Worker | None:
        """The device's spare for a row of `settings`, if it is alive (then the next one may be started)."""
        w = self.idle.pop(device, None)
        if w is not None and (w.given is not settings or w.dead()):
            self._drop(w)
            return None
        if w is not None:
            self.deaths = 0
        return w

    def waitables(self) -> list:
        return [x for w in self.idle.values() for x in w.waitables()]

    def pump(self, ready: list) -> None:
        """The spares' start-up messages ("started", "ready"); one that says anything else, dies or takes longer
        than a row's start-up may is dropped."""
        now = time.monotonic()
        for w in list(self.idle.values()):
            try:
                if w.conn in ready and (message := w.receive()) is not None:
                    w.handle(*message)
                elif not w.dead() and now - w.since <= self.settings.timeout_s + (0 if w.started else
                                                                                    STARTUP_GRACE_S):
                    continue
                else:
                    self._drop(w)
            except Garbage:
                self._drop(w)

    def _drop(self, w: Worker) -> None:
        self.idle.pop(w.device, None)
        self.deaths += 1
        if self.deaths == self.MAX_DEATHS:
            print(f"\nwarning: {self.deaths} spare workers in a row ended before their first row "
                  f"(the last: {w.how_it_died()}); workers start when a row needs one instead", file=sys.stderr,
                  flush=True)
        w.kill()

    def kill(self) -> None:
        for w in list(self.idle.values()):
            w.kill()
        self.idle.clear()
