"""Foreign operator libraries: a few lines of C++ against the project's ABI header, built like the twin, for the
tests of what the harness does with a library that is not the twin (no twin extensions, operators missing)."""
from __future__ import annotations

import shutil
from pathlib import Path

from harness.backends import build

#: Handle management only; a test appends the operators its library has.
HANDLE = """
#include <new>
#include "aclblas_abi.h"
struct _aclblas_handle { int unused; };
extern "C" {
aclblasStatus_t aclblasCreate(aclblasHandle_t* h) { *h = new _aclblas_handle(); return ACLBLAS_STATUS_SUCCESS; }
aclblasStatus_t aclblasDestroy(aclblasHandle_t h) { delete h; return ACLBLAS_STATUS_SUCCESS; }
aclblasStatus_t aclblasSetStream(aclblasHandle_t, void*) { return ACLBLAS_STATUS_SUCCESS; }
aclblasStatus_t aclblasSetWorkspace(aclblasHandle_t, void*, size_t) { return ACLBLAS_STATUS_SUCCESS; }
}
"""


def build_library(tmp_path: Path, source: str) -> Path:
    """`source` compiled as an operator library with the ABI header beside it (cached under tmp_path)."""
    tree = tmp_path / "operators"
    shutil.copytree(build.OPERATORS_DIR / "include", tree / "include")
    (tree / "cpu_twin").mkdir()
    (tree / "cpu_twin" / "foreign.cpp").write_text(source)
    return build.build_twin(source_dir=tree, cache_dir=tmp_path / "cache")
