"""`harness publish`: steps found at the commit that made them, from a synthetic history written through History's
API (7 commits, one row with a planted 10 % step, one flat, one with a step below the threshold); the site in a
headless browser (no console error, every plot decodes); the bisect helper; bad input as one line and exit 3."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from browser import Browser, chromium
from harness.cli import main
from harness.model.exitcodes import Exit
from harness.store.history import History
from harness.reports.publish import bisect, commit_label
from harness.reports.publish_site import build_site

COMMITS = [hashlib.sha1(f"commit {i}".encode()).hexdigest() for i in range(7)]
STEP_AT = 4  # the commit whose runs are 10 % slower, and every later one
LIMIT_US = 150.0


def perf_record(name: str, line: int, level_us: float, rng: np.random.Generator) -> dict:
    """A timed perf row as the runner records it: six rounds (p10 each) and their pooled samples."""
    rounds, samples = [], []
    for _ in range(6):
        s = level_us * (1 + 0.01 * rng.standard_normal(40)) + rng.exponential(0.03 * level_us, 40)
        rounds.append({"n": 40, "p10_us": float(np.percentile(s, 10)), "median_us": float(np.median(s))})
        samples += s.tolist()
    timing = {"n": len(samples), "mean_us": float(np.mean(samples)), "median_us": float(np.median(samples)),
              "min_us": float(np.min(samples)), "rounds": rounds, "samples_us": samples, "converged": True}
    return {"case_name": name, "table": "cases/csymm_test.csv", "line": line, "op": "csymm", "is_perf": True,
            "verdict": "PASS", "timing": timing,
            "baseline": [{"kind": "taskbook", "value_us": LIMIT_US, "hardware": "Ascend 950PR", "verdict": "NO_REF"}]}


def synthetic_history(path, commits=COMMITS, runs_per_commit=(1, 2, 1, 1, 2, 1, 1), seed=0,
                      steps=None) -> History:
    """Runs of `commits` (oldest first) of three perf rows: TC_PF_STEP 100 us, 10 % slower from STEP_AT on;
    TC_PF_FLAT 80 us throughout; TC_PF_SMALL 60 us, 3 % slower from STEP_AT on (below the 5 % threshold)."""
    steps = steps if steps is not None else {"TC_PF_STEP": (100.0, 0.10), "TC_PF_FLAT": (80.0, 0.0),
                                             "TC_PF_SMALL": (60.0, 0.03)}
    rng = np.random.default_rng(seed)
    history = History(path)
    minute = 0
    for i, (commit, runs) in enumerate(zip(commits, runs_per_commit)):
        for r in range(runs):
            minute += 1
            run_id = f"2026120{1 + minute // 60}T{minute % 60:02d}0000Z-{commit[:8]}-{r}"
            history.start_run({"run_id": run_id, "commit": commit, "dirty": False, "branch": "main", "kind": "run",
                               "backend": "cpu", "device": "cpu twin (2 emulated cores)",
                               "host": {"hostname": "ci", "cpus": 2},
                               "started": f"2026-12-01T{minute // 60:02d}:{minute % 60:02d}:00+00:00"})
            for line, (name, (level, step)) in enumerate(steps.items(), start=2):
                history.record(run_id, perf_record(name, line, level * (1 + step * (i >= STEP_AT)), rng))
            history.finish_run(run_id, {"total": len(steps)})
    return history


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("publish")
    history = synthetic_history(tmp / "history.sqlite")
    done = build_site(history, tmp / "site")
    return tmp / "site", done


def test_the_planted_step_is_marked_at_its_commit(site):
    _, done = site
    assert [(s["series"], s["label"]) for s in done["steps"]] == [("TC_PF_STEP", commit_label(COMMITS[STEP_AT],
                                                                                             False))]
    step = done["steps"][0]
    assert step["before"] == commit_label(COMMITS[STEP_AT - 1], False)
    assert 0.08 < step["change"] < 0.12
    assert step["ci_lo"] > 0.05 and step["confidence"] > 0.99
    assert done["series"] == 3 and done["runs"] == 9


def test_no_step_without_a_change_and_none_from_noise_alone(tmp_path):
    """Negative control: the same history with nothing planted (and other noise) shows no step at all."""
    flat = {"TC_PF_A": (100.0, 0.0), "TC_PF_B": (80.0, 0.0), "TC_PF_C": (5.0, 0.0)}
    for seed in (1, 2, 3):
        done = build_site(synthetic_history(tmp_path / f"h{seed}.sqlite", seed=seed, steps=flat),
                          tmp_path / f"site{seed}")
        assert done["steps"] == [], f"seed {seed}: a step in unchanged code"


def test_a_step_at_the_first_and_the_last_commit_is_found(tmp_path):
    for at in (1, len(COMMITS) - 1):
        level = {"TC_PF_X": (100.0, 0.0)}
        history = History(tmp_path / f"h{at}.sqlite")
        rng = np.random.default_rng(at)
        for i, commit in enumerate(COMMITS):
            run_id = f"run-{at}-{i}"
            history.start_run({"run_id": run_id, "commit": commit, "dirty": False, "kind": "run",
                               "backend": "cpu", "host": {"hostname": "ci", "cpus": 2},
                               "started": f"2026-12-01T00:{i:02d}:00+00:00"})
            history.record(run_id, perf_record("TC_PF_X", 2, level["TC_PF_X"][0] * (1.2 if i >= at else 1.0), rng))
        done = build_site(history, tmp_path / f"site{at}")
        assert [s["label"] for s in done["steps"]] == [commit_label(COMMITS[at], False)]


def test_site_pages_link_runs_series_and_the_limit(site):
    out, _ = site
    index = (out / "index.html").read_text()
    assert commit_label(COMMITS[STEP_AT], False) in index and "TC_PF_FLAT" in index
    series = sorted((out / "series").glob("TC_PF_STEP-*.html"))
    assert len(series) == 1
    page = series[0].read_text()
    assert "data:image/png;base64," in page and "Task-book limit 150 us" in page
    assert len(list((out / "runs").glob("*.html"))) == 9
    run_pages = sorted((out / "runs").glob("*.html"))
    assert any("previous run" in p.read_text() for p in run_pages)
    assert all("../series/TC_PF_STEP-" in p.read_text() for p in run_pages)


@pytest.mark.skipif(chromium() is None, reason="requires chromium (apt-get install chromium; CI installs it)")
def test_site_in_a_real_browser(site):
    out, _ = site
    with Browser(chromium()) as browser:
        index = browser.look(out / "index.html")
        assert index.problems == []
        with browser.open(out / "index.html") as tab:
            tab.type("#filter", "FLAT")
            assert tab.evaluate("document.getElementById('shown').textContent") == "1 of 3 series"
        page = browser.look(sorted((out / "series").glob("TC_PF_STEP-*.html"))[0])
        assert page.problems == [] and page.images == 1  # look() reports an image that did not decode


def test_bisect_finds_the_first_slower_commit():
    commits = [f"c{i}" for i in range(10)]
    calls = []

    def regressed(good: str, head: str) -> bool:
        calls.append((good, head))
        return int(head[1:]) >= 6

    first, trail = bisect(commits, regressed)
    assert first == "c6" and len(trail) <= 4 and all(g != h for g, h in calls)
    assert bisect(commits, lambda good, head: False)[0] == "c9"  # nothing slower: the end, taken as bad unchecked
    with pytest.raises(ValueError):
        bisect(["only"], regressed)


def test_bad_input_is_one_line_and_exit_3(tmp_path, capsys):
    assert main(["publish", "--history", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "s")]) == Exit.ENV
    assert capsys.readouterr().err.strip().count("\n") == 0
    assert main(["publish", "--find", "nonsense", "--history", str(tmp_path / "h.sqlite")]) == Exit.ENV
    err = capsys.readouterr().err.strip()
    assert "GOOD..BAD" in err and err.count("\n") == 0


def test_publish_replaces_only_its_own_site(tmp_path, capsys):
    synthetic_history(tmp_path / "h.sqlite", runs_per_commit=(1,) * 7)
    argv = ["publish", "--history", str(tmp_path / "h.sqlite"), "--out", str(tmp_path / "site")]
    assert main(argv) == Exit.OK and main(argv) == Exit.OK  # its own site: replaced
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    assert main(argv[:-1] + [str(tmp_path / "mine")]) == Exit.ENV
    assert "did not make" in capsys.readouterr().err
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_the_cli_prints_the_step(tmp_path, capsys):
    synthetic_history(tmp_path / "h.sqlite")
    assert main(["publish", "--history", str(tmp_path / "h.sqlite"), "--out", str(tmp_path / "site")]) == Exit.OK
    out = capsys.readouterr().out
    assert "TC_PF_STEP (cpu on host ci, 2 CPUs) +" in out and commit_label(COMMITS[STEP_AT], False) in out
    assert "published 3 series from 9 runs, 1 steps" in out


def test_find_bisects_a_repository_with_ab(monkeypatch, capsys, tmp_path):
    """--find over the three commits after the first of a fresh repository, with harness ab stood in by sides whose
    samples are 10 % slower from the second on: the glue (rev-list, each ab's verdict, the answer, exit codes)."""
    import subprocess
    from types import SimpleNamespace

    import harness.flows.ab

    def git(*argv: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv], cwd=tmp_path,
                              capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    for i in range(4):
        git("commit", "-q", "--allow-empty", "-m", f"commit {i}")
    monkeypatch.chdir(tmp_path)
    commits = git("rev-list", "--reverse", "--first-parent", "HEAD~3..HEAD").split()
    slow = set(commits[1:])  # the first slower commit is commits[1]
    rng = np.random.default_rng(5)

    def side(rev: str) -> SimpleNamespace:
        level = 110.0 if rev in slow else 100.0
        timing = {"samples_us": (level * (1 + 0.005 * rng.standard_normal(60))).tolist()}
        return SimpleNamespace(run_id=f"run-{rev[:8]}", records=[{"case_name": "TC_PF_X", "op": "csymm",
                                                                  "timing": timing}])

    monkeypatch.setattr(harness.flows.ab, "run_ab", lambda a, b, *args, **kwargs: (side(a), side(b)))
    assert main(["publish", "--find", "HEAD~3..HEAD", "-k", "TC_PF_X"]) == Exit.OK
    assert f"first slower commit: {commits[1]}" in capsys.readouterr().out
    slow.clear()  # nothing slower: the end of the range is named, unchecked, with exit 2
    assert main(["publish", "--find", "HEAD~3..HEAD", "-k", "TC_PF_X"]) == Exit.INSUFFICIENT
    assert "BAD taken as slower unchecked" in capsys.readouterr().out
