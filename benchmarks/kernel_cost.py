"""Cost model of the three Csymm task-book rows: the work the real kernels do (counted on the ascend-cpu backend)
and the floor time it implies (harness/cost_model.py, assumptions printed), beside the task-book limit and the
emulator's measured time, for the design before (seven GM planes, modelled), the one built now (one real GEMM on a
real-embedded operand, counted) and the target (one launch, panels mirrored and embedded on chip, modelled); and
what HF32 would cost in precision: the task-book rows under their own gate, and the cancellation probe (1024x1024
LEFT NORMAL, real part against the float64 truth), with fp32 and HF32 cube operands on the emulator.

    python benchmarks/kernel_cost.py        # ~5 min on 2 cores (1024x1024 rows on the emulated cube)
"""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from harness import abi, cost_model, kernel_precision
from harness.backends import ascend_cpu
from harness.backends.build import build_ascend_cpu

#: The cube pipeline with HF32 operands (asc-devkit SetHF32Mode), to measure what HF32 would cost in precision.
HF32_PATCH = (("ascend/blas/common/arch35_cube_gemm.h", "AscendC::SetHF32Mode(AscendC::HF32Mode::DISABLE);",
               "AscendC::SetHF32Mode(AscendC::HF32Mode::ENABLE);"),)
from harness.engine import load_table, run_case
from harness.timing import TimingConfig

#: A couple of samples: an emulator's host time says nothing about the device, only what a row costs here.
EMULATOR_TIMING = TimingConfig(warmup=1, min_samples=2, max_time_s=0.1, warmup_max_time_s=0.05)

ROOT = Path(__file__).resolve().parents[1]


def taskbook_rows() -> list[tuple[dict, object]]:
    """(limit row, the perf case with the same side/uplo/m/n) for each task-book row."""
    with open(ROOT / "cases/baselines/csymm_taskbook.csv") as f:
        limits = list(csv.DictReader(line for line in f if not line.startswith("#")))
    cases = [c for c in load_table(ROOT / "cases/csymm_test.csv") if c.name.startswith("TC_PF_")]
    out = []
    for limit in limits:
        side = abi.SIDE_LEFT if limit["side"].endswith("LEFT") else abi.SIDE_RIGHT
        uplo = abi.UPPER if limit["uplo"].endswith("UPPER") else abi.LOWER
        case = next(c for c in cases if (c.args.side, c.args.uplo, c.args.m, c.args.n)
                    == (side, uplo, int(limit["m"]), int(limit["n"])))
        out.append((limit, case))
    return out


def _priced(work: cost_model.Work, hw: cost_model.Hardware) -> dict:
    return {**work.__dict__, **cost_model.floor_us(work, hw),
            "floor_hf32_us": cost_model.floor_us(work, hw, hf32=True)["floor_us"]}


def _precision(record: dict) -> dict:
    p = record["precision"] or {}
    return {"verdict": record["verdict"], "matched_ratio": p.get("matched_ratio"),
            "max_abs_error": p.get("max_abs_error")}


def main() -> int:
    hw = cost_model.Hardware()
    backend = ascend_cpu.open()
    hf32 = ascend_cpu.AscendCpuBackend(build_ascend_cpu(HF32_PATCH), cores=None)
    rows = []
    for limit, case in taskbook_rows():
        a = case.args
        left = a.side == abi.SIDE_LEFT
        backend.reset_stats()
        record = run_case(case, backend)
        stats = backend.stats()  # one call's work (untimed), then the emulator's time for it
        timed = run_case(case, backend, timing_config=EMULATOR_TIMING)
        now = cost_model.Work(stats["launches"], stats["cube_macs"],
                              stats["cube_gm_bytes"] + cost_model.csymm_simt_gm_bytes(a.m, a.n, left, a.beta == 0),
                              cost_model.csymm_unique_gm_bytes(a.m, a.n, left, a.beta == 0),
                              record["memory"]["workspace_bytes"])
        rows.append({"case": case.name, "shape": f"{'LEFT' if left else 'RIGHT'} {a.m}x{a.n}",
                     "limit_us": float(limit["limit_us"]),
                     "emulator_us": (timed["timing"] or {}).get("mean_us"),
                     "fp32": _precision(record), "hf32": _precision(run_case(case, hf32)),
                     "before": _priced(cost_model.csymm_plane_design(a.m, a.n, left), hw),
                     "now": _priced(now, hw),
                     "target": _priced(cost_model.csymm_on_chip_design(a.m, a.n, left), hw)})
    probe = {}
    for spec in ("NORMAL_5_1", "NORMAL_0_1"):
        for name, device in (("fp32", backend), ("hf32", hf32)):
            r = kernel_precision.csymm_real_part(device, 1024, spec)
            probe[f"{spec} {name}"] = {"passed": r.passed, "matched_ratio": r.matched_ratio,
                                       "max_abs_error": r.max_abs_error}
    hf32.close()
    backend.close()
    print(json.dumps({"assumptions": hw.assumptions(), "rows": rows, "probe_1024_left": probe}, indent=1))
    for r in rows:
        for design in ("before", "now", "target"):
            d = r[design]
            print(f"{r['shape']:>16} {design:>6}: {d['launches']} launches, {d['cube_macs'] / 1e9:.3f} G MAC, "
                  f"{d['gm_bytes'] / 1e6:.1f} MB GM ({d['unique_gm_bytes'] / 1e6:.1f} unique), workspace "
                  f"{d['workspace_bytes'] / 1e6:.1f} MB, floor {d['floor_us']:.1f} us (cube {d['cube_us']:.1f}, GM "
                  f"{d['memory_us']:.1f}, launches {d['launch_us']:.1f}; HF32 {d['floor_hf32_us']:.1f}) vs limit "
                  f"{r['limit_us']} us")
        print(f"{r['shape']:>16} precision on its row: fp32 {r['fp32']}, hf32 {r['hf32']}")
    for key, p in probe.items():
        print(f"probe {key}: matched ratio {p['matched_ratio']:.5f}, max abs error {p['max_abs_error']:.4g}, "
              f"{'passes' if p['passed'] else 'fails'} MIXED_TOLERANCE against the truth")
    return 0


if __name__ == "__main__":
    sys.exit(main())
