"""Fixtures shared by the project's tests."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness.abi import Status
from harness.backends import aclblas_lib
from harness.backends.build import build_twin

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def toy_lib(tmp_path_factory) -> Path:
    """tests/native/toy_ops.c built as an --operator-lib (an independent, deliberately simple ABI implementation)."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("requires a C compiler")
    out = tmp_path_factory.mktemp("toy") / "libtoy_ops.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(out), str(ROOT / "tests/native/toy_ops.c")],
                   check=True)
    return out


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
