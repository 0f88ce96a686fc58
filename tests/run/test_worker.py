"""harness/run/worker.py on its own: what it puts back after a row, its message encoding, its own pid in /proc terms."""
from __future__ import annotations

import json
import os

from harness.run import worker


def test_restore_puts_back_priority_and_affinity_and_says_so():
    before = worker.snapshot()
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[0]})
    changed = worker.restore(before)
    if len(cpus) > 1:
        assert changed == [f"changed its CPU affinity to [{cpus[0]}]"]
    assert sorted(os.sched_getaffinity(0)) == cpus
    assert worker.restore(before) == []  # negative control: nothing changed, nothing said


def test_messages_are_json_even_for_sets(tmp_path):
    import multiprocessing as mp

    a, b = mp.Pipe()
    worker.send(a, "record", {"gates": frozenset({"b", "a"}), "n": 1})
    assert json.loads(b.recv_bytes()) == ["record", {"gates": ["a", "b"], "n": 1}]


def test_own_pid_is_the_pid_proc_names():
    assert worker.own_pid() == os.getpid()  # outside a PID namespace both agree
