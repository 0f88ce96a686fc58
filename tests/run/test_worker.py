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


def test_a_timed_worker_does_not_import_scipy_stats():
    """Every perf row-round starts a fresh worker: what it imports is paid per row (scipy.stats: ~1.3 s of CPU at
    start-up, benchmarks/worker_start.py). The imports of a timed worker's start-up and of its timed loop and
    summary, in a fresh interpreter."""
    import subprocess
    import sys

    code = ("import sys; from harness.run import worker; from harness.model.settings import Settings, TimingConfig; "
            "from harness.perf.timing import timing_record; "
            "worker._preload(worker.Rows(), Settings(timing=TimingConfig(), timed_rows=True)); "
            "timing_record([1e-3 * (1 + (i % 7) / 10) for i in range(90)], TimingConfig(), 3, True, 'max_samples'); "
            "print(sorted(m for m in sys.modules if m.startswith('scipy.stats')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout


def test_a_worker_starts_with_one_openblas_thread_and_its_library_sees_the_users_environment(monkeypatch):
    """harness.run.process.worker_env: numpy's OpenBLAS is imported with one thread (its threads spin at start-up,
    and a worker computes no product), and the variable is gone, from os.environ and the C library's environment,
    once the worker enters; a value the user set is theirs, passed on and kept."""
    import subprocess
    import sys

    from harness.run.process import worker_env

    code = ("import ctypes, json, os; from harness.run import worker; from threadpoolctl import threadpool_info; "
            "threads = [p['num_threads'] for p in threadpool_info() if p['internal_api'] == 'openblas']; "
            "before = os.environ.get('OPENBLAS_NUM_THREADS'); "
            "getattr(worker, os.environ.get('TEST_ENTER', 'drop_start_env'))(); "
            "libc = ctypes.CDLL(None); libc.getenv.restype = ctypes.c_char_p; "
            "print(json.dumps([threads, before, os.environ.get('OPENBLAS_NUM_THREADS'), "
            "libc.getenv(b'OPENBLAS_NUM_THREADS') and 1, worker.START_ONLY_VARIABLE in os.environ]))")

    def start(enter: str = "drop_start_env") -> list:
        env = {**os.environ, **dict(worker_env()), "TEST_ENTER": enter}
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    threads, before, after, in_libc, marker = start()
    assert threads and set(threads) == {1} and before == "1"
    assert after is None and in_libc is None and marker is False
    # negative control: an interpreter that never drops them keeps both
    _, _, after, in_libc, marker = start(enter="own_pid")
    assert after == "1" and in_libc == 1 and marker is True
    mine = str(min(2, os.cpu_count() or 1))  # the user's own setting (OpenBLAS takes at most the cores it sees)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", mine)
    threads, before, after, _, _ = start()
    assert set(threads) == {int(mine)} and before == after == mine
