"""The cost model's figures for the Csymm task-book rows and three SgemmStridedBatched shapes, on documented rates
(harness/kernels/cost_model.py), beside the precision each variant measures on the ascend-cpu emulator.

Per row, a list of variants (design x precision x cube cores) with the model's floors side by side in the device
scope (kernel work only: `device_floor_us`) and the call scope (plus the documented launch costs: `call_floor_us`,
also `floor_us`), at table 2's HF32 rate and per documented HF32 rate (`by_hf32_rate`), each with `rates_source`;
Csymm variants carry `scopes`: each floor against the task-book limit in that scope (the limits and their scope
read from cases/baselines/csymm_taskbook.csv, which declares them `device`), and the built cube path's device-scope
estimate (`cube_path_us`: panels, L0 loads, Mmads, Fixpipe, NaN scan, cost_model.csymm_cube_path_cycles). Per Csymm
row, `hf32_bet`: the built precision choice under each HF32 rate. `chosen` marks what the built
kernels run, with `launches_counted` (the emulator's kernel launches: no memset precedes them since issue 23, the
NaN flag holding the call's epoch) beside the model's. Each precision is measured on the emulator with the real kernels: Csymm with its precision choice
forced (fp32, split HF32, or fp32 with the cube in HF32 mode: one HF32 product); Sgemm as built (fp32), with the
cube in HF32 mode, and with split HF32 emulated in the Mmad (hi*hi + hi*lo + lo*hi per operand pair, each product
rounded into L0C as three accumulating Mmads would; Sgemm has no split kernel). No 3M kernel is built: the 3M
variants' precision is the method composed on each Sgemm build's cube (harness/kernels/three_m.py: its three real
products as one SgemmStridedBatched call, the pre-adds and the combination in fp32), judged by the row's gate; the
chunked 3M variants' the same, recombined per K chunk of cost_model.THREE_M_CHUNK_K (their `scopes_serial`: the
serial end of the per-chunk hand-over against the limit). Also the cancellation probe (1024^2 LEFT NORMAL_5_1, real
part against the float64 truth) per Csymm precision, and per precision for the 3M method (3m_<precision>), the
chunked 3M (3m_chunked_<precision>) and the vector path (vector_fp32).

    python benchmarks/kernel_cost.py --json          # ~5 min on 2 cores before the chunked 3M, more with it
    python benchmarks/kernel_cost.py --json --model  # the model only, no emulator (seconds)
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.model import abi
from harness.kernels import cost_model, kernel_precision, three_m
from harness.backends import ascend_cpu
from harness.backends.build import build_ascend_cpu
from harness.perf import baselines
from harness.tables.load import load_table
from harness.run.row_judge import run_case

ROOT = Path(__file__).resolve().parents[1]
CUBE = "ascend/blas/common/arch35_cube_gemm.h"
TENSOR = "ascend_cpu/include/tensor_api/tensor.h"
CSYMM_HOST = "ascend/blas/symm/arch35/csymm_host.cpp"
CHOICE = "bool SplitHf32(const CsymmTiling& plan) { return 2 * plan.k >= kSplitMinRealK; }"
#: Csymm's precision choice forced one way.
FORCE_FP32 = ((CSYMM_HOST, CHOICE, "bool SplitHf32(const CsymmTiling&) { return false; }"),)
FORCE_SPLIT = ((CSYMM_HOST, CHOICE, "bool SplitHf32(const CsymmTiling&) { return true; }"),)
#: The cube pipeline with HF32 operands (asc-devkit SetHF32Mode).
HF32_PATCH = ((CUBE, "AscendC::SetHF32Mode(AscendC::HF32Mode::DISABLE);",
               "AscendC::SetHF32Mode(AscendC::HF32Mode::ENABLE);"),)
#: Split HF32 measured in the emulator's Mmad: x = hi + lo (hi = hf32(x), lo = hf32(x - hi)); per K fractal the
#: products hi*hi, hi*lo, lo*hi are summed exactly and each added to L0C with its own rounding, the arithmetic of
#: three accumulating HF32 Mmads per K step.
SPLIT_PATCH = ((TENSOR, """                double dot[16] = {};
                for (uint32_t kk = 0; kk < kn; ++kk) {
                    const double x = hf32 ? detail::Hf32(av[kk]) : av[kk];
                    for (uint32_t j = 0; j < 16; ++j) {
                        dot[j] += x * bt[kk][j];
                    }
                }
                float* cOut = cBase + ((n0 / 16) * rowsPadC + r) * 16;
                for (uint32_t j = 0; j < nn; ++j) {
                    cOut[j] = static_cast<float>(static_cast<double>(cOut[j]) + dot[j]);
                }""", """                double dot[3][16] = {};
                for (uint32_t kk = 0; kk < kn; ++kk) {
                    const float xh = detail::Hf32(av[kk]);
                    const double hi = xh, lo = detail::Hf32(av[kk] - xh);
                    for (uint32_t j = 0; j < 16; ++j) {
                        const float yf = static_cast<float>(bt[kk][j]);
                        const float yh = detail::Hf32(yf);
                        dot[0][j] += hi * yh;
                        dot[1][j] += hi * detail::Hf32(yf - yh);
                        dot[2][j] += lo * yh;
                    }
                }
                float* cOut = cBase + ((n0 / 16) * rowsPadC + r) * 16;
                for (int t = 0; t < 3; ++t) {
                    for (uint32_t j = 0; j < nn; ++j) {
                        cOut[j] = static_cast<float>(static_cast<double>(cOut[j]) + dot[t][j]);
                    }
                }"""),)
#: (precision, rows of which operator) -> the patches of its build.
BUILDS = {("fp32", "csymm"): FORCE_FP32, ("fp32", "sgemm"): (),
          ("hf32", "csymm"): FORCE_FP32 + HF32_PATCH, ("hf32", "sgemm"): HF32_PATCH,
          ("hf32x3", "csymm"): FORCE_SPLIT, ("hf32x3", "sgemm"): SPLIT_PATCH}

#: The Csymm rows (side, uplo, m = n); their limits and scope come from the task-book table (taskbook_limit).
CSYMM_ROWS = {"csymm_256_left_upper": (abi.SIDE_LEFT, abi.UPPER, 256),
              "csymm_1024_left_lower": (abi.SIDE_LEFT, abi.LOWER, 1024),
              "csymm_1024_right_upper": (abi.SIDE_RIGHT, abi.UPPER, 1024)}
SGEMM_ROWS = {"sgemm_1x1024": (1024, 1), "sgemm_256x96": (96, 256), "sgemm_4x4096": (4096, 4)}
#: The public Csymm's host-timed means on its 950PR (28 cube cores, 3M method, 3 launches): issue 23.
PUBLIC_US = {"csymm_256_left_upper": 32.1, "csymm_1024_left_lower": 399.0, "csymm_1024_right_upper": 400.6}
#: Rows the emulator measures in minutes, not hours (4 x 4096^3 is 275 G MAC: ~20 min here).
MEASURED_MACS_MAX = 5e9


def taskbook_limit(row: str) -> tuple[float, str]:
    """(limit_us, scope) of a Csymm row from the project's task-book table (cases/baselines/csymm_taskbook.csv)."""
    side, uplo, m = CSYMM_ROWS[row]
    for b in baselines.load_baselines(baselines.PROJECT_DIR, "csymm"):
        k = b.key
        if b.kind == "taskbook" and (abi.SIDE_NAMES[k["side"]], abi.UPLO_NAMES[k["uplo"]], int(k["m"]),
                                     int(k["n"])) == (side, uplo, m, m):
            return b.value_us, b.scope
    raise LookupError(f"no task-book limit for {row} in {baselines.PROJECT_DIR / 'csymm_taskbook.csv'}")


