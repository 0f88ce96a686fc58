"""Fixtures shared by the project's tests, and the `slow` marker's rules (see tests/README.md):

* the tests mirror the source: unit tests in `tests/<room>/`, the suites that run the whole harness in folders of
  their own (SLOW_SUITES), helpers in `tests/helpers/` (on the path, so `from tables import ...` works from every
  folder), native sources in `tests/native/`;
* a bare `pytest` (the testpaths, no paths named) skips the tests marked slow and every test of SLOW_SUITES, for a
  quick local run; `--slow` runs them too (CI does, through .ci/run), and so does naming a file, a directory or a
  test;
* slow tests are scheduled first, so that under xdist no worker ends the run alone on a long test, and the table
  generations they start fill the on-disk table cache (harness.tables.cache) before other tests wait on it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

#: Under xdist each worker has a core of its own, and BLAS threads on top of that oversubscribe the cores, where
#: OpenBLAS's threads spin waiting for one (the fast suite at -n 2: 102 s of user CPU with the default threads, 87 s
#: with one). The harness processes the tests start inherit the variable; the worker's own BLAS libraries are limited
#: below (some are loaded before this file is).
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from scipy.linalg import blas as _blas  # noqa: F401 - loaded now, so that the limit covers scipy's BLAS too
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")

from harness.model.abi import Status
from harness.backends import aclblas_lib
from harness.backends.build import build_twin

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
#: The helpers, and only they: what several test files share lives in tests/helpers/ and is imported by module name
#: (`from processes import harness`); no test imports another test module (tests/shape/test_layout.py holds to it).
#: Test file names stay unique across folders (pytest's rootdir import mode requires it).
sys.path[:0] = [str(TESTS / "helpers")]
#: The suites that run the whole harness (command lines end to end, hostile operators, servers and clusters, the
#: documentation's commands, fuzzing): each test starts workers or processes, minutes of CPU together. A bare pytest
#: leaves them to --slow like the tests marked slow; the unit tests of the rooms stay its quick loop.
SLOW_SUITES = ("e2e", "isolation", "scale", "docs", "fuzz")

#: Plugins of the machine's Python that the project does not use. The suite starts pytest inside pytest (the plugin's
#: tests: about fifty processes with their xdist workers) and, where these are installed, each of those processes
#: spent ~1 s of CPU loading them (Hypothesis's alone imports 1.2 s of modules): ~50 s of CPU in CI.
UNUSED_PLUGINS = ("hypothesispytest", "benchmark")
_ADDOPTS = os.environ.get("PYTEST_ADDOPTS", "")
os.environ["PYTEST_ADDOPTS"] = " ".join([_ADDOPTS, *(f"-p no:{name}" for name in UNUSED_PLUGINS
                                                     if f"no:{name}" not in _ADDOPTS)]).strip()

#: The judge's golden cache (harness.judge.golden_cache) off for the suite: tests count the goldens a run computes,
#: and an entry left by an earlier test would turn them into hits. tests/judge/test_golden_cache.py turns it on in a
#: temporary directory.
os.environ.setdefault("HARNESS_GOLDEN_CACHE", "0")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true",
                     help="also run the tests marked slow when no path is named (a bare pytest skips them)")


@pytest.hookimpl(trylast=True)  # after pytest's own grouping by fixture scope, which would undo the order
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.parent.name in SLOW_SUITES and item.path.parent.parent == TESTS:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: slow first, else as collected
    if config.getoption("--slow") or config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return
    skip = pytest.mark.skip(reason="slow: a bare pytest skips it; run with --slow (as CI does) or name its file "
                            "or folder")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(skip)


def _native_lib(tmp_path_factory, name: str, *flags: str) -> Path:
    """tests/native/<name>.c built as a shared library (skips without a C compiler)."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("requires a C compiler")
    out = tmp_path_factory.mktemp(name) / f"lib{name}.so"
    subprocess.run([cc, "-shared", "-fPIC", *flags, "-o", str(out), str(ROOT / f"tests/native/{name}.c")], check=True)
    return out


@pytest.fixture(scope="session")
def toy_lib(tmp_path_factory) -> Path:
    """tests/native/toy_ops.c built as an --operator-lib (an independent, deliberately simple ABI implementation)."""
    return _native_lib(tmp_path_factory, "toy_ops", "-O1")


@pytest.fixture(scope="session")
def hostile_mem_lib(tmp_path_factory) -> Path:
    """tests/native/hostile_mem.c: toy_ops.c plus memory faults armed per row by HOSTILE_<FAULT>_M=<m>."""
    return _native_lib(tmp_path_factory, "hostile_mem", "-O1", "-pthread")


@pytest.fixture(scope="session")
def hostile_proc_lib(tmp_path_factory) -> Path:
    """tests/native/hostile_proc.c built as an --operator-lib: correct results, and a fault per row picked by m."""
    return _native_lib(tmp_path_factory, "hostile_proc", "-O1", "-pthread")


@pytest.fixture(scope="session")
def plain_lib(tmp_path_factory) -> Path:
    """tests/native/plain_ops.c: the whole ABI in plain loops, another summation order than the twin's (no FMA)."""
    return _native_lib(tmp_path_factory, "plain_ops", "-O2", "-ffp-contract=off")


@pytest.fixture(scope="module")
def twin():
    """(lib, handle) of the CPU twin, built on first use; one handle per test module."""
    lib = aclblas_lib.load_aclblas(str(build_twin()))
    handle = aclblas_lib.create_handle(lib)
    yield lib, handle
    aclblas_lib.destroy_handle(lib, handle)


@pytest.fixture
def handle_with_cores(twin):
    """Makes fresh twin handles limited to a number of worker cores, destroyed after the test: a result must not
    depend on how the work is split."""
    lib, _ = twin
    made: list[int] = []

    def make(cores: int) -> int:
        handle = aclblas_lib.create_handle(lib)
        made.append(handle)
        assert lib.aclblasTwinSetCoreCount(handle, cores) == Status.SUCCESS
        return handle

    yield make
    for handle in made:
        aclblas_lib.destroy_handle(lib, handle)


@pytest.fixture
def own_tmp(tmp_path, monkeypatch) -> Path:
    """`tmp_path` as the temporary directory of this test and of the processes it starts (tempfile.tempdir,
    TMPDIR), for tests that leave fault notes there: in the shared /tmp, a harness run another xdist worker starts
    meanwhile sweeps any note whose reader is gone, e.g. a made-up worker's, or a child's once it has exited."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    return tmp_path
