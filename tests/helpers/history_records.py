"""A history filled by tests: run metas, perf records with their samples, and the writer processes that the
concurrency and SIGKILL tests start on SQLite and on PostgreSQL."""
import multiprocessing as mp
import os
import signal

from harness.model.record import new_record
from harness.store.history import History


def meta(run_id, commit="a" * 40, started="2026-01-01T00:00:00", dirty=False):
    return {"run_id": run_id, "commit": commit, "dirty": dirty, "branch": "main", "backend": "cpu",
            "device": "cpu-twin", "host": {"hostname": "box", "cpus": 2},
            "inputs": [{"path": "cases/csymm_test.csv", "sha256": "ab" * 32}],
            "settings": {"timing_mode": "sync"}, "started": started}


def perf_record(name, median=10.0, table="cases/csymm_test.csv", line=2, op="csymm", n=50):
    rec = new_record(name, op, table, line, 0, is_perf=True, params={"m": 4})
    samples = [median + (i % 5) * 0.1 for i in range(n)]
    rec.update(verdict="PASS", status=0, timing={
        "mode": "sync", "n": n, "warmup": 10, "mean_us": sum(samples) / n, "median_us": median, "min_us": median,
        "p90_us": median, "stdev_us": 0.1, "ci95_us": [median - 0.1, median + 0.1], "samples_us": samples,
        "converged": True, "outliers": {"low": 0, "high": 0, "rule": "Tukey 1.5 IQR"}, "stop_reason": "ci_target"})
    return rec


def writer(path, run_id, count, go):
    """A forked process's writer (its own connection): `count` perf rows into `run_id` once `go` is set."""
    h = History(path)
    go.wait(30)                  # both writers start together, so their transactions really contend
    for i in range(count):
        h.record(run_id, perf_record(f"TC_PF_{i:03d}", line=i + 2))


def endless_writer(path, conn):
    """Perf rows into run r1 until the process is killed, each row's index sent on `conn` once it is stored."""
    h = History(path)
    i = 0
    while True:
        h.record("r1", perf_record(f"TC_PF_{i:05d}", line=i + 2, n=1000))
        conn.send(i)                 # only after record() returned: this row is finished
        i += 1


def kill_writer_halfway(location, stall_s: float) -> list[int]:
    """Start `endless_writer` on run r1 of `location` (forked), SIGKILL it after 30 finished rows and return the
    index of every row it reported finished (each at most `stall_s` apart, else the writer stalled)."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=endless_writer, args=(location, child))
    p.start()
    finished = []
    while len(finished) < 30:
        assert parent.poll(stall_s), "writer stalled"
        finished.append(parent.recv())
    os.kill(p.pid, signal.SIGKILL)
    p.join()
    while parent.poll():
        finished.append(parent.recv())
    return finished
