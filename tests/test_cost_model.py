"""The floor-time model: its arithmetic, and that its analytic GM counts agree with what the kernels do."""
from __future__ import annotations

import pytest

from harness import cost_model


def test_floor_is_the_larger_of_cube_and_memory_plus_launch_gaps():
    hw = cost_model.Hardware(cube_cores=1, clock_ghz=1.0, fp32_macs_per_cycle=1000, hbm_gb_per_s=1.0,
                             launch_gap_us=2.0)
    work = cost_model.Work(launches=3, cube_macs=5_000_000, gm_bytes=10_000, unique_gm_bytes=2_000,
                           workspace_bytes=0)
    f = cost_model.floor_us(work, hw)
    assert f["cube_us"] == pytest.approx(5.0)        # 5e6 MAC at 1e3 MAC/cycle and 1 GHz
    assert f["memory_us"] == pytest.approx(2.0)      # unique bytes, not requested bytes: 2e3 B at 1 GB/s
    assert f["floor_us"] == pytest.approx(5.0 + 6.0)
    assert cost_model.floor_us(work, hw, hf32=True)["cube_us"] == pytest.approx(5.0 / hw.hf32_speedup)


@pytest.mark.parametrize("left", [True, False])
def test_the_proposed_design_moves_less_and_launches_less(left):
    m = n = 1024
    current_unique = cost_model.csymm_unique_gm_bytes(m, n, left, beta_zero=True)
    proposed = cost_model.csymm_embedded_design(m, n, left)
    assert proposed.launches == 2
    assert proposed.cube_macs == 4 * m * n * m
    assert proposed.unique_gm_bytes < current_unique
    assert proposed.unique_gm_bytes <= proposed.gm_bytes


def test_simt_bytes_match_the_kernels_loops():
    # prepare: A 8k^2 read + 12k^2 planes written, B 8mn read + 8mn planes written; epilogue: 2 planes read,
    # C written (and read when beta != 0)
    assert cost_model.csymm_simt_gm_bytes(4, 2, True, True) == 20 * 16 + 16 * 8 + 16 * 8
    assert cost_model.csymm_simt_gm_bytes(4, 2, True, False) == 20 * 16 + 16 * 8 + 24 * 8
