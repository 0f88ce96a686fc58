"""The perf phase's workers are forked by the run's zygote inside the sandbox (harness/run/zygote.py): it has
imported the worker's code and never loads the operator library; each forked worker loads it, runs its row and
ends. On 97cae2d every timed worker was a fresh interpreter under its own bwrap (the warden's child)."""
from __future__ import annotations

import os
import time
from multiprocessing.connection import wait
from pathlib import Path

import pytest

from harness.model.settings import Settings, TimingConfig
from harness.run import bwrap, handle, proctree, runner, zygotes

needs_bwrap = pytest.mark.skipif(not bwrap.binary() or bool(bwrap.probe(bwrap.binary())),
                                 reason="requires bubblewrap with user namespaces (bwrap)")


def _ready(w: handle.Worker, limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while w.info is None:
        assert time.monotonic() < deadline, "the worker did not say ready"
        wait(w.waitables(), timeout=1.0)
        if (message := w.receive()) is not None:
            w.handle(*message)


def _maps(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return ""


def _library_holders(root: int, library: str) -> list[int]:
    """The processes below `root` that have the library mapped."""
    return [p for p in proctree.descendants(root) if library in _maps(p)]


@needs_bwrap
@pytest.mark.parametrize("zygote", [True, False])
def test_a_timed_worker_is_forked_by_the_zygote_which_never_loads_the_library(monkeypatch, zygote):
    if not zygote:
        monkeypatch.setenv(zygotes.OFF_VARIABLE, "1")  # the negative control: a fresh interpreter, as before
    runner.ensure_twin()
    settings = Settings(timing=TimingConfig(), timed_rows=True, timeout_s=60.0)
    with zygotes.running():
        w = handle.Worker(settings)
        try:
            _ready(w)
            library = os.path.realpath(w.library.path)
            running = list(zygotes._RUNNING.values())
            if zygote:
                (z,) = running
                assert proctree.children(w.pid) == []  # the warden started no interpreter of its own
                (holder,) = _library_holders(z.pid, library)  # the forked worker alone
                parent = proctree.parent_of(holder)  # the zygote: it forked the worker, and has no library
                assert b"harness.run.zygote" in Path(f"/proc/{parent}/cmdline").read_bytes()
                assert library not in _maps(parent)
            else:
                assert running == [] and proctree.children(w.pid) != []  # its warden runs bwrap
                assert _library_holders(w.pid, library)
        finally:
            w.kill()
    assert zygotes._RUNNING == {}  # the run's zygote ended with it
