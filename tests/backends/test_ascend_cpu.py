"""The `ascend-cpu` backend: the real arch35 kernels and host code over the CPU emulator.

CI runs a sample of both tables through it (every TC_L0, TC_ED and TC_EX row: smoke, edge and special-value rows;
the large TC_L1 and TC_PF rows belong to `harness run --backend ascend-cpu`), and negative controls: kernel
variants, built by patching a copy of the real sources, that each break one rule the hardware enforces and must
fail with a message naming it.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from harness.model import abi
from harness.kernels import cost_model, kernel_precision, three_m
from harness.backends import ascend_cpu, build
from harness.backends.build import BuildError, build_ascend_cpu
from harness.tables.load import load_table
from harness.run.row_judge import run_case

ROOT = Path(__file__).resolve().parents[2]
TABLES = {t.name: t for t in sorted((ROOT / "cases").glob("*_test.csv"))}
#: The operators with Ascend C kernels; the other tables' rows are skipped on this backend (its library lacks them).
KERNELS = ("csymm", "sgemm_strided_batched")
SAMPLED = ("TC_L0_", "TC_ED_", "TC_EX_")


def _sample() -> list:
    return [pytest.param(case, id=case.id) for name, table in TABLES.items() for case in load_table(table)
            if case.name.startswith(SAMPLED) and name.removesuffix("_test.csv") in KERNELS]


def _csymm_path(case) -> str:
    """The GEMM path the host chooses for a Csymm row on the emulator's 36 cube / 72 vector cores."""
    a = case.args
    return cost_model.csymm_path(a.m, a.n, a.side == abi.SIDE_LEFT, 36, 72)


def _vector_rows() -> list:
    """The sampled Csymm rows the host sends to the vector cores: they also run on the cube path, forced."""
    return [p for p in _sample() if p.values[0].op == "csymm" and p.values[0].args.m > 0 and p.values[0].args.n > 0
            and _csymm_path(p.values[0]) == "vector"]


def test_operators_without_kernels_are_skipped_with_the_reason(device):
    for name in TABLES:
        if name.removesuffix("_test.csv") not in KERNELS:
            record = run_case(load_table(TABLES[name])[0], device)
            assert record["verdict"] == "SKIP" and "does not export aclblas" in record["reason"]


def _row(table: str, name: str):
    return next(c for c in load_table(TABLES[table]) if c.name == name)


def _first_row(table: str, predicate):
    return next(c for c in load_table(TABLES[table]) if predicate(c))


@pytest.fixture(scope="module")
def device():
    backend = ascend_cpu.open()
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def cube():
    """The kernels with Csymm's cube path forced for every shape (its checks on the small rows too)."""
    backend = ascend_cpu.open(patches=ascend_cpu.CSYMM_PATH["cube"])
    yield backend
    backend.close()


@pytest.mark.parametrize("case", _sample())
def test_sampled_row_passes_on_the_kernels(case, device):
    record = run_case(case, device)
    assert record["verdict"] == "PASS", record["reason"]


@pytest.mark.parametrize("case", _vector_rows())
def test_sampled_csymm_row_passes_on_the_cube_path_too(case, cube):
    record = run_case(case, cube)
    assert record["verdict"] == "PASS", record["reason"]


def _nan_row(table: str):
    return _first_row(table, lambda c: c.name.startswith("TC_EX_") and "nan" in c.description.lower()
                      and c.expected_status == abi.Status.SUCCESS)


def _gemm_row_filter(c) -> bool:
    return (c.name.startswith("TC_L0_") and c.expected_status == abi.Status.SUCCESS
            and 33 <= min(c.args.m, c.args.n, getattr(c.args, "k", None) or c.args.ka)
            and c.args.m * c.args.n <= 128 * 128)


def _gemm_row(table: str):
    """A small row that reaches the cube with more than one L0 K step (depth > 32) on both operator designs."""
    return _first_row(table, _gemm_row_filter)


def _inf_row(table: str):
    """An Inf row without NaN in its operands: it reaches the cube, whose results hold Inf (or Inf - Inf)."""
    return _first_row(table, lambda c: c.name.startswith("TC_EX_") and "inf" in c.description.lower()
                      and "nan" not in c.description.lower() and c.expected_status == abi.Status.SUCCESS
                      and "_B_" in c.description)


