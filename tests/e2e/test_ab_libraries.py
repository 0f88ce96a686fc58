"""`harness ab` on operator libraries outside this repository (issue 36): two external builds of the twin, one with
the 5 % slowdown define, are told apart (REGRESSION, exit 1) and two identical builds are not; two source revisions
of a user's checkout are built by the user's command in worktrees and recorded with their commits; the options
that do not go together are one line, exit 3."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Few, small rows: two 96x96 csymm perf rows (~140 us a call on the twin), 5 rounds.
ROWS = ["-k", "TC_PF_0014 or TC_PF_0016", "--rounds", "5", "--max-time", "1"]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]


def external_twin(dest: Path, defines: dict) -> Path:
    """The CPU twin built into a cache outside the repository, copied to `dest`."""
    from harness.backends.build import BuildError, build_twin

    try:
        built = build_twin(defines, cache_dir=dest.parent / f"cache-{dest.stem}")
    except BuildError as exc:
        pytest.skip(f"cannot build the CPU twin: {exc}")
    shutil.copy(built, dest)
    return dest


def ab(tmp_path, *argv):
    return subprocess.run([sys.executable, "-c", "from harness.cli import main; import sys; sys.exit(main())", "ab",
                           *argv, str(ROOT / "cases" / "csymm_test.csv"), *ROWS, "--history",
                           str(tmp_path / "h.sqlite"), "--report-dir", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)


@pytest.mark.slow
def test_ab_tells_an_external_slower_build_from_identical_builds(tmp_path):
    base = external_twin(tmp_path / "base.so", {})
    again = external_twin(tmp_path / "again.so", {})  # built again: the same bytes, another file
    slow = external_twin(tmp_path / "slow.so", {"TWIN_SLOWDOWN_PCT": "5"})
    slower = ab(tmp_path, "--lib-a", str(base), "--lib-b", str(slow))
    assert slower.returncode == 1, slower.stdout + slower.stderr
    assert "REGRESSION: 2" in slower.stdout and f"library {slow}" in slower.stdout
    # negative control: the same code in two files is no regression
    same = ab(tmp_path, "--lib-a", str(base), "--lib-b", str(again))
    assert same.returncode in (0, 2), same.stdout + same.stderr
    assert "REGRESSION: 0" in same.stdout
    metas = [json.loads(p.read_text()) for p in sorted((tmp_path / "r").glob("*/report.json"))]
    assert {m["operator"]["path"] for m in metas} == {str(base), str(slow), str(again)}
    assert all(m["settings"]["ab"]["source"] == "lib" and m["operator"]["build_id"] for m in metas)


BUILD_PY = """import shutil, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from harness.backends.build import build_twin
pct = Path("slowdown.txt").read_text().strip()
lib = build_twin({{"TWIN_SLOWDOWN_PCT": pct}} if pct != "0" else {{}}, cache_dir=Path({cache!r}))
Path("out").mkdir(exist_ok=True)
shutil.copy(lib, "out/libops.so")
"""


@pytest.mark.slow
def test_ab_builds_two_revisions_of_the_users_checkout_with_their_command(tmp_path):
    src = tmp_path / "opsrc"
    src.mkdir()
    subprocess.run([*GIT, "-C", str(src), "init", "-q"], check=True)
    (src / "build.py").write_text(BUILD_PY.format(root=str(ROOT), cache=str(tmp_path / "cache")))
    revs = []
    for pct in ("0", "5"):
        (src / "slowdown.txt").write_text(pct + "\n")
        subprocess.run([*GIT, "-C", str(src), "add", "."], check=True)
        subprocess.run([*GIT, "-C", str(src), "commit", "-q", "-m", f"slowdown {pct}"], check=True)
        revs.append(subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True,
                                   check=True).stdout.strip())
    done = ab(tmp_path, "--src", str(src), "--build", f"{sys.executable} build.py", "--lib", "out/libops.so",
              "HEAD~1", "HEAD")
    assert done.returncode in (0, 1, 2), done.stdout + done.stderr
    metas = sorted((json.loads(p.read_text()) for p in (tmp_path / "r").glob("*/report.json")),
                   key=lambda m: m["settings"]["ab"]["side"])
    assert [m["operator"]["revision"]["commit"] for m in metas] == revs
    assert [m["operator"]["label"] for m in metas] == ["HEAD~1", "HEAD"]
    assert all(m["operator"]["revision"]["src"] == str(src) and m["operator"]["revision"]["dirty"] is False
               for m in metas)
    listed = subprocess.run(["git", "-C", str(src), "worktree", "list"], capture_output=True, text=True).stdout
    assert len(listed.strip().splitlines()) == 1  # the worktrees are gone
    # negative control: a build command that fails is one line, exit 3
    failed = ab(tmp_path, "--src", str(src), "--build", "false", "--lib", "out/libops.so", "HEAD~1", "HEAD")
    assert failed.returncode == 3 and "--build 'false' exited 1" in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, says", [
    (["--lib-a", "x.so"], "--lib-a and --lib-b go together"),
    (["--lib-a", "x.so", "--lib-b", "y.so", "--src", "."], "--lib-a and --lib-b go together"),
    (["--lib-a", "x.so", "--lib-b", "y.so"], "no such operator library: x.so"),
    (["--src", ".", "HEAD", "HEAD"], "--src, --build and --lib go together"),
    (["--lib-a", "x.so", "--lib-b", "y.so", "--define-b", "A=1"], "--define-a/--define-b build the twin"),
])
def test_ab_options_that_do_not_go_together_are_one_line(tmp_path, argv, says):
    done = subprocess.run([sys.executable, "-c", "from harness.cli import main; import sys; sys.exit(main())", "ab",
                           *argv, str(ROOT / "cases" / "csymm_test.csv"), "--history", str(tmp_path / "h.sqlite")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 3 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1
