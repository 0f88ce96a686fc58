"""Runs many cases in isolated worker processes, so one crashing, hanging or hostile operator costs one row, not the
run, and never the harness's own files.

The operator library is loaded only in workers (harness/run/worker.py), never here: even the backend check runs in a
probe worker with a time limit. Each worker runs cases sent over its pipe. A worker that dies mid-case (segfault,
abort, exit, a SIGKILL we did not send) yields CRASH for that row; one that exceeds the per-row limit is killed and
yields TIMEOUT; one that sends something that is not a well-formed record yields CRASH; either way its whole process
tree is killed and a fresh worker takes the next row. Death is seen through a pidfd (or waitpid polling on kernels
before 5.3), never through the pipe, so a child the operator forked holding the pipe open cannot turn a crash into a
timeout. Each worker is bound to one device (Settings.devices: one worker per device, or `workers` on a single
device) and every record names its device. Precision rows are spread over all workers; perf rows afterwards, one
per device at a time, so timing never shares a device with another row. Every finished record goes to `on_record`
at once. SIGINT/SIGTERM stop dispatching, kill the running rows and raise Interrupted.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Callable

from harness.run.beside import beside_allowed, run_beside
from harness.model.case import Case
from harness.run.phase import devices_of, run_phase
from harness.run.probe import check_backend, ensure_twin
from harness.run.process import Interrupted, StopSignals, subreaper
from harness.run.rounds import run_perf
from harness.model.settings import Settings
from harness.store import job
from harness.model.record import Record

#: What the commands, the plugin, ab, mutants and the cluster use; the parts live by concept beside this module
#: (pyperf's manager split): handle (one worker process), process (fork, pidfd, signals), library (its identity),
#: ahead and spares (planning the next row, starting the next worker), phase (one phase's scheduling), rounds (the
#: perf rounds), beside (precision rows beside the perf phase), probe (the backend check).
__all__ = ["Interrupted", "Settings", "StopSignals", "check_backend", "ensure_twin", "run", "run_in_order"]


def run(cases: list[Case], settings: Settings, on_record: Callable[[Record], None],
        on_start: Callable[[Case], None] = lambda case: None) -> dict[str, Any]:
    """Precision phase in parallel over every device, then the perf phase (one row per device at a time, devices in
    parallel); on the cpu backend with two workers or more on two cores or more, the precision rows run beside
    the perf phase instead (beside_allowed). Records are handed out as they finish, each naming its device, and
    `on_start` hears of each row handed to a worker. Returns the run's tally (harness.store.job). Raises Interrupted
    (after killing every worker) when SIGINT or SIGTERM arrives."""
    precision = [c for c in cases if not c.is_perf]
    perf = [c for c in cases if c.is_perf]
    devices = devices_of(settings)
    slots = devices * max(1, settings.workers) if len(devices) == 1 else devices
    tally = job.new_tally()
    with subreaper(), StopSignals() as stop:
        if precision and perf and beside_allowed(settings, devices):
            run_beside(precision, perf, settings, devices[0], on_record, stop, on_start, tally)
            return job.close(tally)
        if precision:
            shared = deque(precision)
            with job.phase(tally, "precision"):
                run_phase({d: shared for d in devices}, settings, slots, on_record, stop, on_start=on_start,
                           tally=tally)
        if perf:
            with job.phase(tally, "perf"):
                run_perf(perf, settings, devices, on_record, stop, on_start, tally)
    return job.close(tally)


def run_in_order(cases: list[Case], settings: Settings, on_record: Callable[[Record], None]) -> None:
    """Each case once, in order, on one isolated worker, perf rows included and not in rounds: for callers that
    time nothing here (the pytest plugin runs one item at a time)."""
    device = devices_of(settings)[0]
    with subreaper(), StopSignals() as stop:
        run_phase({device: deque(cases)}, settings, [device], on_record, stop)