@pytest.mark.parametrize("control", ["unpaired-flag", "wait-never-set", "missing-sync", "l0-over-capacity",
                                     "no-pipe-barrier", "nan-into-cube", "gm-out-of-bounds", "l0c-misaligned",
                                     "saturation-unset", "fixpipe-unit-flag-off",
                                     pytest.param("tile-dealt-twice", marks=pytest.mark.slow)])  # a build: ~30 s
@pytest.mark.slow  # 216 s of a bare pytest -n 2 at load ~20
def test_negative_control_fails_naming_the_problem(control):
    patches, expected = ascend_cpu.NEGATIVE_CONTROLS[control]
    backend = ascend_cpu.open(patches=patches + ascend_cpu.CSYMM_PATH["cube"])
    try:
        if control == "nan-into-cube":
            cases = [_nan_row("csymm_test.csv"), _nan_row("sgemm_strided_batched_test.csv")]
        elif control == "gm-out-of-bounds":
            cases = [_gemm_row("sgemm_strided_batched_test.csv")]
        elif control == "no-pipe-barrier":  # bites below (m/16)*(n/16) = 10: 64x64 csymm runs 32 x 64 engine tiles
            cases = [_gemm_row("csymm_test.csv")]
        elif control == "tile-dealt-twice":  # a Csymm patch; the row has more tiles than one core takes
            cases = [_gemm_row("csymm_test.csv")]
        elif control == "saturation-unset":
            cases = [_inf_row("csymm_test.csv"), _inf_row("sgemm_strided_batched_test.csv")]
        else:
            cases = [_gemm_row("csymm_test.csv"), _gemm_row("sgemm_strided_batched_test.csv")]
        for case in cases:
            record = run_case(case, backend)
            assert record["verdict"] == "FAIL", (control, case.id)
            assert "EXECUTION_FAILED" in record["reason"] and expected in record["reason"], record["reason"]
    finally:
        backend.close()


@pytest.mark.parametrize("table", ["csymm_test.csv", "sgemm_strided_batched_test.csv"])
def test_a_flag_read_without_dcci_reads_a_stale_dcache_line(table):
    # The first call leaves the flag (0) in the cube cores' DCache; the NaN row's vector cores store its call's
    # epoch in GM.
    # With DataCacheCleanAndInvalid before the read (the kernels) both rows pass (the sampled rows above).
    patches, expected = ascend_cpu.NEGATIVE_CONTROLS["missing-dcci"]
    backend = ascend_cpu.open(patches=patches + ascend_cpu.CSYMM_PATH["cube"])
    try:
        assert run_case(_gemm_row(table), backend)["verdict"] == "PASS"
        record = run_case(_nan_row(table), backend)
    finally:
        backend.close()
    assert record["verdict"] == "FAIL" and expected in record["reason"], record["reason"]


def _cube_macs_after_a_nan_call(backend, table: str) -> int:
    """Cube MACs of a NaN-free row run right after a NaN row on the same handle (so the same NaN flag word)."""
    assert run_case(_nan_row(table), backend)["verdict"] == "PASS"
    backend.reset_stats()
    record = run_case(_gemm_row(table), backend)
    assert record["verdict"] == "PASS", record["reason"]
    return backend.stats()["cube_macs"]


@pytest.mark.parametrize("table", ["csymm_test.csv", "sgemm_strided_batched_test.csv"])
def test_an_earlier_nan_call_leaves_the_next_call_on_the_cube_without_a_memset(cube, table):
    # issue 23: no memset clears the NaN flag between calls; the NaN row's scan stored its call's epoch, the next
    # call has a new one, so its readers see "no NaN" and its cube runs (common/arch35_nan_guard.h)
    assert _cube_macs_after_a_nan_call(cube, table) > 0


@pytest.mark.slow  # builds a kernel variant: ~30 s on the loaded 2-core machine
def test_a_flag_read_as_nonzero_without_its_memset_keeps_later_calls_off_the_cube():
    # the negative control: the pre-epoch reading (set = nonzero) without the memset it needed; after one NaN call
    # every later call takes the plain fp32 fallback (still the right result: PASS, but no cube work)
    backend = ascend_cpu.open(patches=ascend_cpu.NEGATIVE_CONTROLS["nan-flag-never-cleared"][0]
                              + ascend_cpu.CSYMM_PATH["cube"])
    try:
        for table in ("csymm_test.csv", "sgemm_strided_batched_test.csv"):
            assert _cube_macs_after_a_nan_call(backend, table) == 0, table
    finally:
        backend.close()


