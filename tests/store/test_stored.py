"""The one reader of stored runs (harness.store.stored) under every command that reads them: `report`, `compare` and
`merge`, from a run directory, results.jsonl, report.json, run.json, a shard and a history id. A tampered file is
one `file:line: what` line and exit 3, never a traceback; a torn last line is dropped; the pristine run (the
negative control) passes every command. Also the one exit rule on rebuild: an NPU run whose perf rows are all
NO_REF exits 2 from `report` and `merge` as from `run`."""
from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from harness.model import codec
from harness.cli import main
from harness.store.history import History
from harness.model.record import new_record
from harness.flows.session import Session
from harness.store.stored import load_meta
from harness.store.stored import BadRun, read_path

TABLE = "cases/t_test.csv"


def perf_record(line: int, rng: np.random.Generator, baseline: str | None = None) -> dict:
    rec = new_record(f"TC_PF_{line:04d}", "csymm", TABLE, line, 0, is_perf=True, params={"m": 8, "n": 8})
    samples = 100 * (1 + rng.normal(0, 0.01, 40))
    rec.update(verdict="PASS", status=0, timing={
        "mode": "sync", "n": 40, "warmup": 2, "mean_us": float(samples.mean()), "median_us": float(np.median(samples)),
        "samples_us": samples.tolist(), "ci95_us": [99.0, 101.0],
        "rounds": [{"p10_us": float(np.percentile(c, 10))} for c in np.array_split(samples, 4)]})
    rec["precision"] = {"gate": "mere_mare", "matched_ratio": 1.0, "max_abs_error": float("inf"),
                        "mere": {"real": float("nan"), "imag": 0.0}, "mare": 0.0}
    if baseline:
        rec["baseline"] = [{"kind": "taskbook", "verdict": baseline, "value_us": None}]
    return rec


def make_run(out: Path, history: Path, run_id: str, *, shard: str | None = None, backend: str = "cpu",
             baseline: str | None = None, lines: tuple[int, ...] = (2, 3, 4)) -> Path:
    rng = np.random.default_rng(sum(map(ord, run_id)))
    meta = load_meta({"run_id": run_id, "backend": backend, "commit": "c" * 40, "kind": "run",
                      "hardware": {"name": "Ascend 950PR" if backend == "npu" else "", "detected": "",
                                   "override": None},
                      "inputs": [{"path": TABLE, "sha256": "1" * 64}],
                      "settings": {"timing": {"mode": "sync"}, "shard": shard}})
    session = Session(History(history), out, meta)
    session.start()
    for line in lines:
        session.record(perf_record(line, rng, baseline))
    session.finish()
    return out


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> dict[str, Path]:
    """Two runs and two shards of a third, written by the Session as `harness run` writes them."""
    root = tmp_path_factory.mktemp("runs")
    history = root / "h.sqlite"
    return {"base": make_run(root / "base", history, "base"), "head": make_run(root / "head", history, "head"),
            "s1": make_run(root / "s1", history, "s1", shard="1/2", lines=(2, 4)),
            "s2": make_run(root / "s2", history, "s2", shard="2/2", lines=(3,))}


