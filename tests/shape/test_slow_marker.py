"""The `slow` marker's rules (tests/conftest.py), in a throw-away project that uses the same conftest: a bare
`pytest` skips slow tests and the suites' tests (an `e2e/` folder) and says why, `--slow` or a named path runs them,
and slow tests are scheduled first."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = t\nmarkers =\n    slow: slow\n")
    (tmp_path / "t").mkdir()
    shutil.copy(TESTS / "conftest.py", tmp_path / "t" / "conftest.py")
    (tmp_path / "t" / "test_x.py").write_text(
        "import pytest\n\n\n"
        "def test_quick():\n    open('order.log', 'a').write('quick\\n')\n\n\n"
        "@pytest.mark.slow\ndef test_long():\n    open('order.log', 'a').write('long\\n')\n")
    for folder in ("e2e", "store"):  # a suite's folder, and a room's (negative control: its tests stay quick)
        (tmp_path / "t" / folder).mkdir()
        (tmp_path / "t" / folder / f"test_{folder}.py").write_text(
            f"def test_{folder}():\n    open('order.log', 'a').write('{folder}\\n')\n")
    return tmp_path


def pytest_in(project: Path, *args: str) -> tuple[str, list[str]]:
    (project / "order.log").unlink(missing_ok=True)
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *args], cwd=project,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    log = project / "order.log"
    return result.stdout, log.read_text().split() if log.is_file() else []


@pytest.mark.slow  # three inner pytest sessions: over a minute on the loaded 2-core machine
def test_a_bare_run_skips_slow_tests_and_says_why(project):
    """As the README's test command runs: under xdist, whose workers collect with the controller's arguments."""
    out, ran = pytest_in(project, "-n", "2")
    assert sorted(ran) == ["quick", "store"] and "2 passed, 2 skipped" in out and "run with --slow" in out


@pytest.mark.slow
def test_slow_or_a_named_path_runs_them_first(project):
    out, ran = pytest_in(project, "-p", "no:xdist", "--slow")
    assert sorted(ran[:2]) == ["e2e", "long"] and sorted(ran[2:]) == ["quick", "store"], out
    for args in (["-p", "no:xdist", "t/test_x.py"], ["-p", "no:xdist", "t/e2e"]):
        out, ran = pytest_in(project, *args)
        assert ran == (["long", "quick"] if args[-1].endswith(".py") else ["e2e"]), (args, out)


@pytest.mark.skipif(not os.environ.get("PYTEST_XDIST_WORKER"), reason="the limit is set for xdist workers only")
def test_an_xdist_worker_runs_blas_on_one_thread():
    """tests/conftest.py: one BLAS thread per xdist worker and for the processes it starts (without the limit, the
    OpenBLAS libraries run one thread per core: 2 here)."""
    from threadpoolctl import threadpool_info

    assert os.environ.get("OPENBLAS_NUM_THREADS") == "1"
    assert {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"} == {1}