@pytest.mark.slow  # 24 s of a bare pytest -n 2 at load ~20
def test_old_plane_order_fails_the_precision_gate_the_interleaved_order_passes(device):
    current = kernel_precision.csymm_real_part(device, 512, "NORMAL_10_1", side=abi.SIDE_RIGHT)
    assert current.passed, current.reason
    old = ascend_cpu.open(patches=ascend_cpu.NEGATIVE_CONTROLS["old-plane-order"][0])
    try:
        result = kernel_precision.csymm_real_part(old, 512, "NORMAL_10_1", side=abi.SIDE_RIGHT)
    finally:
        old.close()
    assert not result.passed
    assert "over the max(0.01, 32 ulp) cap" in result.reason
    assert result.max_abs_error > 10 * current.max_abs_error


def test_split_hf32_keeps_fp32_grade_precision_where_one_hf32_product_fails(device):
    # 256^2 LEFT (real K 512: the kernels choose split HF32), nonzero-mean NORMAL, real part against the truth
    split = kernel_precision.csymm_real_part(device, 256, "NORMAL_5_1")
    assert split.passed, split.reason
    one = ascend_cpu.open(patches=ascend_cpu.NEGATIVE_CONTROLS["hf32-one-product"][0])
    try:
        result = kernel_precision.csymm_real_part(one, 256, "NORMAL_5_1")
    finally:
        one.close()
    assert not result.passed and result.max_abs_error > 10 * split.max_abs_error, result.reason


@pytest.mark.slow  # ~20 s: a 1024^2 Csymm and three 1024^3 real products on the emulated cube
def test_3m_fails_the_cancellation_probe_the_built_kernel_passes(device):
    # the only design the model puts under both 1024^2 limits subtracts finished sums: on the emulator's cube (its
    # products by the Sgemm kernel, fp32 here) the 1024^2 LEFT NORMAL_5_1 probe fails where the built split HF32
    # kernel, whose real and imaginary products share every K fractal, passes
    built = kernel_precision.csymm_real_part(device, 1024, "NORMAL_5_1")
    composed = three_m.real_part_probe(device, 1024, "NORMAL_5_1")
    assert built.passed, built.reason
    assert not composed.passed and composed.max_abs_error > 10 * built.max_abs_error, composed


def test_core_count_query_failure_is_an_error_not_one_core():
    # a fresh handle (the counts are kept per handle once a query succeeded)
    case = _gemm_row("csymm_test.csv")
    backend = ascend_cpu.open()
    try:
        backend.fail_device_info(True)
        try:
            record = run_case(case, backend)
        finally:
            backend.fail_device_info(False)
        assert record["verdict"] == "FAIL"
        assert "INTERNAL_ERROR" in record["reason"]
        assert run_case(case, backend)["verdict"] == "PASS"  # a failed query is not kept: the next call asks again
    finally:
        backend.close()


def test_core_counts_are_queried_once_per_handle():
    # aclblas_handle.cpp keeps the counts in the handle: each operator asked aclrtGetDeviceInfo twice per call
    # before (cube and vector cores), now the handle asks twice in its life
    backend = ascend_cpu.open()
    try:
        before = backend.device_info_queries()
        for table in ("csymm_test.csv", "sgemm_strided_batched_test.csv", "csymm_test.csv"):
            assert run_case(_gemm_row(table), backend)["verdict"] == "PASS"
        assert backend.device_info_queries() - before == 2
        # once the counts are kept, a failing runtime query no longer reaches the call
        backend.fail_device_info(True)
        try:
            assert run_case(_gemm_row("csymm_test.csv"), backend)["verdict"] == "PASS"
        finally:
            backend.fail_device_info(False)
    finally:
        backend.close()


def _beta_zero(case) -> bool:
    return case.args.beta == 0