def copy_runs(pristine: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    return {name: Path(shutil.copytree(path, tmp_path / name)) for name, path in pristine.items()}


def edit_line(path: Path, number: int, change) -> None:
    """Replace line `number` of a JSON-lines file by change(its value) (a str result is written as it is)."""
    lines = path.read_text().splitlines()
    value = change(json.loads(lines[number - 1]))
    lines[number - 1] = value if isinstance(value, str) else json.dumps(value)
    path.write_text("\n".join(lines) + "\n")


def with_(path: tuple, value):
    def change(rec: dict) -> dict:
        node = rec
        for key in path[:-1]:
            node = node[key]
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        return rec
    return change


DELETE = object()
DEEP = "[" * 100_000 + "]" * 100_000  # deeper than the JSON parser goes
NESTED = "[" * 40 + "]" * 40           # parses, but no record nests so deep


def nested_params(text: str):
    return lambda rec: json.dumps(rec)[:-1] + f', "params": {{"m": {text}}}}}'


#: (what, how line 2 of results.jsonl is changed, what the one line must say)
TAMPERS = [
    ("a NaN string among the samples", with_(("timing", "samples_us", 3), "NaN"), "samples_us[3]"),
    ("a sample that is text", with_(("timing", "samples_us", 0), "fast"), "samples_us[0]"),
    ("the line as text", with_(("line",), "two"), "line: expected an integer"),
    ("timing as a list", with_(("timing",), [1, 2]), "timing: expected an object"),
    ("rounds of text", with_(("timing", "rounds"), "many"), "timing.rounds"),
    ("a metric as text", with_(("precision", "mare"), "tiny"), "precision.mare"),
    ("a bogus verdict", with_(("verdict",), "MAYBE"), "verdict: 'MAYBE'"),
    ("a bogus baseline verdict", with_(("baseline",), [{"kind": "gpu", "verdict": "GREAT"}]), "baseline[0]"),
    ("a missing case name", with_(("case_name",), DELETE), "case_name: missing"),
    ("a missing verdict", with_(("verdict",), DELETE), "verdict: missing"),
    ("a timing without its mean", with_(("timing", "mean_us"), DELETE), "timing.mean_us: missing"),
    ("a record that is a list", lambda rec: "[1, 2]", "a record is a JSON object"),
    ("nesting deeper than the parser", nested_params(DEEP), "nested deeper"),
    ("nesting deeper than a record", nested_params(NESTED), "nested deeper"),
    ("a line that is not JSON", lambda rec: '{"case_name": "TC_PF_0003", ', "not a JSON record"),
]


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def commands(runs: dict[str, Path], history: Path, tmp_path: Path, target: str) -> dict[str, list[str]]:
    """Each command that reads `target` (a file or directory of runs["base"] or of shard s1)."""
    hist = ["--history", str(history)]
    return {
        "report": ["report", target, "--out", str(tmp_path / "rebuilt"), *hist],
        "compare": ["compare", target, str(runs["head"]), *hist],
        "merge": ["merge", target, str(runs["s2"]), "--report-dir", str(tmp_path / "merged"), *hist],
    }


def refusals(runs: dict[str, Path], tmp_path: Path, capsys) -> Iterator[tuple[str, Path, str]]:
    """(command, the run it read, its one line) for report, compare and merge run on the tampered run (merge: on
    shard s1), each asserted to exit 3."""
    for name, argv in commands(runs, tmp_path / "h.sqlite", tmp_path, "").items():
        target = runs["s1" if name == "merge" else "base"]
        argv[1] = str(target)
        assert main(argv) == 3, name
        yield name, target, one_line(capsys)


@pytest.mark.slow  # 29 s of a bare pytest -n 2 at load ~20
def test_the_pristine_runs_pass_every_command(pristine, tmp_path, capsys):
    """The negative control: what the tampering tests break is accepted as written."""
    runs = copy_runs(pristine, tmp_path)
    history = tmp_path / "h.sqlite"
    for name, argv in commands(runs, history, tmp_path, str(runs["base"])).items():
        if name == "merge":
            argv = ["merge", str(runs["s1"]), str(runs["s2"]), *argv[3:]]
        assert main(argv) == 0, (name, capsys.readouterr().err)
    assert main(["report", str(runs["base"] / "report.json"), "--out", str(tmp_path / "r2"),
                 "--history", str(history)]) == 0
    meta, records, _ = read_path(runs["base"])
    assert meta["run_id"] == "base" and len(records) == 3
    mere = records[0]["precision"]["mere"]["real"]   # the codec's "NaN" string is a float again
    assert isinstance(mere, float) and np.isnan(mere) and records[0]["precision"]["max_abs_error"] == np.inf


@pytest.mark.parametrize("what, change, says", TAMPERS, ids=[t[0] for t in TAMPERS])
def test_a_tampered_results_line_is_one_line_and_exit_3_for_every_command(pristine, tmp_path, capsys, what, change,
                                                                          says):
    runs = copy_runs(pristine, tmp_path)
    for run in ("base", "s1"):
        edit_line(runs[run] / "results.jsonl", 2, change)
    for name, target, line in refusals(runs, tmp_path, capsys):
        assert line.startswith(f"harness {name}: {target / 'results.jsonl'}:2"), line
        assert says in line, line


@pytest.mark.parametrize("what, change, says", TAMPERS[:12], ids=[t[0] for t in TAMPERS[:12]])
def test_a_tampered_report_json_is_one_line_and_exit_3(pristine, tmp_path, capsys, what, change, says):
    runs = copy_runs(pristine, tmp_path)
    path = runs["base"] / "report.json"
    doc = json.loads(path.read_text())
    changed = change(doc["cases"][1])
    doc["cases"][1] = json.loads(changed) if isinstance(changed, str) else changed
    path.write_text(json.dumps(doc))
    for name, argv in commands(runs, tmp_path / "h.sqlite", tmp_path, str(path)).items():
        if name == "merge":
            continue  # a shard is its results.jsonl and run.json
        assert main(argv) == 3, name
        line = one_line(capsys)
        assert line.startswith(f"harness {name}: {path}:1: cases[1]"), line
        assert says in line, line


@pytest.mark.parametrize("key, value, says", [
    ("settings", "fast", "settings: expected an object"),
    ("interrupted", "yes", "interrupted: expected true/false"),
    ("inputs", [3], "inputs: item 0"),
    ("run_id", DELETE, "run_id: missing"),
])
def test_a_tampered_meta_names_its_key_and_line(pristine, tmp_path, capsys, key, value, says):
    runs = copy_runs(pristine, tmp_path)
    for run in ("base", "s1"):
        path = runs[run] / "run.json"
        meta = json.loads(path.read_text())
        if value is DELETE:
            del meta[key]
        else:
            meta[key] = value
        path.write_text(json.dumps(meta, indent=1))
    for name, target, line in refusals(runs, tmp_path, capsys):
        assert line.startswith(f"harness {name}: {target / 'run.json'}"), line
        assert says in line, line
        if value is not DELETE:  # the line of the key in the indented file
            number = next(i for i, ln in enumerate((target / "run.json").read_text().splitlines(), 1)
                          if f'"{key}":' in ln)
            assert f"run.json:{number}: " in line, line


def test_a_tampered_history_record_is_one_line_for_report_and_compare(pristine, tmp_path, capsys):
    runs = copy_runs(pristine, tmp_path)
    history = tmp_path / "h.sqlite"
    with sqlite3.connect(pristine["base"].parent / "h.sqlite") as source, sqlite3.connect(history) as copy:
        source.backup(copy)
    db = sqlite3.connect(history)
    (record,) = db.execute("SELECT record FROM results WHERE run_id = 'base' AND line = 3").fetchone()
    db.execute("UPDATE results SET record = ? WHERE run_id = 'base' AND line = 3",
               (json.dumps({**json.loads(record), "verdict": "MAYBE"}),))
    db.commit()
    db.close()
    for argv in (["report", "base", "--out", str(tmp_path / "rebuilt")], ["compare", "base", str(runs["head"])]):
        assert main([*argv, "--history", str(history)]) == 3
        line = one_line(capsys)
        assert f"{history}: run base, record 2 (TC_PF_0003): verdict: 'MAYBE'" in line, line


def test_a_torn_last_line_is_dropped_and_the_rest_kept(pristine, tmp_path, capsys):
    runs = copy_runs(pristine, tmp_path)
    for run in ("base", "s1"):
        path = runs[run] / "results.jsonl"
        path.write_text(path.read_text() + '{"case_name": "TC_PF_0009", "op": "cs')  # a crash mid-write
    assert len(read_path(runs["base"])[1]) == 3
    for name, argv in commands(runs, tmp_path / "h.sqlite", tmp_path, "").items():
        argv[1] = str(runs["s1" if name == "merge" else "base"])
        assert main(argv) == 0, (name, capsys.readouterr().err)
    path = runs["base"] / "results.jsonl"
    path.write_text(path.read_text() + "\n")  # the same bad text, but a whole line: not a crash's doing
    with pytest.raises(BadRun, match=r"results.jsonl:4:\d+: not a JSON record"):
        read_path(runs["base"])


def test_the_history_holds_strict_json(pristine):
    db = sqlite3.connect(pristine["base"].parent / "h.sqlite")
    texts = [t for (t,) in db.execute("SELECT record FROM results UNION ALL SELECT meta FROM runs"
                                      " UNION ALL SELECT samples_us FROM samples")]
    db.close()

    def reject(token: str):
        raise AssertionError(f"bare {token} token in the history")
    for text in texts:
        json.loads(text, parse_constant=reject)
    assert any('"NaN"' in t for t in texts) and any('"Infinity"' in t for t in texts)


def test_frozensets_and_sets_encode(tmp_path):
    """A row's params may hold a frozenset (sgemm_batched's null arrays): history's encoder once died on it when
    `harness mutants` recorded a crashed row."""
    h = History(tmp_path / "h.sqlite")
    h.start_run({"run_id": "r", "started": "t"})
    rec = new_record("TC_L0_0001", "sgemm_batched", TABLE, 2, 0, params={"null_arrays": frozenset({"B", "A"})})
    rec["verdict"] = "CRASH"
    h.record("r", rec)
    assert h.load_run("r")[1][0]["params"] == {"null_arrays": ["A", "B"]}
    assert codec.dumps({"x": {3, 1}, "y": (float("-inf"),)}) == '{"x": [1, 3], "y": ["-Infinity"]}'


@pytest.mark.slow  # 24 s of a bare pytest -n 2 at load ~20
def test_report_and_merge_give_the_runs_own_exit_code(tmp_path, capsys):
    """An NPU run whose perf rows are all NO_REF exits 2 from `harness run` (nothing judged its times); rebuilding
    its report or merging its shards must say the same, and report.json's exit_code too. The cpu run of the same
    rows (no baseline is for cpu) exits 0: the negative control."""
    history = tmp_path / "h.sqlite"
    hist = ["--history", str(history)]
    npu = make_run(tmp_path / "npu", history, "npu", backend="npu", baseline="NO_REF")
    cpu = make_run(tmp_path / "cpu", history, "cpu", baseline="NO_REF")
    assert json.loads((npu / "report.json").read_text())["exit_code"] == 2
    assert main(["report", str(npu), *hist]) == 2
    assert "no perf row got a judged baseline on Ascend 950PR" in capsys.readouterr().out
    assert main(["report", "npu", "--out", str(tmp_path / "again"), *hist]) == 2  # by history id
    assert main(["report", str(cpu), *hist]) == 0
    shards = [make_run(tmp_path / f"n{i}", history, f"n{i}", shard=f"{i}/2", backend="npu", baseline="NO_REF",
                       lines=lines) for i, lines in ((1, (2, 4)), (2, (3,)))]
    assert main(["merge", *map(str, shards), "--report-dir", str(tmp_path / "merged"), *hist]) == 2
    [merged] = (tmp_path / "merged").glob("*/report.json")
    assert json.loads(merged.read_text())["exit_code"] == 2


def test_merge_keeps_an_interrupted_shard_interrupted(tmp_path, capsys):
    history = tmp_path / "h.sqlite"
    shards = [make_run(tmp_path / f"s{i}", history, f"s{i}", shard=f"{i}/2", lines=lines)
              for i, lines in ((1, (2, 4)), (2, (3,)))]
    meta = json.loads((shards[0] / "run.json").read_text())
    (shards[0] / "run.json").write_text(json.dumps({**meta, "interrupted": True}, indent=1))
    assert main(["merge", *map(str, shards), "--report-dir", str(tmp_path / "merged"), "--history",
                 str(history)]) == 0
    [merged] = (tmp_path / "merged").glob("*/run.json")
    assert json.loads(merged.read_text())["interrupted"] is True
