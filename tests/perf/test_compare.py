"""compare_runs verdicts on synthetic samples, compatibility refusal, the compare command's exit codes, run
resolution (report path, run id, git revision), and ab's interleaving with fake calls."""
import json
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats as sps

from harness.flows.ab import interleave
from harness.commands import ab as ab_command
from harness.commands import compare as compare_command
from harness.perf.compare import (_verdict, compare_runs, compatibility_problems, format_table, parse_fail_on, resolve_run,
                             row_differences, shift_test, warnings)
from harness.store.history import History
from harness.store.stored import load_meta
from harness.model.settings import TimingConfig
from commands import run_command
from perf_records import history_with_runs, meta, noisy, rec


def test_verdicts_on_synthetic_rows():
    rng = np.random.default_rng(7)
    base = [rec("slower", noisy(rng, 100)), rec("faster", noisy(rng, 100)), rec("same", noisy(rng, 100)),
            rec("small_shift", noisy(rng, 100)), rec("tiny_shift", noisy(rng, 100, n=1000, spread=0.002)),
            rec("noisy", noisy(rng, 100, n=6, spread=0.2)), rec("head_untimed", noisy(rng, 100)),
            rec("base_untimed", None)]
    head = [rec("slower", noisy(rng, 110)), rec("faster", noisy(rng, 90)), rec("same", noisy(rng, 100)),
            rec("small_shift", noisy(rng, 103)), rec("tiny_shift", noisy(rng, 101.2, n=1000, spread=0.002)),
            rec("noisy", noisy(rng, 104, n=6, spread=0.2)), rec("head_untimed", None),
            rec("base_untimed", noisy(rng, 100))]
    df = compare_runs(base, head, interleaved=True).set_index("case_name")
    assert list(df.index) == ["slower", "faster", "same", "small_shift", "tiny_shift", "noisy"]  # both sides
    assert df.loc["tiny_shift", "q_value"] < 1e-6 and df.loc["tiny_shift", "verdict"] == "SAME"  # under the floor
    assert df.loc["slower", "verdict"] == "REGRESSION" and df.loc["slower", "change"] == pytest.approx(0.10, abs=0.01)
    assert df.loc["faster", "verdict"] == "IMPROVEMENT"
    assert df.loc["same", "verdict"] == "SAME"
    assert df.loc["small_shift", "verdict"] == "REGRESSION"   # provably slower by more than the 2% floor
    assert df.loc["small_shift", "ci_hi"] < 0.05                # ... although inside the SAME band
    assert df.loc["noisy", "verdict"] == "INCONCLUSIVE"
    assert df.loc["slower", "ci_lo"] < 0.10 < df.loc["slower", "ci_hi"]
    assert list(df["q_value"]) == pytest.approx(list(sps.false_discovery_control(df["p_value"], method="bh")))
    p = sps.mannwhitneyu(head[0]["timing"]["samples_us"], base[0]["timing"]["samples_us"]).pvalue
    assert df.loc["slower", "p_value"] == pytest.approx(p)


def test_rows_match_by_op_and_name_not_table_path():
    rng = np.random.default_rng(7)
    a, b = rec("TC_PF_001", noisy(rng, 100)), rec("TC_PF_001", noisy(rng, 120))
    b["table"] = "/tmp/elsewhere/csymm_test.csv"
    other_op = rec("TC_PF_001", noisy(rng, 100), op="sgemm")
    df = compare_runs([a, other_op], [b], interleaved=True)
    assert len(df) == 1 and df["verdict"][0] == "REGRESSION"


