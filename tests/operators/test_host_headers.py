"""The host functions only the Ascend build calls (the twin's tests cover the rest): csymm operand workspace and the
handle's workspace-source decision, compiled from operators/host/ with the system C++ compiler."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = r"""
#include <cstdio>
#include "csymm_host.h"
#include "handle_host.h"
using namespace blas_host;
int main() {
    const auto G = CsymmEpilogue::GENERAL;
    const auto Z = CsymmEpilogue::BETA_ZERO;
    // LEFT 100 x 30: k = m = 100; embedded alpha*A 200 x 208 floats (+ P 30 x 208 unless beta == 0)
    std::printf("%llu %llu\n", (unsigned long long)CsymmWorkspaceBytes(100, 30, kSideLeft, CsymmPath::GEMM, G),
                (unsigned long long)CsymmWorkspaceBytes(100, 30, kSideLeft, CsymmPath::GEMM, Z));
    // RIGHT 100 x 30: k = n = 30; alpha*A 30 x 64, embedded B 60 x 208 (+ P 30 x 208 unless beta == 0)
    std::printf("%llu %llu\n", (unsigned long long)CsymmWorkspaceBytes(100, 30, kSideRight, CsymmPath::GEMM, G),
                (unsigned long long)CsymmWorkspaceBytes(100, 30, kSideRight, CsymmPath::GEMM, Z));
    std::printf("%llu %llu\n", (unsigned long long)CsymmWorkspaceBytes(100, 30, kSideLeft, CsymmPath::SCALE_ONLY, G),
                (unsigned long long)CsymmWorkspaceBytes(100, 30, kSideLeft, CsymmPath::QUICK_RETURN, G));
    const uint64_t cap = kMaxLibraryWorkspaceBytes;
    std::printf("%d %d %d %d %d %d\n", (int)WorkspaceSourceOf(0, true, 0), (int)WorkspaceSourceOf(64, true, 64),
                (int)WorkspaceSourceOf(65, true, 64), (int)WorkspaceSourceOf(cap, false, 0),
                (int)WorkspaceSourceOf(cap + 1, false, 0), (int)WorkspaceSourceOf(cap + 1, true, cap + 1));
    return 0;
}
"""


def _ceil(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def test_csymm_workspace_and_workspace_source(tmp_path):
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("requires a C++ compiler")
    (tmp_path / "t.cpp").write_text(PROGRAM)
    subprocess.run([cxx, "-std=c++17", "-I", str(ROOT / "operators/host"), "-I", str(ROOT / "operators/include"),
                    str(tmp_path / "t.cpp"), "-o", str(tmp_path / "t")], check=True)
    lines = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True, check=True).stdout.splitlines()

    p = _ceil(30 * 208, 128)
    assert lines[0].split() == [str((_ceil(200 * 208, 128) + p) * 4), str(_ceil(200 * 208, 128) * 4)]
    right = _ceil(30 * 64, 128) + _ceil(60 * 208, 128)
    assert lines[1].split() == [str((right + p) * 4), str(right * 4)]
    assert lines[2] == "0 0"
    # NONE, USER, USER_TOO_SMALL, LIBRARY, OVER_LIBRARY_CAP, USER (a user buffer is not capped)
    assert lines[3].split() == ["0", "1", "3", "2", "4", "1"]