def _perf_case(table: str, match):
    return next(c for c in load_table(ROOT / "cases" / table) if c.name.startswith("TC_PF_") and match(c.args))


def cases() -> dict:
    out = {}
    for row, (side, uplo, m) in CSYMM_ROWS.items():
        out[row] = _perf_case("csymm_test.csv", lambda a: (a.side, a.uplo, a.m, a.n) == (side, uplo, m, m))
    for row, (s, batches) in SGEMM_ROWS.items():
        out[row] = _perf_case("sgemm_strided_batched_test.csv",
                              lambda a: (a.m, a.n, a.k, a.batch, a.trans_a, a.trans_b)
                              == (s, s, s, batches, abi.OP_N, abi.OP_N))
    return out


def designs(row: str, case, cores: int) -> list[cost_model.Design]:
    """The row's designs as they would be planned for `cores` cube cores."""
    a = case.args
    if row in CSYMM_ROWS:
        return cost_model.csymm_designs(a.m, a.n, a.side == abi.SIDE_LEFT, a.beta == 0, cores)
    fast = a.alpha == 1 and a.beta == 0 and a.ldc % 8 == 0
    return cost_model.sgemm_designs(a.m, a.n, a.k, a.batch, a.beta == 0, fast)


def chosen(row: str, case, design: cost_model.Design, precision: str, cores: int) -> bool:
    """Whether the built kernels run `design` at `precision` for the row on `cores` cube cores."""
    a = case.args
    if row not in CSYMM_ROWS:
        return design.built and precision == "fp32"
    left = a.side == abi.SIDE_LEFT
    vector = cost_model.csymm_path(a.m, a.n, left, cores, cost_model.aiv_count(cores)) == "vector"
    if design.name == cost_model.VECTOR_PATH:
        return vector and precision == "fp32"
    return design.built and not vector and precision == cost_model.csymm_precision(a.m, a.n, left)