@pytest.mark.parametrize("lo, hi, q, expected", [
    (-0.049, 0.049, 0.001, "SAME"),
    (-0.05, 0.01, 0.5, "INCONCLUSIVE"),         # CI touching -threshold is not inside it
    (0.0101, 0.03, 0.049, "REGRESSION"),        # whole CI above the 1% floor, significant: beats SAME
    (0.01, 0.03, 0.001, "SAME"),                # CI touching the floor: significant but not a provable 1%
    (0.0101, 0.08, 0.05, "INCONCLUSIVE"),       # q exactly alpha is not significant
    (0.0101, 0.03, 0.05, "SAME"),
    (-0.2, -0.0101, 0.01, "IMPROVEMENT"),
    (-0.2, -0.01, 0.01, "INCONCLUSIVE"),
])
def test_verdict_boundaries(lo, hi, q, expected):
    row = SimpleNamespace(ci_lo=lo, ci_hi=hi, q_value=q)
    assert _verdict(row, 0.05, 0.05, 0.01) == expected


def test_bh_keeps_one_lucky_row_among_many_from_being_a_regression():
    rng = np.random.default_rng(7)
    # 40 rows of pure noise plus one with raw p ~ 0.01: alone it would count, after BH it must not
    base, head = [], []
    for i in range(40):
        base.append(rec(f"r{i}", noisy(rng, 100, 60, 0.08)))
        head.append(rec(f"r{i}", noisy(rng, 100, 60, 0.08)))
    df = compare_runs(base, head, interleaved=True)
    assert (df["verdict"] != "REGRESSION").all()
    assert (df["q_value"] >= df["p_value"]).all()


def test_compatibility_problems():
    def problems(**head):
        return compatibility_problems(load_meta(meta()), load_meta(meta(**head)))
    assert problems(inputs=[{"path": "/other/a.csv", "sha256": "1" * 64}]) == []
    assert "a.csv differs" in problems(inputs=[{"path": "elsewhere/a.csv", "sha256": "2" * 64}])[0]
    assert "share no case table" in problems(inputs=[{"path": "b.csv", "sha256": "1" * 64}])[0]
    two_tables = [{"path": "cases/a.csv", "sha256": "1" * 64}, {"path": "cases/b.csv", "sha256": "3" * 64}]
    assert problems(inputs=two_tables) == []                 # a subset of the tables: the shared rows compare
    assert "backends" in problems(backend="npu")[0]
    assert "timing modes" in problems(settings={"timing_mode": "steady"})[0]  # the first runs' spelling
    assert len(problems(backend="npu", settings={"timing": {"mode": "steady"}})) == 2


def test_a_subset_run_compares_the_shared_rows_and_names_the_others(tmp_path, capsys):
    rng = np.random.default_rng(11)
    full = [rec(f"TC_PF_00{i}", noisy(rng, 100), rounds=5) for i in range(1, 8)]
    subset = [rec(f"TC_PF_00{i}", noisy(rng, 100), rounds=5) for i in (2, 3)]
    assert "only in base: 5 (TC_PF_001, TC_PF_004, TC_PF_005, TC_PF_006, TC_PF_007)" in row_differences(full, subset)
    assert row_differences(full, full) == ""
    tables = [{"path": "cases/a.csv", "sha256": "1" * 64}, {"path": "cases/b.csv", "sha256": "3" * 64}]
    base = write_report(tmp_path / "full.json", full, inputs=tables, run_id="full")
    head = write_report(tmp_path / "subset.json", subset, run_id="subset")
    assert run_command(compare_command, ["compare", base, head, "--history", str(tmp_path / "h.sqlite")]) == 0
    captured = capsys.readouterr()
    assert "compared the 2 timed rows both runs have" in captured.err and "refusing" not in captured.err
    assert "TC_PF_002" in captured.out and "TC_PF_001" not in captured.out


