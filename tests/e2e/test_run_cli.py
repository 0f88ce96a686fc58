"""The front doors: `harness run` on foreign ops-blas tables, the pytest plugin, a missing backend, `harness
mutants`. Each runs the real command line."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.model import operators as ops
from harness.cli import main
from tables import csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[2]
SHARED_TABLES = ROOT.parent / "shared" / "data" / "ops-blas-csv"


@pytest.mark.skipif(not SHARED_TABLES.is_dir(), reason="needs ../shared/data/ops-blas-csv beside the checkout")
def test_foreign_ops_blas_tables_run_without_traceback_and_skip_with_a_reason(tmp_path, capsys):
    for table in SHARED_TABLES.glob("*_test.csv"):  # the tables of operators this harness lacks
        if ops.get(table.name.removesuffix("_test.csv")) is None:
            shutil.copy(table, tmp_path)
    tables = sorted(str(p) for p in tmp_path.glob("*_test.csv"))
    code = main(["run", *tables, "--report-dir", str(tmp_path / "r"), "--history", str(tmp_path / "h.sqlite")])
    assert code == 2  # nothing failed, nothing ran: insufficient evidence
    report = json.loads(next((tmp_path / "r").glob("*/report.json")).read_text())
    assert report["summary"]["total"] == 280 == report["summary"]["skipped"]
    reasons = {c["reason"] for c in report["cases"]}
    assert reasons == {f"operator {op} is not implemented by this harness"
                       for op in ("cgemm_batched", "gemv_strided_batched")}


def test_pytest_plugin_runs_each_row_as_an_item(tmp_path, toy_lib):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L0_ok", 4, 3), csymm_row("TC_L0_wrong_status", 4, 3, expect="ACLBLAS_STATUS_INVALID_VALUE"),
        csymm_row("TC_L1_other", 5, 2),
    ])
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(table), "-k", "TC_L0", "-v", "-p", "no:cacheprovider",
         f"--harness-operator-lib={toy_lib}", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed, 1 passed, 1 deselected" in result.stdout
    assert "TC_L0_wrong_status FAILED" in result.stdout
    assert "status ACLBLAS_STATUS_SUCCESS, expected ACLBLAS_STATUS_INVALID_VALUE" in result.stdout


def test_missing_backend_exits_3_with_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND", "LD_LIBRARY"))}
    result = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--backend", "npu",
                             "--report-dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 3
    assert len(result.stderr.strip().splitlines()) == 1 and "npu backend" in result.stderr


def test_mutants_command_names_the_rows_that_caught_each_mutant(capsys, tmp_path):
    # two of the mutants tests/operators/test_twin_mutants.py builds anyway (shared build cache)
    code = main(["mutants", "--mutant", "conjugated_a", "--mutant", "beta0_reads_c", "-k",
                 "TC_L0_0001 or TC_L0_0002 or TC_EX_0061", "--every", "1", "-n", "2",
                 "--history", str(tmp_path / "h.sqlite"), "--report-dir", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "conjugated_a: caught by" in out and "beta0_reads_c: caught by" in out
    assert "mutants caught: 2/2" in out


# --- the command line as a newcomer meets it ----------------------------------------------------------------------

def _subparsers():
    import argparse

    from harness.cli import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return parser, sub


def test_help_is_task_first_with_run_listed_first(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "thin shell" not in out
    assert out.index("acceptance tests and benchmarks") < out.index("The main job") < out.index("Common commands")
    commands = out.split("positional arguments:", 1)[1].split("\noptions:")[0]
    listed = re.findall(r"^    (\S+)", commands, re.M)
    assert listed[:3] == ["run", "report", "compare"], listed
    assert "Exit codes" in out and "-k selected 0 rows" in out


def test_version_names_the_checkouts_commit(capsys):
    from importlib.metadata import version

    from harness.store.provenance import harness_git_state

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    out = capsys.readouterr().out.strip()
    assert exit_.value.code == 0 and out.startswith(f"harness {version('ops-blas-harness')}")
    commit = harness_git_state()["commit"]
    if commit == "unknown":
        pytest.skip("not run from a git checkout: no commit to name")
    assert f"commit {commit[:12]}" in out


def test_bare_harness_prints_its_help_and_exits_0(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: harness") and "harness run" in out and "Exit codes" in out


def test_every_option_of_every_command_has_help_and_shows_its_default(capsys):
    import argparse

    parser, sub = _subparsers()
    commands = list(sub.choices.items())
    checked = 0
    for name, command in commands:
        text = command.format_help()
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):  # `cases generate`, `cases describe`
                commands += [(f"{name} {n}", s) for n, s in action.choices.items()]
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            assert action.help, f"harness {name} {action.option_strings or action.dest}: no help text"
            if action.option_strings and action.default not in (None, False):
                # the option's own entry: its line starts with its first spelling (another entry's help may name it)
                head = re.search(r"\n  " + re.escape(action.option_strings[0]) + r"[ ,\n]", text)
                entry = text[head.end():].split("\n  -", 1)[0]
                assert "default" in entry, f"harness {name} {action.option_strings[-1]}: default not shown"
                checked += 1
    assert checked > 30
    run_help = " ".join(sub.choices["run"].format_help().split())
    assert "--warmup WARMUP untimed calls before a perf row's samples (default: 10)" in run_help


@pytest.mark.parametrize("argv, hint", [
    (["rnu"], "did you mean 'run'?"),
    (["run", "--warmpu", "3"], "did you mean '--warmup'?"),
    (["run", "--backend", "cpuu"], "did you mean 'cpu'?"),
    (["raport"], "did you mean 'report'?"),
])
def test_typos_get_a_suggestion_and_exit_3(argv, hint, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 3 and hint in err and len(err.strip().splitlines()) == 1, err


def test_nothing_close_gets_no_suggestion(capsys):
    with pytest.raises(SystemExit):
        main(["frobnicate"])
    assert "did you mean" not in capsys.readouterr().err


def test_a_selection_of_nothing_says_0_of_n_and_records_no_run(tmp_path, capsys):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 4, 3), csymm_row("TC_L0_b", 4, 3)])
    code = main(["run", str(table), "-k", "TC_NOPE", "--report-dir", str(tmp_path / "r"),
                 "--history", str(tmp_path / "h.sqlite")])
    captured = capsys.readouterr()
    assert code == 2
    assert "-k 'TC_NOPE': 0 of 2 rows selected" in captured.out
    assert not (tmp_path / "h.sqlite").exists() and not (tmp_path / "r").exists()


# --- harness report: rebuild from results.jsonl or the history ------------------------------------------------------

def _one_run(tmp_path: Path, lib: Path) -> Path:
    table = write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L0_ok", 4, 3, description="左侧上三角"),
        csymm_row("TC_L0_bad", 4, 3, expect="ACLBLAS_STATUS_INVALID_VALUE")])
    assert main(["run", str(table), "--operator-lib", str(lib), "--report-dir", str(tmp_path / "r"),
                 "--history", str(tmp_path / "h.sqlite")]) == 1
    return next((tmp_path / "r").iterdir())


def test_report_rebuilds_a_crashed_run_from_results_jsonl(tmp_path, toy_lib, capsys):
    run_dir = _one_run(tmp_path, toy_lib)
    before = json.loads((run_dir / "report.json").read_text())
    for name in ("report.json", "report.md", "report.html", "results.csv"):
        (run_dir / name).unlink()  # as after a crash: only run.json and results.jsonl were written
    with (run_dir / "results.jsonl").open("a") as f:
        f.write('{"case_name": "TC_torn", "op"')  # the line a crash cut short
    assert main(["report", str(run_dir)]) == 1  # the run's own exit code
    after = json.loads((run_dir / "report.json").read_text())
    assert [c["case_name"] for c in after["cases"]] == [c["case_name"] for c in before["cases"]]
    assert after["summary"] == before["summary"] and after["run_id"] == before["run_id"]
    assert {c["description"] for c in after["cases"]} == {"左侧上三角", "t"}
    assert "左侧上三角" in (run_dir / "results.csv").read_text()
    assert (run_dir / "report.md").is_file() and (run_dir / "report.html").is_file()


def test_a_rebuilt_report_md_reads_as_the_run_wrote_it(tmp_path, toy_lib, capsys):
    """`harness report` renders from what was stored (lists where the run held tuples): a reviewer comparing the two
    must find the same text."""
    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_ok", 4, 3), csymm_row("TC_PF_t", 8, 8)])
    assert main(["run", str(table), "--operator-lib", str(toy_lib), "--report-dir", str(tmp_path / "r"),
                 "--history", str(tmp_path / "h.sqlite"), "--rounds", "2", "--min-samples", "4",
                 "--max-time", "0.05"]) == 0
    run_dir = next((tmp_path / "r").iterdir())
    written = (run_dir / "report.md").read_text(encoding="utf-8")
    assert main(["report", str(run_dir), "--out", str(tmp_path / "again")]) == 0
    rebuilt = (tmp_path / "again" / "report.md").read_text(encoding="utf-8")
    assert "scopes=[device]" in written
    assert rebuilt == written


def test_report_keeps_an_interrupted_run_marked_interrupted(tmp_path, toy_lib, capsys):
    from harness.store.history import History
    from harness.model.record import new_record
    from harness.flows.session import Session
    from harness.store.stored import load_meta
    from harness.store.stored import read

    meta = load_meta({"run_id": "r1", "backend": "cpu"})
    session = Session(History(tmp_path / "h.sqlite"), tmp_path / "r1", meta)
    session.start()
    session.record(new_record("TC_L0_a", "csymm", "t.csv", 2, 0) | {"verdict": "PASS"})
    session.finish(interrupted_by=2)
    for where in (str(tmp_path / "r1"), "r1"):  # from run.json, and from the history
        rebuilt, records, _ = read(where, History(tmp_path / "h.sqlite"))
        assert rebuilt["interrupted"] and rebuilt["finished"] and len(records) == 1
    assert main(["report", str(tmp_path / "r1")]) == 0
    assert "运行被中断" in (tmp_path / "r1" / "report.md").read_text(encoding="utf-8")


def test_report_rebuilds_from_the_history_by_run_id(tmp_path, toy_lib, capsys):
    run_dir = _one_run(tmp_path, toy_lib)
    out = tmp_path / "again"
    assert main(["report", run_dir.name, "--history", str(tmp_path / "h.sqlite"), "--out", str(out)]) == 1
    rebuilt = json.loads((out / "report.json").read_text())
    assert rebuilt["summary"]["failed"] == 1 and rebuilt["run_id"] == run_dir.name


def test_report_of_nothing_and_of_a_corrupt_line_is_one_line_exit_3(tmp_path, toy_lib, capsys):
    assert main(["report", str(tmp_path / "nope"), "--history", str(tmp_path / "none.sqlite")]) == 3
    assert "no such run directory or file, and no history database" in capsys.readouterr().err
    run_dir = _one_run(tmp_path, toy_lib)
    capsys.readouterr()
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    (run_dir / "results.jsonl").write_text("\n".join(["{oops", *lines]) + "\n")
    assert main(["report", str(run_dir)]) == 3
    err = capsys.readouterr().err
    assert f"{run_dir / 'results.jsonl'}:1:2: not a JSON record" in err and len(err.strip().splitlines()) == 1


def test_pytest_plugin_records_a_session_like_harness_run(tmp_path, toy_lib):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L0_ok", 4, 3), csymm_row("TC_L0_bad", 4, 3, expect="ACLBLAS_STATUS_INVALID_VALUE"),
        csymm_row("TC_L1_ok", 5, 2)])
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(table), "-n", "2", "-q", "-p", "no:cacheprovider",
         f"--harness-operator-lib={toy_lib}", f"--harness-report-dir={tmp_path / 'r'}",
         f"--harness-history={tmp_path / 'h.sqlite'}", "--rootdir", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    (run_dir,) = (tmp_path / "r").iterdir()
    assert f"harness report: {run_dir / 'report.md'}" in result.stdout
    report = json.loads((run_dir / "report.json").read_text())
    assert report["kind"] == "pytest" and report["inputs"][0]["path"] == str(table)
    assert sorted((c["case_name"], c["verdict"]) for c in report["cases"]) == [
        ("TC_L0_bad", "FAIL"), ("TC_L0_ok", "PASS"), ("TC_L1_ok", "PASS")]
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == 3  # once each, though xdist reports thrice
    from harness.store.history import History

    meta, records = History(tmp_path / "h.sqlite").load_run(run_dir.name)
    assert len(records) == 3 and meta["summary"]["failed"] == 1


def test_ab_records_both_sides_as_sessions_with_the_run_meta_shape(tmp_path, capsys):
    code = main(["ab", "HEAD", "HEAD", str(ROOT / "cases" / "csymm_test.csv"), "-k", "TC_PF_0001",
                 "--max-time", "0.5", "--min-samples", "4", "--rounds", "3", "--report-dir", str(tmp_path / "r"),
                 "--history", str(tmp_path / "h.sqlite")])
    out = capsys.readouterr().out
    assert code in (0, 2), out  # no regression of HEAD against itself
    assert "3/3 paired rounds" in out and "[round 3/3] TC_PF_0001" in out  # each round in its own worker
    a, b = sorted((tmp_path / "r").iterdir())
    metas = [json.loads((d / "report.json").read_text()) for d in (a, b)]
    from harness.model.meta import RunMeta

    for meta, other in zip(metas, reversed(metas)):
        assert meta["kind"] == "ab" and set(meta) >= set(RunMeta.__annotations__)  # harness run's meta shape
        assert meta["settings"]["ab"]["pair"] == other["run_id"]
        assert [c["case_name"] for c in meta["cases"]] == ["TC_PF_0001"] and meta["cases"][0]["timing"]["n"] >= 4
        assert len(meta["cases"][0]["timing"]["rounds"]) == 3
    from harness.store.history import History

    history = History(tmp_path / "h.sqlite")
    assert {r["run_id"] for r in history.run_list()} == {a.name, b.name}
