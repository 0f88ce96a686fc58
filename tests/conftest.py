"""Fixtures shared by the project's tests."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

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