def test_the_change_is_of_the_medians_printed_beside_it():
    """Rounds whose p10s fell while their medians rose (the head's fast end moved down): the change, the medians
    and the CI are all of the rounds' p10s, never a p10 change beside sample medians."""
    def run_of(p10_level, median_level):
        rounds = [np.concatenate([np.full(20, p10_level * f), np.full(80, median_level * f)])
                  for f in (0.99, 1.0, 1.01, 1.0, 0.995)]
        r = rec("TC_PF_001", np.concatenate(rounds))
        r["timing"]["rounds"] = [{"p10_us": float(np.percentile(x, 10))} for x in rounds]
        return r
    df = compare_runs([run_of(3800, 3904)], [run_of(3100, 4165)])
    row = df.iloc[0]
    assert row["evidence"] == "rounds"
    assert row["head_median_us"] / row["base_median_us"] - 1 == pytest.approx(row["change"])
    assert row["change"] < 0 and row["base_median_us"] == pytest.approx(3800, rel=0.02)
    assert "medians of each round's p10 (rounds)" in format_table(df)


def write_report(path, records, **over):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**meta(**over), "cases": records}))
    return str(path)


def test_compare_command_exit_codes(tmp_path, capsys):
    rng = np.random.default_rng(7)
    hist = ["--history", str(tmp_path / "none.sqlite")]
    base = write_report(tmp_path / "base" / "report.json", [rec("TC_PF_001", noisy(rng, 100), rounds=5)])
    slow = write_report(tmp_path / "slow.json", [rec("TC_PF_001", noisy(rng, 110), rounds=5)], run_id="s")
    same = write_report(tmp_path / "same.json", [rec("TC_PF_001", noisy(rng, 100), rounds=5)], run_id="m")
    vague = write_report(tmp_path / "vague.json", [rec("TC_PF_001", [50.0, 150.0, 80.0, 120.0, 104.0])],
                         run_id="v")
    other_backend = write_report(tmp_path / "npu.json", [rec("TC_PF_001", noisy(rng, 100), rounds=5)],
                                 backend="npu", run_id="n")
    assert run_command(compare_command, ["compare", str(tmp_path / "base"), slow] + hist) == 1
    assert "REGRESSION" in capsys.readouterr().out
    assert run_command(compare_command, ["compare", base, same] + hist) == 0
    assert run_command(compare_command, ["compare", base, vague] + hist) == 2
    assert run_command(compare_command, ["compare", base, other_backend] + hist) == 3
    assert "refusing" in capsys.readouterr().err
    assert run_command(compare_command, ["compare", base, other_backend, "--force"] + hist) == 0
    assert run_command(compare_command, ["compare", base, "no-such-run"] + hist) == 3
    assert not (tmp_path / "none.sqlite").exists()       # looking things up never creates a history


def test_separate_runs_judged_by_rounds_not_pooled_samples():
    """Each run's rounds sit at their own level (a fresh process each), the spread a single run's samples hide."""
    rng = np.random.default_rng(3)

    def run_of(center, rounds=5):
        levels = center * (1 + rng.normal(0, 0.05, rounds))  # between-round spread 5 %
        return np.concatenate([lv * (1 + rng.normal(0, 0.002, 40)) for lv in levels])
    unchanged = [rec(f"r{i}", run_of(100), rounds=5) for i in range(20)]
    again = [rec(f"r{i}", run_of(100), rounds=5) for i in range(20)]
    slower = [rec(f"r{i}", run_of(130), rounds=5) for i in range(20)]  # beyond the rounds' own 5 % spread
    pooled = compare_runs(unchanged, again, interleaved=True)        # what the samples alone would claim
    assert (pooled["verdict"].isin(["REGRESSION", "IMPROVEMENT"])).sum() >= 5
    by_rounds = compare_runs(unchanged, again)
    assert set(by_rounds["evidence"]) == {"rounds"} and set(by_rounds["n_base"]) == {5}
    assert not by_rounds["verdict"].isin(["REGRESSION", "IMPROVEMENT"]).any()
    caught = compare_runs(unchanged, slower)
    assert (caught["verdict"] == "REGRESSION").all()
    assert caught["change"].median() == pytest.approx(0.30, abs=0.05)


