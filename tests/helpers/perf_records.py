"""Synthetic timed runs for the compare tests: perf records with noisy samples (and their rounds), a run's meta,
and a history holding a few runs of one row."""
from __future__ import annotations

import numpy as np

from harness.model.record import new_record
from harness.store.history import History


def rec(name, samples, op="csymm", rounds=0):
    """A perf record; with `rounds`, its samples split into that many rounds as harness.run.runner would merge them."""
    r = new_record(name, op, "cases/csymm_test.csv", 2, 0, is_perf=True)
    r["timing"] = None if samples is None else {"mode": "sync", "n": len(samples), "mean_us": float(np.mean(samples)),
                                                "samples_us": list(map(float, samples))}
    if samples is not None and rounds:
        r["timing"]["rounds"] = [{"p10_us": float(np.percentile(chunk, 10))}
                                 for chunk in np.array_split(np.asarray(samples, dtype=float), rounds)]
    return r


def noisy(rng, center, n=200, spread=0.01):
    return center * (1 + rng.normal(0, spread, n))


def meta(**over):
    m = {"run_id": "r", "backend": "cpu", "inputs": [{"path": "cases/a.csv", "sha256": "1" * 64}],
         "settings": {"timing": {"mode": "sync"}}}
    m.update(over)
    return m


def history_with_runs(tmp_path, rng, centers):
    h = History(tmp_path / "h.sqlite")
    for i, center in enumerate(centers):
        run_id = f"run{i}"
        h.start_run({**meta(run_id=run_id), "commit": "a" * 40, "started": f"2026-01-0{i + 1}",
                     "hardware": {"name": "Ascend 950PR", "detected": "Ascend 950PR", "override": None}})
        h.record(run_id, rec("TC_PF_001", noisy(rng, center), rounds=5))
        h.finish_run(run_id, {"total": 1, "passed": 1})
    return h