def _csymm_extras(row: str, case, variant: dict) -> dict:
    """A Csymm variant's floors against the task-book limit in each scope, and for the built mixed launch the
    device-scope estimate of its cube path at each HF32 rate."""
    a = case.args
    limit, scope = taskbook_limit(row)
    out = {"scopes": cost_model.scope_verdicts(variant, limit, scope)}
    if "device_serial_us" in variant:
        serial = {**variant, "device_floor_us": variant["device_serial_us"], "call_floor_us": variant["call_serial_us"]}
        out["scopes_serial"] = cost_model.scope_verdicts(serial, limit, scope)
    if variant["built_products"] and variant["built"] and variant["precision"] != "hf32":
        cores, left = variant["cube_cores"], a.side == abi.SIDE_LEFT
        to_us = 1 / (cost_model.clock_ghz(cores) * 1e3)
        out["cube_path_us"] = {rate: to_us * cost_model.csymm_cube_path_cycles(
            a.m, a.n, left, cores, cost_model.aiv_count(cores), variant["precision"], rate)
            for rate in cost_model.HF32_RATES}
    return out


def model(rows: dict) -> dict:
    """Every row's variants: each design at each precision and core count (the vector path at fp32 only)."""
    out = {}
    for row, case in rows.items():
        out[row] = [{**cost_model.floor(d, cores, precision), "chosen": chosen(row, case, d, precision, cores)}
                    for cores in cost_model.CUBE_CORES for d in designs(row, case, cores)
                    for precision in cost_model.PRECISIONS
                    if precision == "fp32" or d.name != cost_model.VECTOR_PATH]
        if row in CSYMM_ROWS:
            for v in out[row]:
                v.update(_csymm_extras(row, case, v))
    return out


def _probe(r) -> dict:
    return {"passed": r.passed, "matched_ratio": r.matched_ratio, "max_abs_error": r.max_abs_error}


def _measured(verdict: str, precision: dict | None, how: str) -> dict:
    """A variant's emulator figures from a row's verdict and precision metrics (matched ratio per part or one)."""
    ratio = (precision or {}).get("matched_ratio")
    return {"gate_passed": verdict == "PASS",
            "matched_ratio_min": min(ratio.values()) if isinstance(ratio, dict) else ratio,
            "measured_on": f"ascend-cpu emulator ({how})"}


def _measure_three_m(backend, rows: dict, variants: dict, precision: str) -> None:
    """The 3M variants of each Csymm row at `precision`: the row computed by the 3M method on the Sgemm kernel's
    cube (recombined once, and per K chunk of THREE_M_CHUNK_K) and judged by the row's gate."""
    how = "emulated in the Mmad" if precision == "hf32x3" else "kernels"
    for name, kc in ((cost_model.THREE_M, None), (cost_model.THREE_M_CHUNKED, cost_model.THREE_M_CHUNK_K)):
        for row in CSYMM_ROWS:
            judgement = three_m.judge_row(backend, rows[row], kc)
            measured = _measured(judgement.verdict, judgement.metrics, f"3M composed: the three real products "
                                 f"{'per K chunk of ' + str(kc) + ' ' if kc else ''}as one SgemmStridedBatched call "
                                 f"({how}), pre-adds and combination in fp32")
            for v in variants[row]:
                if v["precision"] == precision and v["name"] == name:
                    v.update(measured)


def _measure_vector(rows: dict, variants: dict) -> dict:
    """The vector path's variant of each Csymm row: the row on the kernels with the vector path forced; returns its
    cancellation probe."""
    backend = ascend_cpu.AscendCpuBackend(build_ascend_cpu(ascend_cpu.CSYMM_PATH["vector"]), cores=None)
    try:
        for row in CSYMM_ROWS:
            backend.reset_stats()
            record = run_case(rows[row], backend)
            measured = {**_measured(record["verdict"], record["precision"], "kernels, the vector path forced"),
                        "launches_counted": backend.stats()["launches"]}
            for v in variants[row]:
                if v["name"] == cost_model.VECTOR_PATH:
                    v.update(measured)
        return _probe(kernel_precision.csymm_real_part(backend, 1024, "NORMAL_5_1"))
    finally:
        backend.close()