def test_within_run_evidence_is_never_a_regression_and_warns():
    rng = np.random.default_rng(5)
    base = [rec("TC_PF_001", noisy(rng, 100)), rec("TC_PF_002", noisy(rng, 100), rounds=2)]
    head = [rec("TC_PF_001", noisy(rng, 130)), rec("TC_PF_002", noisy(rng, 130), rounds=2)]
    df = compare_runs(base, head)
    assert list(df["evidence"]) == ["within-run", "within-run"]
    assert list(df["verdict"]) == ["INCONCLUSIVE", "INCONCLUSIVE"]
    assert "2 would look changed" in warnings(df)[0]
    assert list(compare_runs(base, head, interleaved=True)["verdict"]) == ["REGRESSION", "REGRESSION"]
    assert warnings(compare_runs(base, head, interleaved=True)) == []


def test_exact_shift_test_for_few_rounds():
    x, y = np.arange(5.0), np.arange(5.0) + 10
    shift, lo, hi, p = shift_test(x, y, 0.95)
    assert (shift, lo, hi) == (10.0, 7.0, 13.0)              # k = 3 for 5 vs 5 at 95 % (exact U table)
    assert p == pytest.approx(sps.mannwhitneyu(y, x, method="exact").pvalue)
    assert shift_test(np.arange(2.0), np.arange(2.0) + 5, 0.95)[1] == -np.inf   # 2 vs 2 cannot reach 95 %
    rng = np.random.default_rng(0)
    cover = np.mean([lo <= 0.3 <= hi for lo, hi in
                     (shift_test(rng.normal(0, 1, 5), rng.normal(0.3, 1, 6), 0.95)[1:3] for _ in range(1000))])
    assert 0.95 <= cover <= 0.99


def test_compare_names_runs_and_refuses_the_same_run_twice(tmp_path, capsys):
    rng = np.random.default_rng(9)
    history_with_runs(tmp_path, rng, [100, 100, 112])
    hist = ["--history", str(tmp_path / "h.sqlite")]
    assert run_command(compare_command, ["compare", "previous", "latest"] + hist) == 1
    out = capsys.readouterr().out
    assert "run1" in out and "run2" in out and "REGRESSION" in out
    assert run_command(compare_command, ["compare", "run0", "previous"] + hist) == 0
    assert run_command(compare_command, ["compare", "latest", "run2"] + hist) == 3
    err = capsys.readouterr().err
    assert "same run" in err and len(err.strip().splitlines()) == 1
    not_report = tmp_path / "other.json"
    not_report.write_text('{"benchmarks": []}')
    assert run_command(compare_command, ["compare", str(not_report), "latest"] + hist) == 3
    err = capsys.readouterr().err.strip()
    assert "not a harness report.json" in err and len(err.splitlines()) == 1
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    assert run_command(compare_command, ["compare", str(garbage), "latest"] + hist) == 3
    assert "Traceback" not in capsys.readouterr().err


def test_fail_on_threshold_and_json(tmp_path, capsys):
    rng = np.random.default_rng(9)
    history_with_runs(tmp_path, rng, [100, 112])
    hist = ["--history", str(tmp_path / "h.sqlite")]
    assert run_command(compare_command, ["compare", "run0", "run1", "--fail-on", "20%"] + hist) == 0
    assert run_command(compare_command, ["compare", "run0", "run1", "--fail-on", "change:0.05"] + hist) == 1
    assert run_command(compare_command, ["compare", "run0", "run1", "--fail-on", "lots"] + hist) == 3
    capsys.readouterr()
    assert run_command(compare_command, ["compare", "run0", "run1", "--json"] + hist) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["base"]["run_id"] == "run0" and doc["head"]["hardware"]["name"] == "Ascend 950PR"
    assert doc["summary"]["REGRESSION"] == 1 and doc["rows"][0]["evidence"] == "rounds"
    assert doc["rows"][0]["change"] == pytest.approx(0.12, abs=0.02)
    assert parse_fail_on("5%") == pytest.approx(0.05) and parse_fail_on("0.1") == pytest.approx(0.1)


