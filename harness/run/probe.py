"""The backend check: load the library, create a handle and destroy it in a probe worker within the row's limit,
so the harness never loads the library itself; and which sandbox the run's workers get."""
from __future__ import annotations

import sys
import time
from multiprocessing.connection import wait
from typing import Any

from harness.backends import BackendUnavailable
from harness.run import bwrap
from harness.run.handle import STARTUP_GRACE_S, Garbage, Worker
from harness.run.library import library_provenance
from harness.run.process import Interrupted, StopSignals, subreaper
from harness.model.settings import Settings


#: The most the backend check may take to load the library, create a handle and destroy it (within the row's limit,
#: --timeout, which bounds it first when it is shorter).
PROBE_LIMIT_S = 120.0


def check_backend(settings: Settings) -> dict[str, Any]:
    """Load the library, create a handle and destroy it in a probe worker, within the row's limit (--timeout; at most
    PROBE_LIMIT_S) from the worker's interpreter being up: a library that crashes, exits or hangs doing so is one
    BackendUnavailable line (exit 3), and the harness never loads it.
    SIGINT/SIGTERM meanwhile end the probe (its worker and note directory gone) and raise Interrupted."""
    if settings.backend == "cpu" and not settings.backend_options.get("operator_lib"):
        ensure_twin()  # compiling is not loading: done here, so the probe's time limit is the library's alone
    limit = min(PROBE_LIMIT_S, settings.timeout_s)
    with subreaper(), StopSignals() as stop:
        return _probe(settings, limit, stop)


#: The reasons for running without bubblewrap already said on the console (ab and mutants probe several libraries).
_SAID: set[str] = set()


def _isolation(settings: Settings, layers: Any) -> dict[str, Any]:
    """The run's `isolation` (harness.run.bwrap.isolation) with the layers the probe worker says it applied to
    itself; said once on the console where a cpu run's workers fall back to those layers alone."""
    said = [str(x)[:200] for x in layers][:8] if isinstance(layers, list) else []
    isolation = bwrap.isolation(settings, said)
    if isolation["sandbox"] == "fallback" and settings.backend == "cpu" and isolation["reason"] not in _SAID:
        _SAID.add(isolation["reason"])
        print(f"note: workers run without bubblewrap ({isolation['reason']}); confined by: "
              f"{'; '.join(said) or 'nothing'}", file=sys.stderr, flush=True)
    return isolation


def ensure_twin() -> None:
    """Build the CPU twin if it is missing or stale (here, or on each Ray host before its first row)."""
    from harness.backends.build import BuildError, build_twin

    try:
        build_twin()
    except BuildError as exc:
        raise BackendUnavailable(f"cpu backend: {exc}") from exc


def _probe(settings: Settings, limit: float, stop: StopSignals) -> dict[str, Any]:
    w = Worker(settings)
    stage = "loading the library and creating a handle"
    try:
        deadline = time.monotonic() + limit + STARTUP_GRACE_S
        w.conn.send(None)  # after "ready": close the backend (aclblasDestroy) and report "closed"
        info: dict = {}
        while True:
            if stop.signum:
                raise Interrupted(stop.signum)
            left = deadline - time.monotonic()
            if left <= 0:
                raise BackendUnavailable(f"{settings.backend} backend: the operator library did not finish "
                                         f"{stage} within {limit:g} s")
            if w.conn not in wait(w.waitables(), timeout=min(left, 0.2)):
                if w.dead():
                    raise BackendUnavailable(f"{settings.backend} backend: the operator library killed the probe "
                                             f"worker while {stage} ({w.how_it_died()})")
                continue
            try:
                message = w.receive()
                if message is None:
                    continue
                kind, payload = message
            except Garbage as exc:
                why = w.how_it_died() if w.status is not None else f"protocol garbage: {exc}"
                raise BackendUnavailable(f"{settings.backend} backend: the operator library killed the probe "
                                         f"worker while {stage} ({why})") from None
            if kind == "started":
                deadline = time.monotonic() + limit
            elif kind == "unavailable":
                raise BackendUnavailable(str(payload)[:500])
            elif kind == "ready":
                info = dict(payload) if isinstance(payload, dict) else {}
                info.pop("judge", None)
                info.update(library_provenance(settings))  # as the harness read the file, not as the worker says
                info["isolation"] = _isolation(settings, info.get("confinement"))
                stage = "destroying its handle (aclblasDestroy)"
            elif kind == "closed":
                return info
    finally:
        w.kill()
