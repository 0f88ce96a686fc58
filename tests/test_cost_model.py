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


def test_the_plane_design_model_reproduces_its_emulator_counters():
    # 1024^2 LEFT, beta 0: 331 MB GM (cube copies 276.8 MB + SIMT), 79.7 MB unique, 29.4 MB workspace (measured on
    # ascend-cpu before the redesign, docs/ascend.md)
    before = cost_model.csymm_plane_design(1024, 1024, True)
    assert before.gm_bytes / 1e6 == pytest.approx(331.4, abs=0.1)
    assert before.unique_gm_bytes / 1e6 == pytest.approx(79.7, abs=0.1)
    assert before.workspace_bytes / 1e6 == pytest.approx(29.4, abs=0.1)


@pytest.mark.parametrize("left", [True, False])
def test_each_design_moves_less_and_launches_less_than_the_one_before(left):
    m = n = 1024
    before = cost_model.csymm_plane_design(m, n, left)
    now_unique = cost_model.csymm_unique_gm_bytes(m, n, left, beta_zero=True)
    target = cost_model.csymm_on_chip_design(m, n, left)
    assert before.cube_macs == target.cube_macs == 4 * m * n * m
    assert target.unique_gm_bytes < now_unique < before.unique_gm_bytes
    assert target.launches == 1 < before.launches
    assert target.unique_gm_bytes <= target.gm_bytes


def test_simt_bytes_match_the_kernels_loops():
    # prepare reads A (8k^2) and B (8mn); LEFT writes E(A) (16k^2), RIGHT A (8k^2) and E(B) (16mn); the epilogue
    # (beta != 0) reads P and C and writes C
    assert cost_model.csymm_simt_gm_bytes(4, 2, True, True) == 8 * 16 + 8 * 8 + 16 * 16
    assert cost_model.csymm_simt_gm_bytes(4, 2, False, True) == 8 * 4 + 8 * 8 + 8 * 4 + 16 * 8
    assert cost_model.csymm_simt_gm_bytes(4, 2, True, False) == 8 * 16 + 8 * 8 + 16 * 16 + 24 * 8


def test_small_shapes_use_the_plans_smaller_tiles():
    # 256^2 has 4 tiles of 128 for 36 cores: PlanCsymm halves to 32 (64 tiles), and every tile re-reads panels
    assert cost_model.csymm_tile(256, 256) == 32
    assert cost_model.csymm_tile(1024, 1024) == 128
    # the plane design's 256^2 LEFT counters before the redesign: 20.7 MB GM (docs/ascend.md)
    assert cost_model.csymm_plane_design(256, 256, True).gm_bytes / 1e6 == pytest.approx(20.7, abs=0.1)