def test_compare_report_dir_writes_html_markdown_chart_json(tmp_path, capsys):
    rng = np.random.default_rng(9)
    history_with_runs(tmp_path, rng, [100, 112])
    out = tmp_path / "cmp"
    assert run_command(compare_command, ["compare", "run0", "run1", "--report-dir", str(out),
                                         "--history", str(tmp_path / "h.sqlite")]) == 1
    assert {p.name for p in out.iterdir()} == {"compare.html", "compare.md", "compare.png", "compare.json"}
    md = (out / "compare.md").read_text()
    assert "![" in md and "(compare.png)" in md and "| TC_PF_001 |" in md and "REGRESSION" in md
    html = (out / "compare.html").read_text()
    assert "data:image/png;base64," in html and 'class="v-REGRESSION"' in html
    assert (out / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((out / "compare.json").read_text())["summary"]["REGRESSION"] == 1


def test_runs_command_lists_runs_newest_first(tmp_path, capsys):
    from harness.commands import runs as runs_command
    history_with_runs(tmp_path, np.random.default_rng(1), [100, 100])
    assert run_command(runs_command, ["runs", "--history", str(tmp_path / "h.sqlite")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "hardware" in lines[0] and "run1" in lines[2] and "run0" in lines[3]
    assert "Ascend 950PR" in lines[2] and "1 rows, 1 passed" in lines[2]
    assert run_command(runs_command, ["runs", "--history", str(tmp_path / "h.sqlite"), "--json"]) == 0
    assert [r["run_id"] for r in json.loads(capsys.readouterr().out)] == ["run1", "run0"]
    assert run_command(runs_command, ["runs", "--history", str(tmp_path / "absent.sqlite")]) == 3


def test_resolve_by_run_id_and_git_revision(tmp_path, monkeypatch):
    rng = np.random.default_rng(7)
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "one"], check=True)
    sha = subprocess.run(git + ["rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    monkeypatch.chdir(repo)
    h = History(tmp_path / "h.sqlite")
    for run_id, started in (("old", "2026-01-01"), ("new", "2026-01-02")):
        h.start_run({**meta(run_id=run_id), "commit": sha, "started": started})
        h.record(run_id, rec("TC_PF_001", noisy(rng, 100)))
    assert resolve_run("old", h)[0]["run_id"] == "old"
    m, records = resolve_run("HEAD", h)
    assert m["run_id"] == "new" and len(records[0]["timing"]["samples_us"]) == 200
    with pytest.raises(LookupError):
        resolve_run("HEAD~5", h)
    h2 = History(tmp_path / "other.sqlite")
    h2.start_run({**meta(run_id="x"), "commit": "f" * 40})
    with pytest.raises(LookupError, match="holds no run"):
        resolve_run("HEAD", h2)


class FakeSide:
    """A call that costs `us` microseconds of virtual time, shared by both sides through `clock`."""

    def __init__(self, clock, us, log, label):
        self.clock, self.us, self.log, self.label = clock, us, log, label

    def call(self):
        self.log.append(self.label)
        self.clock[0] += self.us * 1e-6

    def timer(self):
        side = self

        class Timer:
            def start(self):
                self.t0 = side.clock[0]

            def stop(self):
                self.t1 = side.clock[0]

            def elapsed_s(self):
                return self.t1 - self.t0
        return Timer()


def test_interleave_alternates_sides_and_times_each():
    clock, log = [0.0], []
    a, b = FakeSide(clock, 10.0, log, "A"), FakeSide(clock, 11.0, log, "B")
    cfg = TimingConfig(warmup=2, min_samples=4, max_samples=4)
    ta, tb = interleave(a.call, b.call, a.timer(), b.timer(), cfg, clock=lambda: clock[0])
    assert log == ["A", "B"] * 2 + ["A", "B", "B", "A", "A", "B", "B", "A"]
    assert ta["n"] == tb["n"] == 4 and ta["warmup"] == 2
    assert ta["mean_us"] == pytest.approx(10.0) and tb["mean_us"] == pytest.approx(11.0)
    assert ta["converged"] and tb["converged"] and ta["stop_reason"] == "ci_target"


def test_interleave_time_cap_is_shared_and_never_converges_early():
    clock, log = [0.0], []
    a, b = FakeSide(clock, 0.5e6, log, "A"), FakeSide(clock, 0.5e6, log, "B")
    cfg = TimingConfig(warmup=0, min_samples=50, max_time_s=3.0)
    ta, tb = interleave(a.call, b.call, a.timer(), b.timer(), cfg, clock=lambda: clock[0])
    assert ta["n"] == tb["n"] == 3 and ta["stop_reason"] == "time_cap"
    assert not ta["converged"] and not tb["converged"]


def test_define_parsing():
    assert ab_command.parse_defines(["TWIN_SLOWDOWN_PCT=5", "FLAG"]) == {"TWIN_SLOWDOWN_PCT": "5", "FLAG": "1"}
    with pytest.raises(ValueError):
        ab_command.parse_defines(["=5"])
    assert run_command(ab_command, ["ab", "HEAD", "HEAD", "--define-b", "5%=x"]) == 3


def test_the_two_sides_of_one_ab_run_compare_as_interleaved():
    from harness.commands.compare import ab_pair
    a = meta(run_id="x-abA", settings={"ab": {"side": "A", "pair": "x-abB"}})
    b = meta(run_id="x-abB", settings={"ab": {"side": "B", "pair": "x-abA"}})
    assert ab_pair(a, b) and ab_pair(b, a)
    assert not ab_pair(a, meta(run_id="other")) and not ab_pair(meta(), b)


def paired_recs(name, levels, factor, rng, spread=0.002):
    """A and B records of one ab row timed in len(levels) rounds: round i at levels[i] (that process's placement)
    on both sides, B `factor` slower, each side's round median with a little noise of its own."""
    def side(f):
        r = rec(name, [100.0] * 20)
        r["timing"]["rounds"] = [{"median_us": float(lv * f * (1 + rng.normal(0, spread)))} for lv in levels]
        return r
    return side(1.0), side(factor)


def test_ab_rounds_are_paired_and_judged_over_the_rounds_with_their_own_floor():
    rng = np.random.default_rng(26)
    base, head, unchanged = [], [], []
    for i in range(10):
        levels = 100 * (1 + rng.normal(0, 0.05, 10))       # placement moves whole rounds by ~5 %, both sides alike
        a, b = paired_recs(f"r{i}", levels, 1.01, rng)     # a 1 % slowdown: under the 2 % floor of pooled samples
        base.append(a)
        head.append(b)
        unchanged.append(paired_recs(f"r{i}", levels, 1.0, rng)[1])
    df = compare_runs(base, head, interleaved=True)
    assert set(df["evidence"]) == {"paired rounds"} and set(df["n_base"]) == {10}
    assert (df["verdict"] == "REGRESSION").all(), df
    assert df["ci_lo"].min() > 0.005 and df["ci_hi"].max() < 0.02
    assert compare_runs(base, head, interleaved=True, paired_min_effect=0.02)["verdict"].eq("SAME").all()
    same = compare_runs(base, unchanged, interleaved=True)
    assert not same["verdict"].isin(["REGRESSION", "IMPROVEMENT"]).any()
    # without the pairing the rounds' 5 % placement spread hides the 1 %: rounds of separate runs say nothing
    assert not compare_runs(base, head)["verdict"].isin(["REGRESSION", "IMPROVEMENT"]).any()


def interleaved_recs(name, factor, rng, rounds=10, pairs=200):
    """A and B records of one ab row as harness.flows.ab.interleave takes them: sample k of A and of B a few
    microseconds apart in the same machine state, the state flipping between two levels 1.6x apart every ~20
    pairs (as this KVM guest does), 2 % of samples preempted (3x), B `factor` slower."""
    def timing(samples):
        chunks = np.split(np.asarray(samples), rounds)
        return {"mode": "sync", "n": len(samples), "mean_us": float(np.mean(samples)), "samples_us": samples,
                "rounds": [{"n": pairs, "median_us": float(np.median(c))} for c in chunks]}
    states = np.cumsum(rng.random(rounds * pairs) < 0.05) % 2
    level = 60.0 * np.where(states == 1, 1.6, 1.0)
    sides = [level * f * (1 + rng.normal(0, 0.01, level.size)) * np.where(rng.random(level.size) < 0.02, 3, 1)
             for f in (1.0, factor)]
    recs = [rec(name, None) for _ in sides]
    for r, samples in zip(recs, sides):
        r["timing"] = timing(list(map(float, samples)))
    return recs


def test_paired_rounds_pair_the_samples_so_machine_states_cancel():
    rng = np.random.default_rng(261)
    rows = [interleaved_recs(f"r{i}", 1.01, rng) for i in range(10)]
    same = [interleaved_recs(f"r{i}", 1.0, rng) for i in range(10)]
    df = compare_runs([a for a, _ in rows], [b for _, b in rows], interleaved=True)
    assert set(df["evidence"]) == {"paired rounds"} and (df["verdict"] == "REGRESSION").all(), df
    assert (df["ci_lo"] > 0.005).all() and (df["ci_hi"] < 0.015).all()
    unchanged = compare_runs([a for a, _ in same], [b for _, b in same], interleaved=True)
    assert not unchanged["verdict"].isin(["REGRESSION", "IMPROVEMENT"]).any()
    # the same rounds judged by their medians alone (records without the rounds' sizes): the state mix of each
    # round moves both medians, and on some rows the 1 % is lost in it
    for a, b in rows:
        for r in (a, b):
            for summary in r["timing"]["rounds"]:
                del summary["n"]
    by_medians = compare_runs([a for a, _ in rows], [b for _, b in rows], interleaved=True)
    width = by_medians["ci_hi"] - by_medians["ci_lo"]
    assert width.median() > 1.5 * (df["ci_hi"] - df["ci_lo"]).max()
    assert (by_medians["verdict"] != "REGRESSION").sum() >= 3, by_medians


def test_rounds_that_do_not_pair_fall_back_to_the_samples():
    rng = np.random.default_rng(1)
    a, b = paired_recs("r", 100 * np.ones(5), 1.0, rng)
    b["timing"]["rounds"] = b["timing"]["rounds"][:4]     # a round short: no pairing by index
    assert list(compare_runs([a], [b], interleaved=True)["evidence"]) == ["interleaved"]
    a1, b1 = paired_recs("r", 100 * np.ones(2), 1.0, rng)  # under MIN_ROUNDS
    assert list(compare_runs([a1], [b1], interleaved=True)["evidence"]) == ["interleaved"]


def test_an_ab_side_is_the_rounds_merged_or_the_round_that_failed():
    from harness.flows.ab import merge_side

    cfg = TimingConfig(min_samples=2, rounds=2)
    timed = [{"case_name": "r", "verdict": "SKIP", "timing": {"mode": "sync", "n": 2, "mean_us": m, "median_us": m,
                                                              "min_us": m, "samples_us": [m, m], "warmup": 1,
                                                              "stop_reason": "max_samples"}} for m in (10.0, 12.0)]
    merged = merge_side(timed, cfg)
    assert [r["median_us"] for r in merged["timing"]["rounds"]] == [10.0, 12.0] and merged["timing"]["n"] == 4
    crashed = {"case_name": "r", "verdict": "CRASH", "timing": None}
    assert merge_side([timed[0], crashed], cfg) is crashed
