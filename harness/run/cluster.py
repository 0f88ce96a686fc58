"""Rows on a Ray cluster (`harness run --cluster ray://host:port` or `auto`): Ray places each row on a host with a
free device, the harness on that host runs it in its isolated per-row worker process exactly as a local run does
(harness.run.runner: pidfd, process-tree kill, subreaper), and the record comes back to this process, which alone
writes results.jsonl, the reports and the history: one run whatever the number of hosts.

Why Ray: it schedules Ascend NPUs ("NPU") and NVIDIA GPUs ("GPU") as native resources, assigning each task a device
id and setting the runtime's visibility variable (ASCEND_RT_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES), and it runs a
local cluster on one machine for tests. On the cpu backend the emulated devices are NPU resources a node declares
(`ray start --resources '{"NPU": 4}'`). Each row is one task needing one device, so a device runs one row at a time;
precision rows all finish before the first perf row starts, as locally. A row is the unit of loss: a host that dies
costs the rows it was running, which are re-run on another host `retries` times and otherwise recorded as ERROR,
never the run. Every host needs the harness installed (and the operator library at the same path).
"""
from __future__ import annotations

import logging
import os
import socket
import sys
from dataclasses import replace
from typing import Any, Callable

from harness.run import runner
from harness.model.case import Case
from harness.model.record import Record
from harness.model import untrusted

#: The Ray resource one row needs, per backend: the cpu backend's emulated devices are NPUs too.
RESOURCE = {"cpu": "NPU", "npu": "NPU", "cuda": "GPU"}
_built: set[str] = set()
_CONNECT_S = 10.0
#: How long rows in flight get to stop after a plain cancel before they are force-cancelled.
_CANCEL_S = 10.0


class ClusterUnavailable(Exception):
    """No Ray, no cluster at the address, or no node with the devices rows need; the message is one line."""


def connect(address: str, backend: str) -> dict[str, float]:
    """Join the cluster at `address` (ray://host:port, host:port or auto); its total resources. Checks now that
    some node has the device resource, so a wrong address or an empty cluster is one line before anything runs."""
    try:
        import ray
    except ImportError:
        raise ClusterUnavailable("harness run: --cluster needs Ray: pip install 'ops-blas-harness[cluster]'") from None
    _reachable(address)
    try:
        if not ray.is_initialized():
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
        resources = ray.cluster_resources()
    except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError... for this
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ClusterUnavailable(f"harness run: --cluster {address}: {first}") from None
    if resources.get(RESOURCE[backend], 0) < 1:
        raise ClusterUnavailable(f"harness run: --cluster {address}: no node offers a {RESOURCE[backend]} device "
                                 f"for the {backend} backend (cpu backend: start nodes with "
                                 """--resources '{"NPU": N}')""")
    return resources


