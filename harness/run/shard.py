"""Deterministic sharding (`harness run --shard i/N`) for CI systems that split the work themselves: shard i of N
takes every N-th row of the selected rows in table order, starting with the i-th, so N shards cover each row exactly
once and spread precision and perf rows alike; `harness merge` puts their results back into one run."""
from __future__ import annotations

from pathlib import Path

from harness.store import provenance
from harness.model.case import Case
from harness.model.meta import RESULTS
from harness.store.stored import read_path


def select(cases: list[Case], shard: tuple[int, int]) -> list[Case]:
    index, count = shard
    return cases[index - 1::count]


def label(shard: tuple[int, int]) -> str:
    return f"{shard[0]}/{shard[1]}"


class MergeError(Exception):
    """Shard reports that cannot be one run (different inputs, commits or shard counts, a row twice, no report);
    the message is the one line printed (exit 3)."""


def load_shard(report_dir: Path) -> tuple[dict, list[dict]]:
    """A shard's meta and its records (results.jsonl: every finished row, even when the shard was interrupted),
    read by the one reader (harness.store.stored: a damaged file is its BadRun, one line)."""
    if not (Path(report_dir) / RESULTS).is_file():
        raise MergeError(f"{report_dir}: not a shard's report directory (no {RESULTS})")
    meta, records, _ = read_path(Path(report_dir))
    return dict(meta), records


def merge(shards: list[tuple[dict, list[dict]]]) -> tuple[dict, list[dict]]:
    """One run's meta and records (in table order) from its shards' (meta, records)."""
    first = shards[0][0]
    labels = [(m.get("settings") or {}).get("shard") for m, _ in shards]
    for meta, _ in shards[1:]:
        for key in ("inputs", "commit", "dirty", "backend"):
            if meta.get(key) != first.get(key):
                raise MergeError(f"shard {meta.get('run_id')} differs from shard {first.get('run_id')} in {key}: "
                                 "not shards of one run")
    if None in labels or len({label.split("/")[1] for label in labels}) != 1 or len(set(labels)) != len(labels):
        raise MergeError(f"shards {labels}: expected distinct i/N labels of one N (harness run --shard i/N)")
    seen: set[tuple[str, int]] = set()
    records: list[dict] = []
    for _, recs in shards:
        for rec in recs:
            key = (rec["table"], rec["line"])
            if key in seen:
                raise MergeError(f"{rec['table']}:{rec['line']} ({rec['case_name']}) is in more than one shard")
            seen.add(key)
            records.append(rec)
    tables = [i["path"] for i in first.get("inputs", [])]
    records.sort(key=lambda r: (tables.index(r["table"]) if r["table"] in tables else len(tables), r["line"]))
    count = int(labels[0].split("/")[1])
    settings = {**(first.get("settings") or {}), "shard": None}
    meta = {**first, "run_id": provenance.new_run_id(str(first.get("commit") or "")), "settings": settings,
            "started": min(m.get("started") or "" for m, _ in shards),
            "finished": max(m.get("finished") or "" for m, _ in shards),
            "interrupted": any(m.get("interrupted") for m, _ in shards),
            "merged_from": [{"run_id": m.get("run_id"), "shard": label} for (m, _), label in zip(shards, labels)],
            "missing_shards": [f"{i}/{count}" for i in range(1, count + 1) if f"{i}/{count}" not in labels]}
    return meta, records
