"""The 3M method's arithmetic (harness/kernels/three_m.py): its composition is right on ordinary rows and the
row's gate can fail it; its precision on the emulator's cube is measured by benchmarks/kernel_cost.py and
tests/backends/test_ascend_cpu.py."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.model import abi
from harness.backends import cpu
from harness.kernels import three_m
from harness.tables.load import load_table

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def backend():
    b = cpu.open()
    yield b
    b.close()


def _rows():
    """A LEFT and a RIGHT GEMM row of each epilogue (beta 0, 1, general), both triangles."""
    picked, seen = [], set()
    for case in load_table(ROOT / "cases" / "csymm_test.csv"):
        a = case.args
        if not case.name.startswith("TC_L0_") or case.expected_status != abi.Status.SUCCESS or a.alpha == 0 \
                or a.m * a.n == 0:
            continue
        key = (a.side, a.uplo, 0 if a.beta == 0 else 1 if a.beta == 1 else 2)
        if key not in seen:
            seen.add(key)
            picked.append(pytest.param(case, id=case.id))
    return picked


def test_combine_is_the_3m_formula():
    p1, p2, p3 = (np.array([v], np.float32) for v in (5.0, 3.0, 17.0))
    out = three_m.combine(p1, p2, p3)
    assert out[0] == np.complex64(2 + 9j)  # re = P1 - P2, im = P3 - P1 - P2
    # a NaN imaginary part leaves an Inf real part as it is (as the vector cores' separate fp32 parts would)
    with np.errstate(invalid="ignore"):
        inf = three_m.combine(*(np.array([v], np.float32) for v in (np.inf, 0.0, np.inf)))
    assert np.isposinf(inf.real[0]) and np.isnan(inf.imag[0])


@pytest.mark.parametrize("case", _rows())
def test_3m_on_a_row_passes_its_gate(case, backend):
    judgement = three_m.judge_row(backend, case)
    assert judgement.verdict == "PASS", judgement.reason


def test_a_wrong_combination_fails_the_gate(backend, monkeypatch):
    # negative control: the imaginary part with P2 added instead of subtracted
    case = _rows()[0].values[0]
    monkeypatch.setattr(three_m, "combine", lambda p1, p2, p3: three_m._complex(p1 - p2, p3 - p1 + p2))
    assert three_m.judge_row(backend, case).verdict == "FAIL"