def measure(rows: dict, variants: dict) -> dict:
    """Run each row on the emulator per precision build; attach gate_passed and matched_ratio_min to the variants
    of that precision whose cube computes the built kernels' products, and to the 3M variants the method composed
    on the Sgemm builds' cube (harness/kernels/three_m.py); return the cancellation probe per Csymm precision
    (3m_<precision>: the 3M method's; vector_fp32: the vector path's)."""
    probe = {}
    for (precision, op), patches in BUILDS.items():
        backend = ascend_cpu.AscendCpuBackend(build_ascend_cpu(patches), cores=None)
        try:
            for row, case in rows.items():
                if not row.startswith(op) or cost_model.cube_macs(designs(row, case, 36)[0]) > MEASURED_MACS_MAX:
                    continue
                backend.reset_stats()
                record = run_case(case, backend)
                kernels = backend.stats()["launches"]
                how = "emulated in the Mmad" if patches == SPLIT_PATCH else "kernels"
                measured = _measured(record["verdict"], record["precision"], how)
                for v in variants[row]:
                    if v["precision"] == precision and v["built_products"]:
                        v.update(measured)
                    if v["chosen"] and v["precision"] == precision:  # the kernels counted: no memset per call
                        v["launches_counted"] = kernels
            if op == "csymm":
                probe[precision] = _probe(kernel_precision.csymm_real_part(backend, 1024, "NORMAL_5_1"))
            else:  # the same cube arithmetic runs the 3M method's three real products (harness/kernels/three_m.py)
                _measure_three_m(backend, rows, variants, precision)
                probe[f"3m_{precision}"] = _probe(three_m.real_part_probe(backend, 1024, "NORMAL_5_1"))
                probe[f"3m_chunked_{precision}"] = _probe(three_m.real_part_probe(
                    backend, 1024, "NORMAL_5_1", kc=cost_model.THREE_M_CHUNK_K))
        finally:
            backend.close()
    probe["vector_fp32"] = _measure_vector(rows, variants)
    return probe


def _label(v: dict) -> str:
    return f"{v['name']} / {v['precision']} / {v['cube_cores']} cores"


def _probe_key(v: dict) -> str:
    """The cancellation probe that measured a variant's arithmetic (the built products, 3M, or the vector path)."""
    if v["name"] == cost_model.VECTOR_PATH:
        return "vector_fp32"
    if v["name"] == cost_model.THREE_M_CHUNKED:
        return f"3m_chunked_{v['precision']}"
    return f"3m_{v['precision']}" if v["name"] == cost_model.THREE_M else v["precision"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object (else a table)")
    parser.add_argument("--model", action="store_true", help="the model only: no emulator measurements")
    opts = parser.parse_args(argv)
    rows = cases()
    variants = model(rows)
    probe = {} if opts.model else measure(rows, variants)
    reach = {}
    for row in CSYMM_ROWS:
        limit, scope = taskbook_limit(row)
        passed = [v for v in variants[row] if v.get("gate_passed") and v["scopes"][scope]["under_limit"]]
        probed = [v for v in passed if probe.get(_probe_key(v), {}).get("passed")]
        a = rows[row].args
        reach[row] = {**cost_model.limit_budget(limit, variants[row], scope), "public_us": PUBLIC_US[row],
                      "hf32_bet": {cores: cost_model.csymm_hf32_bet(a.m, a.n, a.side == abi.SIDE_LEFT, cores)
                                   for cores in cost_model.CUBE_CORES},
                      "under_limit_and_gate_passed": [_label(v) for v in passed],
                      "under_limit_gate_and_probe_passed": [_label(v) for v in probed],
                      # of those, the ones whose hand-over (chunked 3M) is under the limit at its serial end too
                      "under_limit_at_serial_end": [_label(v) for v in probed
                                                    if v.get("scopes_serial", v["scopes"])[scope]["under_limit"]]}
    if opts.json:
        print(json.dumps({**variants, "to_reach_limit": reach, "probe_1024_left_normal_5_1": probe,
                          "sources": cost_model.SOURCES}, indent=1))
        return 0
    for row, vs in variants.items():
        print(row + (f" (limit {reach[row]['limit_us']} us, public {reach[row]['public_us']} us)" if row in reach
                     else ""))
        for v in vs:
            serial = f" (serial end {v['device_serial_us']:.1f})" if "device_serial_us" in v else ""
            measured = (f", gate {'PASS' if v['gate_passed'] else 'FAIL'} (matched {v['matched_ratio_min']:.4f})"
                        if "gate_passed" in v else "")
            print(f"  {v['name']:<52} {v['precision']:<6} {v['cube_cores']} cores {v['launches']:>3} launches "
                  f"cube {v['cube_us']:8.1f} GM {v['memory_us']:6.1f} launch {v['launch_us']:6.1f} "
                  f"floor device {v['device_floor_us']:8.1f}{serial} call {v['call_floor_us']:8.1f} us{measured}")
    for precision, p in probe.items():
        print(f"probe {precision}: matched ratio {p['matched_ratio']:.5f}, max abs error {p['max_abs_error']:.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