def _reachable(address: str) -> None:
    """A host:port that refuses connections is one line within seconds (ray.init would retry it for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    number = untrusted.count(port)
    if address == "auto" or number is None:
        return
    try:
        socket.create_connection((host, number), timeout=_CONNECT_S).close()
    except OSError as exc:
        raise ClusterUnavailable(f"harness run: --cluster {address}: cannot reach {host}:{port} "
                                 f"({exc.strerror or exc})") from None


def match_priority(nice: int) -> int | None:
    """Run this thread (and the row's worker it forks) at the `harness run` process's scheduling priority; None
    when it now does, else the nice value it is left at. Ray starts its workers at nice 15 (`RAY_worker_niceness`),
    where any normal-priority process on the host takes their core: a perf row timed there times the host's other
    work, and on a busy host its rows crawl. Lowering the value needs CAP_SYS_NICE (root, or RLIMIT_NICE)."""
    if os.getpriority(os.PRIO_PROCESS, 0) != nice:
        try:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        except OSError:
            return os.getpriority(os.PRIO_PROCESS, 0)
    return None


def _run_row(case: Case, settings: runner.Settings, nice: int = 0) -> list[Record]:
    """Body of one Ray task: the row in an isolated worker on the device Ray assigned, at the caller's priority
    where the host allows it; its records (one)."""
    import ray

    left_at = match_priority(nice)
    context = ray.get_runtime_context()
    assigned = context.get_accelerator_ids().get(RESOURCE[settings.backend]) or ["0"]
    device = int(assigned[0])
    # Device runtimes see only the assigned device (Ray set the visibility variable): it is their device 0.
    local = device if settings.backend == "cpu" else 0
    if settings.backend == "cpu" and not settings.backend_options.get("operator_lib") and "twin" not in _built:
        runner.ensure_twin()
        _built.add("twin")
    records: list[Record] = []
    runner.run([case], replace(settings, devices=[local]), records.append)
    host = f"{socket.gethostname()}/{context.get_node_id()[:8]}"
    for rec in records:
        rec.update(device=device, host=host)
        if left_at is not None:
            rec["host_nice"] = left_at  # the row ran at a lower priority than `harness run`'s
    return records


def _lost(case: Case, why: str, attempts: int) -> Record:
    rec = case.new_record()
    rec.update(verdict="ERROR", reason=f"the host running this row was lost ({why}) after {attempts} attempt(s); "
                                       "re-run it, or pass --retries")
    return rec


def _failed(case: Case, exc: BaseException) -> Record:
    cause = getattr(exc, "cause", None) or exc
    rec = case.new_record()
    rec.update(verdict="ERROR", reason=f"the harness failed on the Ray host: {type(cause).__name__}: "
                                       f"{(str(cause).strip().splitlines() or [''])[0]}")
    return rec


def run(cases: list[Case], settings: runner.Settings, on_record: Callable[[Record], None], retries: int = 0) -> None:
    """Precision rows on every device of the cluster, then perf rows; records handed out as they arrive. Raises
    runner.Interrupted (after cancelling the tasks in flight) on SIGINT/SIGTERM."""
    import ray

    task = ray.remote(_run_row).options(num_cpus=0, resources={RESOURCE[settings.backend]: 1}, max_retries=0,
                                        retry_exceptions=False, scheduling_strategy="SPREAD")
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    precision = [c for c in cases if not c.is_perf]
    perf = [c for c in cases if c.is_perf]
    with runner.StopSignals() as stop:
        for phase in (precision, perf):
            if phase:
                _run_tasks(task, phase, settings, nice, on_record, retries, stop)


def _run_tasks(task: Any, cases: list[Case], settings: runner.Settings, nice: int,
               on_record: Callable[[Record], None], retries: int, stop: runner.StopSignals) -> None:
    import ray

    pending: dict[Any, tuple[Case, int]] = {task.remote(c, settings, nice): (c, 1) for c in cases}
    try:
        while pending and not stop.signum:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.2)
            for ref in ready:
                case, attempt = pending.pop(ref)
                try:
                    records = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:  # the harness failed on that host (not the operator)
                    on_record(_failed(case, exc))
                    continue
                except ray.exceptions.RayError as exc:  # the host or its Ray worker died: the row was in flight
                    why = type(exc).__name__
                    if attempt <= retries:
                        print(f"\nwarning: {case.id}: the host running it was lost ({why}); re-running it elsewhere "
                              f"(attempt {attempt + 1} of {retries + 1})", file=sys.stderr, flush=True)
                        pending[task.remote(case, settings, nice)] = (case, attempt + 1)
                    else:
                        on_record(_lost(case, why, attempt))
                    continue
                for rec in records:
                    if attempt > 1:
                        rec["attempts"] = attempt
                    on_record(rec)
    finally:
        if pending:
            _cancel(list(pending))
    if stop.signum:
        raise runner.Interrupted(stop.signum)


def _cancel(refs: list[Any]) -> None:
    """Stop rows in flight as a local Ctrl-C does: a plain cancel is a KeyboardInterrupt in the Ray task, whose
    runner then kills the row's worker with its process tree and group. Only what has not stopped within
    _CANCEL_S is force-cancelled: that SIGKILLs the Ray worker and Ray kills its child (the row's worker) outright,
    which orphans whatever the operator forked (seen: a busy child left running under init)."""
    import ray

    for ref in refs:
        ray.cancel(ref, force=False)
    _, left = ray.wait(refs, num_returns=len(refs), timeout=_CANCEL_S)
    for ref in left:
        ray.cancel(ref, force=True)
