"""`--shard i/N` + `harness merge`: shards cover each row once; merged, they make one run whose verdicts equal a
single run's row for row, in one report and one history run."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.options import shard_spec
from harness.run import shard

ROOT = Path(__file__).resolve().parents[2]
TABLES = [str(ROOT / "cases" / "csymm_test.csv"), str(ROOT / "cases" / "sgemm_strided_batched_test.csv")]
SAMPLE = "TC_L0_0001 or TC_L0_0002 or TC_L0_0003 or TC_L0_0005 or TC_PF_0010"
FAST = ["--rounds", "2", "--min-samples", "4", "--max-time", "0.05"]


def test_shards_cover_every_row_once():
    rows = list(range(11))
    parts = [shard.select(rows, (i, 3)) for i in (1, 2, 3)]
    assert sorted(sum(parts, [])) == rows and parts[0] == [0, 3, 6, 9]
    for bad in ("0/2", "3/2", "1", "a/b"):
        with pytest.raises(argparse.ArgumentTypeError):
            shard_spec(bad)


def _harness(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", *argv], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)


def _report(out: Path) -> tuple[Path, dict]:
    [path] = out.glob("*/report.json")
    return path.parent, json.loads(path.read_text())


def _verdicts(report: dict) -> dict:
    return {(Path(r["table"]).name, r["line"]): r["verdict"] for r in report["cases"]}


@pytest.mark.slow  # three runs and a merge: 87 s on the loaded 2-core machine
def test_merged_shards_equal_a_single_run(tmp_path):
    history = str(tmp_path / "h.sqlite")
    whole = _harness("run", *TABLES, "-k", SAMPLE, *FAST, "--report-dir", str(tmp_path / "whole"),
                     "--history", history)
    assert whole.returncode == 0, whole.stderr
    dirs = []
    for i in (1, 2):
        part = _harness("run", *TABLES, "-k", SAMPLE, *FAST, "--shard", f"{i}/2",
                        "--report-dir", str(tmp_path / f"s{i}"), "--history", history)
        assert part.returncode == 0, part.stderr
        dirs.append(_report(tmp_path / f"s{i}")[0])
    merged = _harness("merge", *map(str, dirs), "--report-dir", str(tmp_path / "merged"), "--history", history)
    assert merged.returncode == 0, merged.stderr
    _, single = _report(tmp_path / "whole")
    _, joined = _report(tmp_path / "merged")
    assert len(single["cases"]) == 10 and _verdicts(joined) == _verdicts(single)
    assert [c["line"] for c in joined["cases"]] == [c["line"] for c in single["cases"]]
    assert joined["missing_shards"] == [] and len(joined["merged_from"]) == 2
    runs = json.loads(_harness("runs", "--history", history, "--json").stdout)
    assert [r["summary"]["total"] for r in runs if r["run_id"] == joined["run_id"]] == [10]

    twice = _harness("merge", str(dirs[0]), str(dirs[0]), "--report-dir", str(tmp_path / "bad"))
    assert twice.returncode == 3 and "Traceback" not in twice.stderr
    alone = _harness("merge", str(dirs[0]), "--report-dir", str(tmp_path / "alone"), "--history", history)
    assert alone.returncode == 0 and "shards 2/2 not given" in alone.stderr
    not_a_shard = _harness("merge", str(_report(tmp_path / "whole")[0]), "--report-dir", str(tmp_path / "bad"))
    assert not_a_shard.returncode == 3 and len(not_a_shard.stderr.strip().splitlines()) == 1