@pytest.mark.parametrize("beta_zero", [True, False], ids=["beta0", "beta"])
@pytest.mark.parametrize("side", ["LEFT", "RIGHT"])
def test_csymm_asks_for_no_workspace(device, side, beta_zero):
    # the on-chip design: the panels go UB -> L1 and the result L0C -> UB, nothing through a GM workspace (the
    # GM-workspace design asked for 41.9 / 50.3 MB at 1024^2 LEFT / RIGHT)
    case = _first_row("csymm_test.csv", lambda c: c.name.startswith(("TC_L0_", "TC_L1_"))
                      and c.expected_status == abi.Status.SUCCESS and c.args.side == getattr(abi, f"SIDE_{side}")
                      and _beta_zero(c) == beta_zero and c.args.m != c.args.n
                      and c.args.alpha != 0)
    record = run_case(case, device)
    assert record["verdict"] == "PASS", record["reason"]
    assert record["memory"]["workspace_bytes"] == 0


def test_launches_per_csymm_call(cube):
    for beta_zero in (True, False):
        case = _first_row("csymm_test.csv", lambda c: c.name.startswith("TC_L0_") and _beta_zero(c) == beta_zero
                          and c.expected_status == abi.Status.SUCCESS and min(c.args.m, c.args.n) >= 16
                          and c.args.alpha != 0)
        cube.reset_stats()
        assert run_case(case, cube)["verdict"] == "PASS"
        stats = cube.stats()
        # one mixed launch: the NaN scan, SyncAll, the panels UB -> L1 and the cube GEMM (or the fallback), the
        # epilogue L0C -> UB only when beta != 0 (else Fixpipe writes C); before it was 3 / 4 launches; and no
        # memset of the NaN flag (issue 23: the scan stores the call's epoch), so the call is one stream task
        assert stats["launches"] == 1, case.id
        k = case.args.m if case.args.side == abi.SIDE_LEFT else case.args.n
        # one real GEMM, n x 2m x 2k; split HF32 (from a real K of 64) runs three products of it
        products = 3 if 2 * k >= cost_model.CSYMM_SPLIT_MIN_REAL_K else 1
        assert stats["cube_macs"] == products * 4 * case.args.m * case.args.n * k
        # no GM workspace: besides the DMA loads of the panels' source blocks (GM -> UB, DataCopyPad), the copies
        # move C only (written once, read once when beta != 0); the panels reach L1 from UB
        a = case.args
        c_bytes = cost_model.csymm_copy_gm_bytes(a.m, a.n, beta_zero)
        source_bytes = cube.instr_counts()["data_copy_pad_bytes"] - (0 if beta_zero else c_bytes)
        assert stats["cube_gm_bytes"] - source_bytes == c_bytes, case.id
        # every stored element of A and every element of B is loaded at least once
        assert source_bytes >= 8 * (k * (k + 1) // 2 + a.m * a.n), case.id


def _panel_floats(m: int, n: int, left: bool, cores: int, precision: str) -> int:
    """Floats of the panels the vector cores build for one call: per tile and K chunk, each panel pair (L, NZ rows x
    chunk; R, ZN chunk x cols), whole fractals."""
    pairs, chunk = cost_model.CSYMM_PANEL_PAIRS[precision], cost_model.CSYMM_CHUNK_K[precision]
    up = cost_model._up
    total = 0
    for rows, cols, real_k in cost_model.csymm_tiles(m, n, left, cores):
        for k0 in range(0, real_k, chunk):
            k = up(min(chunk, real_k - k0), cost_model.K0)
            total += pairs * (up(rows, cost_model.FRACTAL) * k + k * up(cols, cost_model.FRACTAL))
    return total


@pytest.mark.parametrize("side", ["LEFT", "RIGHT"])
def test_split_hf32_builds_each_panel_once(cube, side):
    # split HF32's three products (hi*hi, hi*lo, lo*hi) read two panel pairs, (L, R) and (lo L, lo R): the vector
    # cores copy 4 panels per K chunk UB -> L1, not 6 (one pair per product before issue 38: 1.5x these bytes)
    case = _first_row("csymm_test.csv", lambda c: c.name.startswith("TC_L0_") and c.expected_status ==
                      abi.Status.SUCCESS and c.args.alpha != 0 and c.args.side == getattr(abi, f"SIDE_{side}")
                      and 2 * (c.args.m if c.args.side == abi.SIDE_LEFT else c.args.n) >=
                      cost_model.CSYMM_SPLIT_MIN_REAL_K and min(c.args.m, c.args.n) >= 16
                      and "nan" not in c.description.lower() and "inf" not in c.description.lower())
    cube.reset_stats()
    assert run_case(case, cube)["verdict"] == "PASS"
    calls = cube.stats()["launches"]
    a = case.args
    expected = _panel_floats(a.m, a.n, a.side == abi.SIDE_LEFT, ascend_cpu.DEFAULT_CUBE_CORES, "hf32x3")
    assert cube.instr_counts()["ub_to_l1_bytes"] == calls * 4 * expected, case.id
    # the cube still runs three products per K step: 3 L1 -> L0 copy pairs per Mmad triple
    counts = cube.instr_counts()
    assert counts["l1_to_l0"] == 2 * counts["mmads"]


def test_the_host_takes_the_path_the_cost_model_chooses(device):
    # csymm_host.cpp VectorPath and cost_model.csymm_path count the same documented cycles: every NaN-free sampled
    # GEMM row runs on the vector cores alone (one AIV-only launch of min(72, ceil(mn / 64)) blocks, no cube MACs)
    # exactly where the model says "vector", else on the cube
    paths = set()
    for case in (p.values[0] for p in _sample() if p.values[0].op == "csymm"):
        a = case.args
        if case.expected_status != abi.Status.SUCCESS or a.m * a.n == 0 or a.alpha == 0 or \
                "nan" in case.description.lower():
            continue
        device.reset_stats()
        assert run_case(case, device)["verdict"] == "PASS", case.id
        stats = device.stats()
        path = _csymm_path(case)
        paths.add(path)
        assert stats["launches"] == 1, case.id
        if path == "vector":
            assert stats["cube_macs"] == 0 and stats["blocks"] == min(72, -(-a.m * a.n // 64)), (case.id, stats)
        else:
            assert stats["cube_macs"] > 0, (case.id, stats)
    assert paths == {"vector", "cube"}


def _sgemm_fast(c) -> bool:
    return (c.name.startswith("TC_L0_") and c.expected_status == abi.Status.SUCCESS and c.args.batch > 1
            and c.args.alpha == 1 and c.args.beta == 0 and c.args.ldc % 8 == 0
            and min(c.args.m, c.args.n, c.args.k) > 0)


@pytest.mark.parametrize("broadcast", [False, True], ids=["strided", "stride0"])
def test_sgemm_fast_path_folds_every_batch_into_one_launch(device, broadcast):
    # the fast path's batches with disjoint C_i share one task grid (batch = task / tiles per batch); stride 0 of A
    # or B broadcasts it to every batch
    case = _first_row("sgemm_strided_batched_test.csv", lambda c: _sgemm_fast(c) and c.args.stride_c >= c.args.ldc
                      * c.args.n and ((c.args.stride_a == 0 or c.args.stride_b == 0) == broadcast))
    device.reset_stats()
    record = run_case(case, device)
    assert record["verdict"] == "PASS", record["reason"]
    # the NaN guard (scan, SyncAll, fallback on NaN) and the one gemm; 3 before issue 38 (the fallback its own launch)
    assert device.stats()["launches"] == 2, case.id


def _sgemm_general(c) -> bool:
    """A general-path row with several disjoint C_i (no row of the table overlaps its C_i)."""
    return (c.name.startswith("TC_L0_") and c.args.batch > 1 and c.expected_status == abi.Status.SUCCESS
            and min(c.args.m, c.args.n, c.args.k) > 0 and c.args.alpha not in (0, 1)
            and abs(c.args.stride_c) >= (c.args.n - 1) * c.args.ldc + c.args.m)


def test_sgemm_general_path_fuses_every_batch_into_one_mixed_launch(device):
    # disjoint C_i: the cube's tiles go through workspace slots to the vector cores' epilogue under cross-core flags
    case = _first_row("sgemm_strided_batched_test.csv", _sgemm_general)
    device.reset_stats()
    record = run_case(case, device)
    assert record["verdict"] == "PASS", record["reason"]
    stats = device.stats()
    assert stats["launches"] == 2, case.id  # the NaN guard and the fused kernel (3 before issue 38)
    assert stats["cube_macs"] == case.args.batch * case.args.m * case.args.n * case.args.k


def test_sgemm_nan_row_is_two_launches_with_the_fallback_in_the_guard(device):
    # the fallback folded into the NaN guard's launch: the scan's SyncAll, then the plain fp32 result; the gemm
    # launch after it reads the flag and does no cube work
    case = _nan_row("sgemm_strided_batched_test.csv")
    device.reset_stats()
    record = run_case(case, device)
    assert record["verdict"] == "PASS", record["reason"]
    stats = device.stats()
    assert stats["launches"] == 2 and stats["cube_macs"] == 0, (case.id, stats)


def test_sgemm_scale_only_path_is_one_launch_for_every_batch(device):
    # alpha == 0 (or k == 0) with several disjoint C_i: C_i = beta * C_i for every batch in one vector launch (one
    # launch per batch before issue 38)
    case = _first_row("sgemm_strided_batched_test.csv", lambda c: c.expected_status == abi.Status.SUCCESS
                      and c.args.batch > 1 and min(c.args.m, c.args.n) > 0 and (c.args.alpha == 0 or c.args.k == 0)
                      and abs(c.args.stride_c) >= (c.args.n - 1) * c.args.ldc + c.args.m)
    device.reset_stats()
    record = run_case(case, device)
    assert record["verdict"] == "PASS", record["reason"]
    assert device.stats()["launches"] == 1, case.id


@pytest.mark.slow  # each builds a kernel variant: ~30 s on the loaded 2-core machine
@pytest.mark.parametrize("control", ["fused-no-wait", "fused-never-ready", "epilogue-load-not-enqueued",
                                     "epilogue-temp-not-freed", "epilogue-result-not-enqueued"])
def test_fused_sgemm_without_its_synchronisation_fails(control):
    # the cross-core flags between cube and vector cores, and the epilogue queues' EnQue/DeQue and FreeTensor, the
    # only hand-offs between its vector unit (Muls, Axpy on UB) and its DataCopyPad pipes
    patches, expected = ascend_cpu.NEGATIVE_CONTROLS[control]
    backend = ascend_cpu.open(patches=patches)
    try:
        record = run_case(_first_row("sgemm_strided_batched_test.csv", _sgemm_general), backend)
    finally:
        backend.close()
    assert record["verdict"] == "FAIL" and "EXECUTION_FAILED" in record["reason"], record["reason"]
    assert expected in record["reason"] and "sgemm_strided_batched_fused_" in record["reason"], record["reason"]


@pytest.mark.slow  # each builds a kernel variant
@pytest.mark.parametrize("control", ["handover-no-wait", "handover-never-ready", "epilogue-no-wait",
                                     "epilogue-unit-flag-off"])
def test_on_chip_csymm_without_its_cross_core_flags_fails(control):
    # the panels UB -> L1 (cube waits for READY on PIPE_MTE1) and the result L0C -> UB (AIVs wait on PIPE_V): each
    # handshake dropped is an L1 race, a deadlock or a UB race of the fused launch; the epilogue needs beta != 0
    patches, expected = ascend_cpu.NEGATIVE_CONTROLS[control]
    backend = ascend_cpu.open(patches=patches + ascend_cpu.CSYMM_PATH["cube"])
    try:
        record = run_case(_first_row("csymm_test.csv", lambda c: _gemm_row_filter(c) and not _beta_zero(c)), backend)
    finally:
        backend.close()
    assert record["verdict"] == "FAIL" and "EXECUTION_FAILED" in record["reason"], record["reason"]
    assert expected in record["reason"] and "csymm_fused" in record["reason"], record["reason"]


def _odd_cube_row(c) -> bool:
    """A row whose panels' source blocks have column lengths that are not 32-byte multiples (odd dimensions)."""
    a = c.args
    return (c.name.startswith("TC_L0_") and c.expected_status == abi.Status.SUCCESS and a.alpha != 0
            and (a.m % 4 != 0 or a.n % 4 != 0) and min(a.m, a.n) >= 17 and a.m * a.n <= 128 * 128
            and "nan" not in c.description.lower() and "inf" not in c.description.lower())


def test_the_row_the_source_controls_use_passes(cube):
    record = run_case(_first_row("csymm_test.csv", _odd_cube_row), cube)
    assert record["verdict"] == "PASS", record["reason"]


@pytest.mark.slow  # each builds a kernel variant
@pytest.mark.parametrize("control", ["source-no-wait", "source-unpadded", "source-no-mirror", "pad-block-count"])
def test_csymm_panel_sources_loaded_wrongly_fail(control):
    # the panels' source blocks come GM -> UB by DataCopyPad (stored columns; A's other triangle as the stored
    # columns it mirrors): a build that does not wait for the DMA, a UB layout without DataCopyPad's 32-byte block
    # padding, reading A's unstored triangle, and a DataCopyPad past its documented blockCount range each fail; the
    # same row passes as built (the test above)
    patches, expected = ascend_cpu.NEGATIVE_CONTROLS[control]
    backend = ascend_cpu.open(patches=patches + ascend_cpu.CSYMM_PATH["cube"])
    try:
        record = run_case(_first_row("csymm_test.csv", _odd_cube_row), backend)
    finally:
        backend.close()
    assert record["verdict"] == "FAIL" and expected in record["reason"], record["reason"]


def test_a_patch_that_does_not_apply_is_a_build_error():
    with pytest.raises(BuildError, match="does not apply"):
        build_ascend_cpu((("ascend/blas/common/arch35_cube_sizes.h", "no such text", ""),))


def test_kernel_units_compile_with_the_precompiled_emulator_headers(tmp_path, monkeypatch):
    """Each kernel unit includes the emulator's headers precompiled (build.PCH_NAME, from the object cache): g++ -H
    marks a precompiled header it used with '!' (one it found and refused with 'x', and then parses the headers).
    One patched kernel unit is compiled here, against the checkout's objects (linked into a private cache)."""
    build_ascend_cpu()
    objects = tmp_path / "objects"
    objects.mkdir()
    for cached in [*build.OBJECT_CACHE_DIR.glob("*.o"), *build.OBJECT_CACHE_DIR.glob("*.gch")]:
        os.link(cached, objects / cached.name)
    log = tmp_path / "h.log"
    wrapper = tmp_path / "cxx"
    gxx = shutil.which("g++")
    wrapper.write_text(f'#!/bin/sh\ncase " $* " in *" -E "*) ;; *" -include "*) exec {gxx} -H "$@" 2>>{log} ;; esac\n'
                       f'exec {gxx} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(build, "CXX", str(wrapper))
    kernel = "ascend/blas/symm/arch35/csymm_kernel.cpp"
    build_ascend_cpu(((kernel, '#include "csymm_kernel.h"\n', '#include "csymm_kernel.h"\nstatic int probe = 0;\n'),),
                     cache_dir=tmp_path / "lib", object_cache_dir=objects)
    marks = [line.split()[0] for line in log.read_text().splitlines() if line.endswith(f"{build.PCH_NAME}.gch")]
    assert marks and set(marks) == {"!"}, log.read_text()[:2000]


def test_operator_lib_is_refused():
    from harness.backends import BackendUnavailable

    with pytest.raises(BackendUnavailable, match="does not apply"):
        ascend_cpu.open(operator_lib="/nonexistent.so")


@pytest.mark.slow  # 23 s on the loaded 2-core machine
def test_harness_run_on_the_kernels(tmp_path, capsys):
    from harness.cli import main

    code = main(["run", str(TABLES["csymm_test.csv"]), "--backend", "ascend-cpu", "-k", "TC_L0_0001 or TC_L0_0023",
                 "--report-dir", str(tmp_path / "r"), "--history", str(tmp_path / "h.sqlite")])
    assert code == 0
    report = json.loads(next((tmp_path / "r").glob("*/report.json")).read_text())
    assert report["backend"] == "ascend-cpu" and report["summary"]["passed"] == 2


def test_no_compiler_is_one_clear_line(monkeypatch):
    from harness.backends import BackendUnavailable, build

    monkeypatch.setattr(build, "CXX", "no-such-compiler")
    with pytest.raises(BackendUnavailable, match=r"^ascend-cpu backend: no C\+\+ compiler"):
        ascend_cpu.open()
