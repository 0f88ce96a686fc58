"""`harness baseline` and `harness mutants` record their runs through the session like `harness run` does (history,
results.jsonl, reports, a `kind` in the meta), and `harness compare latest` never picks a mutants run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.perf.compare import resolve_run
from harness.store.history import History
from tables import csymm_row, write_csymm_table


@pytest.fixture
def paths(tmp_path):
    return ["--history", str(tmp_path / "h.sqlite"), "--report-dir", str(tmp_path / "reports")]


def listed_runs(capsys, paths: list[str]) -> list[dict]:
    capsys.readouterr()
    assert main(["runs", "--json", paths[0], paths[1]]) == 0
    return json.loads(capsys.readouterr().out)


def test_baseline_records_a_run_of_kind_baseline_and_still_writes_its_table(tmp_path, paths, capsys):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L0_0001", 4, 3), csymm_row("TC_PF_0001", 8, 8), csymm_row("TC_PF_0002", 6, 4)])
    code = main(["baseline", str(table), "--backend", "cpu", "--max-time", "0.05", "--min-samples", "5",
                 "--warmup", "1", "--rounds", "1", *paths])
    out = capsys.readouterr().out
    assert code == 0, out
    written = (tmp_path / "baselines" / "csymm_gpu_baseline.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in written[1:]] == ["TC_PF_0001", "TC_PF_0002"]
    (run,) = listed_runs(capsys, paths)
    assert run["kind"] == "baseline" and run["summary"]["total"] == 2 and run["summary"]["passed"] == 2
    meta, records = History(tmp_path / "h.sqlite").load_run(run["run_id"])
    assert meta["kind"] == "baseline" and meta["backend"] == "cpu"
    assert [(r["case_name"], r["verdict"], r["timing"]["n"] >= 5) for r in records] == [
        ("TC_PF_0001", "PASS", True), ("TC_PF_0002", "PASS", True)]
    report_dir = tmp_path / "reports" / run["run_id"]
    assert len((report_dir / "results.jsonl").read_text().splitlines()) == 2
    assert json.loads((report_dir / "report.json").read_text())["kind"] == "baseline"
    assert f"run {run['run_id']} (kind baseline) recorded" in out


@pytest.mark.slow  # 22 s of a bare pytest -n 2 at load ~20
def test_mutants_runs_are_recorded_and_never_chosen_as_latest(tmp_path, paths, capsys):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L0_0001", 5, 3), csymm_row("TC_L0_0002", 4, 6, side="ACLBLAS_SIDE_RIGHT")])
    assert main(["run", str(table), "-k", "TC_L0_0001", "-n", "1", *paths]) == 0
    code = main(["mutants", str(table), "--mutant", "conjugated_a", "--every", "1", "-n", "1", *paths])
    out = capsys.readouterr().out
    assert code == 0 and "mutants caught: 1/1" in out, out  # the catch table is what it was
    runs = listed_runs(capsys, paths)
    assert [r["kind"] for r in runs] == ["mutants", "mutants", "run"]
    mutant_run, clean_run, normal_run = (r["run_id"] for r in runs)
    assert mutant_run.endswith("-conjugated_a") and clean_run.endswith("-clean")
    history = History(tmp_path / "h.sqlite")
    meta, records = history.load_run(mutant_run)
    assert meta["settings"]["mutant"]["name"] == "conjugated_a"
    assert sorted((r["case_name"], r["verdict"]) for r in records) == [("TC_L0_0001", "FAIL"),
                                                                       ("TC_L0_0002", "FAIL")]
    assert {r["verdict"] for r in history.load_run(clean_run)[1]} == {"PASS"}
    assert (tmp_path / "reports" / mutant_run / "report.json").is_file()

    assert resolve_run("latest", history)[0]["run_id"] == normal_run
    assert resolve_run("HEAD", history)[0]["run_id"] == normal_run  # the same commit as the mutants runs
    with pytest.raises(LookupError, match="only 1 run"):
        resolve_run("previous", history)
    # negative control: without the kind filter the newest run, and the newest of this commit, is the mutant
    assert history.recent_run_ids(1) == [mutant_run]
    assert history.latest_run_of_commit(meta["commit"]) == mutant_run


def test_runs_recorded_before_kinds_existed_count_as_runs(tmp_path):
    history = History(tmp_path / "h.sqlite")
    for run_id, started, extra in (("old", "2026-01-03", {}), ("ab", "2026-01-02", {"kind": "ab"}),
                                   ("new", "2026-01-01", {"kind": "run"})):
        history.start_run({"run_id": run_id, "commit": "c" * 40, "started": started, **extra})
    assert history.recent_run_ids(5, ("run", "pytest")) == ["old", "new"]
    assert history.recent_run_ids(5) == ["old", "ab", "new"]
    assert [r["kind"] for r in history.run_list()] == ["run", "ab", "run"]
