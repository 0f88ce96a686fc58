"""The floor-time model: its documented rates, its arithmetic, the designs' counts, and the benchmark's JSON."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.kernels import cost_model as cm

ROOT = Path(__file__).resolve().parents[2]
ROWS = ("csymm_256_left_upper", "csymm_1024_left_lower", "csymm_1024_right_upper", "sgemm_1x1024", "sgemm_256x96",
        "sgemm_4x4096")


def test_rates_are_table_2_of_the_cube_performance_doc():
    # asc-devkit Cube指令理论性能汇总.md table 2 (arch 3510): float 16x16x1, HF32 16x16x8, half 16x16x16
    assert cm.MACS_PER_CYCLE["fp32"] == 256 and cm.MACS_PER_CYCLE["hf32"] == 2048
    assert cm.MACS_PER_CYCLE["half"] == 4096
    assert "Cube指令理论性能汇总.md, table 2" in cm.SOURCES["mmad"]
    # every rate the floor uses names a source
    floor = cm.floor(cm.Design("d", 1, (((16, 16, 8),),), 0, False, False), 36, "fp32")
    assert len(floor["rates_source"]) == 4 and all(floor["rates_source"])


def test_the_clock_follows_from_the_fp8_peak_so_the_chip_rate_does_not_depend_on_the_core_count():
    for cores in cm.CUBE_CORES:
        chip_fp8_flops = 2 * cm.MACS_PER_CYCLE["fp8"] * cores * cm.clock_ghz(cores) * 1e9
        assert chip_fp8_flops == pytest.approx(1e15)
    # a perfectly balanced 1024^2 Csymm (4 m n k real MACs) at fp32: ~275 us on either core count
    macs = 4 * 1024 ** 3
    ideal = macs / (256 * 36 * cm.clock_ghz(36) * 1e3)
    assert ideal == pytest.approx(274.9, abs=0.1)


def test_a_partial_wave_of_tiles_costs_a_whole_tile():
    tile = (128, 128, 1024)
    one = cm.cube_us([tile] * 36, 36, "fp32")
    assert one == pytest.approx(128 * 128 * 1024 / 256 / (cm.clock_ghz(36) * 1e3))
    assert cm.cube_us([tile] * 37, 36, "fp32") == pytest.approx(2 * one)
    assert cm.cube_us([tile] * 72, 36, "fp32") == pytest.approx(2 * one)


def test_split_hf32_costs_three_eighths_of_fp32_and_operands_round_up_to_fractals():
    assert cm.tile_cycles(128, 256, 2048, "hf32x3") == pytest.approx(3 / 8 * cm.tile_cycles(128, 256, 2048, "fp32"))
    assert cm.tile_cycles(1, 1, 1, "fp32") == 16 * 16 * 8 / 256


def test_launch_costs_are_the_public_measurement():
    assert cm.launch_us(0) == 0.0
    assert cm.launch_us(1) == 7.0
    assert cm.launch_us(4) == 7.0 + 3 * 3.0


def test_floor_is_the_larger_of_cube_and_memory_plus_the_launches():
    tiles = ((128, 128, 1024),) * 36
    fast = cm.floor(cm.Design("d", 2, (tiles,), 0, False, False), 36, "fp32")
    assert fast["floor_us"] == pytest.approx(fast["cube_us"] + 10.0)
    heavy = cm.floor(cm.Design("d", 2, (tiles,), 10 ** 10, False, False), 36, "fp32")
    assert heavy["memory_us"] == pytest.approx(10 ** 10 / 1.6e6) and heavy["memory_us"] > heavy["cube_us"]
    assert heavy["floor_us"] == pytest.approx(heavy["memory_us"] + 10.0)


@pytest.mark.parametrize("left", [True, False])
def test_csymm_designs(left):
    m = n = 1024
    built, workspace, three_m, before, vector, chunked = cm.csymm_designs(m, n, left, True, 36)
    assert built.built and not workspace.built and not three_m.built and not before.built and vector.built
    # 3M has no kernel (its precision: harness/kernels/three_m.py); the vector path runs no cube products
    assert built.built_products and workspace.built_products and not three_m.built_products
    assert not vector.built_products and vector.launches == 1 and cm.cube_macs(vector) == 0
    # ceil(mn / 72) = 14564 elements per vector core: 228 rounds of 64 lanes, 4k multiply-adds each
    assert vector.vector_cycles == cm.csymm_vector_path_cycles(m, n, left, 72) == 228 * 4 * m
    assert cm.floor(vector, 36, "fp32")["vector_us"] == pytest.approx(vector.vector_cycles / (cm.clock_ghz(36) * 1e3))
    # issue 23: the NaN flag holds the call's epoch, no memset: one mixed launch is the whole call
    assert built.launches == 1 and cm.csymm_designs(m, n, left, False, 36)[0].launches == 1
    assert workspace.launches == 2  # memset + mixed
    assert before.launches == 4 and cm.csymm_designs(m, n, left, False, 36)[3].launches == 5  # + epilogue
    assert cm.cube_macs(built) == cm.cube_macs(workspace) == 4 * m * n * m  # one real GEMM n x 2m x 2k
    assert cm.cube_macs(three_m) == cm.cube_macs(chunked) == 3 * m * n * m
    assert three_m.launches == chunked.launches == 1 and not chunked.built and not chunked.built_products
    # on chip: A's triangle and B read once, C written (and read when beta != 0), nothing through a workspace
    k = m if left else n
    assert built.unique_gm_bytes == 4 * k * (k + 1) + 16 * m * n
    assert cm.csymm_designs(m, n, left, False, 36)[0].unique_gm_bytes == 4 * k * (k + 1) + 24 * m * n
    assert built.unique_gm_bytes < workspace.unique_gm_bytes
    # the split's lo operands went through GM only in the workspace design (prepare wrote them, the cube read them)
    assert workspace.split_gm_bytes == 2 * 4 * (n * 2 * m + (2 * m * 2 * m if left else 2 * m * 2 * n))
    assert built.split_gm_bytes == 0
    assert cm.floor(built, 36, "hf32x3")["memory_us"] == cm.floor(built, 36, "fp32")["memory_us"]
    assert cm.floor(workspace, 36, "hf32x3")["memory_us"] > cm.floor(workspace, 36, "fp32")["memory_us"]


def test_on_chip_csymm_floors():
    # 36 cube cores, split HF32: 256^2 14.4 (workspace, 2 tasks) -> 8.8 us (on chip, one launch: the memory floor
    # was above the cube's, and the memset's 3 us are gone), 1024^2 stays cube-bound (~123 us on chip, one launch)
    # while its memory floor drops from 70.8 to 13.1 us
    small = [cm.floor(d, 36, "hf32x3") for d in cm.csymm_designs(256, 256, True, True, 36)[:2]]
    assert small[0]["floor_us"] == pytest.approx(8.8, abs=0.1) and small[1]["floor_us"] == pytest.approx(14.4, abs=0.1)
    big = [cm.floor(d, 36, "hf32x3") for d in cm.csymm_designs(1024, 1024, True, True, 36)[:2]]
    assert big[0]["floor_us"] == pytest.approx(big[1]["floor_us"] - 3.0) == pytest.approx(123.0, abs=0.5)
    assert big[0]["memory_us"] == pytest.approx(13.1, abs=0.05) and big[1]["memory_us"] == pytest.approx(70.8, abs=0.1)


def test_plan_csymm_blocks_shrink_for_small_shapes():
    # 256^2 has 4 blocks of 128 for 36 cores: PlanCsymm halves to 32 (64 tiles)
    assert cm.csymm_block(256, 256, 36) == 32 and cm.csymm_block(1024, 1024, 36) == 128
    assert len(cm.csymm_tiles(256, 256, True, 36)) == 64
    # tails: 100 x 40 RIGHT (k = n = 40), blocks of 32: 4 x 2 tiles, the last ones partial
    tiles = cm.csymm_tiles(100, 40, False, 36)
    assert sum(r * c * k for r, c, k in tiles) == 4 * 100 * 40 * 40


def test_sgemm_launches_before_and_after_folding_the_batches():
    built, folded = cm.sgemm_designs(96, 96, 96, 256, beta_zero=True, fast=True)
    # NaN guard (scan + fallback in one launch since issue 38) and the one gemm; no memset
    assert built.launches == 3 + 256 and folded.launches == 2
    assert folded.built and not built.built
    # the general path: one gemm and one combine per batch before; one mixed launch (epilogue fused) now
    before, fused = cm.sgemm_designs(96, 96, 96, 256, beta_zero=False, fast=False)
    assert before.launches == 3 + 2 * 256 and not before.built
    assert fused.launches == 2 and fused.built and fused.unique_gm_bytes > folded.unique_gm_bytes  # temp slots
    assert cm.cube_macs(built) == cm.cube_macs(folded) == 256 * 96 ** 3
    # 256 one-tile launches use one core each; one grid of 256 tiles uses them all
    b, f = cm.floor(built, 36, "fp32"), cm.floor(folded, 36, "fp32")
    assert f["cube_us"] < b["cube_us"] / 20 and f["floor_us"] < b["floor_us"] / 20


def test_no_fp32_design_reaches_the_1024_limits_on_documented_rates():
    for left, limit in ((True, 89.27), (False, 86.34)):
        variants = [cm.floor(d, cores, p) for cores in cm.CUBE_CORES for d in cm.csymm_designs(1024, 1024, left,
                                                                                                True, cores)
                    for p in cm.PRECISIONS]
        reach = cm.limit_budget(limit, variants)  # the task book's device scope: the whole limit is cube budget
        assert reach["limit_scope"] == "device" and reach["cube_budget_us"] == limit
        assert reach["cube_over_budget"]["fp32"] > 2.3  # the best fp32 cube time is > 2.3x the budget
        assert not any("/ fp32 /" in v for v in reach["floor_under_limit"])
        # split HF32 only under the limit with the 3M products in one launch
        assert all("3M" in v for v in reach["floor_under_limit"] if "/ hf32x3 /" in v)
        # no tiling of the built products does it either: every cube core busy to the end is 103.1 us of device time
        built = [v for v in variants if v["built_products"] and v["precision"] == "hf32x3"]
        assert all(v["balanced_cube_us"] <= v["cube_us"] for v in variants)
        assert min(v["balanced_cube_us"] for v in built) == pytest.approx(103.1, abs=0.1)
        assert min(v["balanced_cube_us"] for v in built) > limit
        # a call-scope limit leaves one launch less for the cube (negative control of the scope argument)
        assert cm.limit_budget(limit, variants, "call")["cube_budget_us"] == limit - cm.launch_us(1)


def test_kernel_cost_json_prints_one_object_with_every_row_and_field():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks/kernel_cost.py"), "--json", "--model"],
                         capture_output=True, text=True, cwd=ROOT, check=True, timeout=300).stdout
    data = json.loads(out)
    for row in ROWS:
        assert data[row], row
        for v in data[row]:
            for key in ("name", "precision", "cube_cores", "launches", "cube_macs", "floor_us", "device_floor_us",
                        "call_floor_us", "by_hf32_rate", "rates_source"):
                assert key in v, (row, key)
            assert v["rates_source"] and all(v["rates_source"]), (row, v["name"])
            if "csymm" in row:  # each floor against the task-book limit in its own scope
                assert v["scopes"]["device"]["limit_us"] == data["to_reach_limit"][row]["limit_us"]
                assert v["scopes"]["device"]["limit_is"] == "declared"
        assert {v["precision"] for v in data[row]} == {"fp32", "hf32", "hf32x3"}
        assert {v["precision"] for v in data[row] if v["name"] == cm.VECTOR_PATH} == ({"fp32"} if "csymm" in row
                                                                                     else set())
        assert sum(v["chosen"] for v in data[row]) == 2, row  # one design and precision per core count
        assert {v["cube_cores"] for v in data[row]} == {28, 36}
    assert data["to_reach_limit"]["csymm_1024_left_lower"]["limit_us"] == 89.27
    assert data["to_reach_limit"]["csymm_1024_left_lower"]["limit_scope"] == "device"  # the baseline table's scope
    # the 256^2 row in the task book's device scope: the chosen one-launch split-HF32 variants are under 7.53 us
    chosen = [v for v in data["csymm_256_left_upper"] if v["chosen"]]
    assert chosen and all(v["scopes"]["device"]["under_limit"] for v in chosen)


@pytest.mark.parametrize("cores", cm.CUBE_CORES)
def test_the_vector_path_takes_the_small_shapes_and_the_cube_the_rest(cores):
    # csymm_path (the host's VectorPath): vector where its documented cycles are not above the cube path's
    aivs = cm.aiv_count(cores)
    assert cm.csymm_path(16, 16, True, cores, aivs) == cm.csymm_path(64, 64, False, cores, aivs) == "vector"
    assert cm.csymm_path(256, 256, True, cores, aivs) == cm.csymm_path(1024, 1024, False, cores, aivs) == "cube"
    # along the square shapes the choice switches once, from vector to cube
    paths = [cm.csymm_path(s, s, True, cores, aivs) for s in range(1, 300, 3)]
    switch = paths.index("cube")
    assert set(paths[:switch]) == {"vector"} and set(paths[switch:]) == {"cube"}
    # the cube path's cycles include its vector cores' work: the scan and the panels (4 x 4: one fractal of Mmad,
    # 8 cycles, is less than the path)
    assert cm.csymm_cube_path_cycles(4, 4, True, cores, aivs) > 8
    # at 256^2 the vector path's floor is above the built cube design's
    designs = {d.name: cm.floor(d, cores, "fp32") for d in cm.csymm_designs(256, 256, True, True, cores)}
    built = cm.floor(cm.csymm_designs(256, 256, True, True, cores)[0], cores, "hf32x3")
    assert designs[cm.VECTOR_PATH]["floor_us"] > built["floor_us"]


def test_floors_are_stated_in_the_device_and_the_call_scope_side_by_side():
    d = cm.Design("d", 3, (((128, 128, 1024),) * 36,), 0, False, False)
    f = cm.floor(d, 36, "fp32")
    # device: the kernels' work only; call: plus the documented launches (7 + 2 x 3 us); floor_us stays the call one
    assert f["device_floor_us"] == pytest.approx(f["cube_us"])
    assert f["call_floor_us"] == pytest.approx(f["device_floor_us"] + 13.0) == f["floor_us"]


def test_each_floor_is_judged_against_a_limit_of_its_own_scope():
    # the 256^2 task-book row (7.53 us, declared `device`): the built split-HF32 launch at 28 cores is ~2.1 us of
    # device work, under the limit; its call-scope figure (+7 us launch) is compared with 7.53 + 7, not with 7.53
    built = cm.floor(cm.csymm_designs(256, 256, True, True, 28)[0], 28, "hf32x3")
    assert built["device_floor_us"] == pytest.approx(2.1, abs=0.05)
    v = cm.scope_verdicts(built, 7.53, "device")
    assert v["device"] == {"floor_us": built["device_floor_us"], "limit_us": 7.53, "under_limit": True,
                           "limit_is": "declared"}
    assert v["call"]["limit_us"] == pytest.approx(14.53) and v["call"]["under_limit"]
    # the mixed budget the model used before (call floor against the device limit) said "over": 9.1 > 7.53
    assert built["call_floor_us"] > 7.53
    # a call-scope limit is carried the other way
    assert cm.scope_verdicts(built, 7.53, "call")["device"]["limit_us"] == pytest.approx(0.53)


def test_both_documented_hf32_rates_give_floors_and_the_bet_says_what_the_other_costs():
    assert cm.HF32_RATES["table2_16x16x8"][0] == 8 * cm.MACS_PER_CYCLE["fp32"]  # table 2: 16x16x8
    assert cm.HF32_RATES["hf32_md_2x_fp32"][0] == 2 * cm.MACS_PER_CYCLE["fp32"]  # HF32.md: twice fp32
    assert "HF32.md" in cm.SOURCES["hf32_doc"]
    built = cm.csymm_designs(1024, 1024, True, True, 28)[0]
    f = cm.floor(built, 28, "hf32x3")
    by = f["by_hf32_rate"]
    assert by["hf32_md_2x_fp32"]["cube_us"] == pytest.approx(4 * by["table2_16x16x8"]["cube_us"])
    assert any("HF32.md" in s for s in f["rates_source"])
    assert cm.floor(built, 28, "fp32")["by_hf32_rate"]["hf32_md_2x_fp32"]["cube_us"] == cm.floor(built, 28,
                                                                                                 "fp32")["cube_us"]
    # at 2x split HF32 (three products) is slower than plain fp32, at 8x faster: the built choice bets on table 2
    bet = cm.csymm_hf32_bet(1024, 1024, True, 28)
    assert bet["bet"] == cm.HF32_BET == "table2_16x16x8" and bet["built_precision"] == "hf32x3"
    assert bet["rates"]["table2_16x16x8"]["faster"] == "hf32x3"
    assert bet["rates"]["table2_16x16x8"]["built_loses_us"] == 0
    assert bet["rates"]["hf32_md_2x_fp32"]["faster"] == "fp32"
    assert bet["rates"]["hf32_md_2x_fp32"]["built_loses_us"] > 100


@pytest.mark.parametrize("cores", cm.CUBE_CORES)
def test_the_path_choice_is_device_scope_and_launch_costs_do_not_enter_it(cores, monkeypatch):
    aivs = cm.aiv_count(cores)
    shapes = [(s, s, left) for s in range(1, 200, 7) for left in (True, False)]
    before = [cm.csymm_path(m, n, left, cores, aivs) for m, n, left in shapes]
    monkeypatch.setattr(cm, "FIRST_LAUNCH_US", 1000.0)
    monkeypatch.setattr(cm, "EXTRA_LAUNCH_US", 1000.0)
    assert [cm.csymm_path(m, n, left, cores, aivs) for m, n, left in shapes] == before
    # the HF32 rate does move it: at 2x the cube path is slower, so the vector path keeps more shapes
    slow = [cm.csymm_path(m, n, left, cores, aivs, "hf32_md_2x_fp32") for m, n, left in shapes]
    assert slow.count("vector") >= before.count("vector")


def test_the_chunked_3m_pays_a_fixpipe_and_vector_adds_per_k_chunk():
    # one 32 x 32 block, K = 256, on one core: per chunk three 32x32 fp32 accumulators L0C -> UB (12 KiB at 128 bytes
    # per cycle: 96 cycles) and 5 fp32 operations per element on two vector cores (5 x 1024 / (2 x lanes))
    block = ((32, 32, 3 * 256),)
    mmad = 3 * 3 * 32 * 32 * 256 / 2048  # three products, split HF32's three passes, table 2's rate
    fix, add = 3 * 32 * 32 * 4 / 128, 5 * 32 * 32 / (2 * 32)
    for kc, chunks in ((256, 1), (64, 4), (32, 8)):
        serial = cm.chunked_3m_cycles(block, 1, "hf32x3", kc, "serial")
        assert serial == pytest.approx(max(mmad, 3 * 3 * 32 * 256 * 4 / 256) + chunks * (fix + add))
        # overlapped: the hand-over hidden under the Mmads but for the last chunk's (vector adds at 64 a cycle)
        assert cm.chunked_3m_cycles(block, 1, "hf32x3", kc, "overlapped") == pytest.approx(
            mmad + fix + 5 * 32 * 32 / (2 * 64))
    # negative control: a chunk count the hand-over ignored would give the same serial figure for every kc
    assert cm.chunked_3m_cycles(block, 1, "hf32x3", 32, "serial") > cm.chunked_3m_cycles(block, 1, "hf32x3", 256,
                                                                                           "serial")


@pytest.mark.parametrize("cores", cm.CUBE_CORES)
def test_the_chunked_3m_variant_states_both_ends_with_their_sources(cores):
    chunked = cm.csymm_designs(1024, 1024, True, True, cores)[-1]
    assert chunked.name == cm.THREE_M_CHUNKED and chunked.chunk_k == cm.THREE_M_CHUNK_K
    f = cm.floor(chunked, cores, "hf32x3")
    # the overlapped end is the device floor; the serial end is above it; both scopes add the one launch
    assert f["cube_us"] < f["device_floor_us"] < f["device_serial_us"]
    assert f["call_floor_us"] == pytest.approx(f["device_floor_us"] + 7.0) == f["floor_us"]
    assert f["call_serial_us"] == pytest.approx(f["device_serial_us"] + 7.0)
    assert f["block"] == (cm.three_m_chunked_block(1024, 1024, True, cores),) * 2
    assert any("C-API-Reg" in s for s in f["rates_source"]) and any("table 8" in s for s in f["rates_source"])
    assert "950PR" in cm.SOURCES["vector_950"] and cm.CHUNK_ENDS == {"overlapped": 64, "serial": 32}
    # the block is the best of THREE_M_BLOCKS at its overlapped end, and both HF32 rates carry both ends
    best = min(cm.chunked_3m_cycles(cm.three_m_blocks(1024, 1024, True, b), cores, "hf32x3", chunked.chunk_k,
                                    "overlapped") for b in cm.THREE_M_BLOCKS)
    assert f["device_floor_us"] == pytest.approx(best / (cm.clock_ghz(cores) * 1e3))
    by = f["by_hf32_rate"]["hf32_md_2x_fp32"]
    assert by["device_serial_us"] > by["device_floor_us"] > f["device_floor_us"]
