"""Cell vocabulary shared by the case-table generators: enum names, fills, scalars, thresholds, row seeds.

Every cell is produced as a string from integers or Python floats (`repr`), never from numpy scalars or
locale-dependent formatting, so a table is byte-identical on every run and platform.
"""
from __future__ import annotations

import random
from collections.abc import Iterable

from harness import abi

DEFAULT_SEED = 20261130

SIDES = {"ACLBLAS_SIDE_LEFT": abi.SIDE_LEFT, "ACLBLAS_SIDE_RIGHT": abi.SIDE_RIGHT,
         "LEFT": abi.SIDE_LEFT, "RIGHT": abi.SIDE_RIGHT}
UPLOS = {"ACLBLAS_UPPER": abi.UPPER, "ACLBLAS_LOWER": abi.LOWER, "UPPER": abi.UPPER, "LOWER": abi.LOWER}
TRANS = {"ACLBLAS_OP_N": abi.OP_N, "ACLBLAS_OP_T": abi.OP_T, "ACLBLAS_OP_C": abi.OP_C,
         "N": abi.OP_N, "T": abi.OP_T, "C": abi.OP_C, "ACLBLAS_OP_H": abi.OP_C, "H": abi.OP_C}

#: FP32 MERE threshold 2^-13, written exactly (the ops-blas CSVs truncate it to 0.00012207031).
MERE_THRESHOLD = "0.0001220703125"

UNIFORM = "RANDOM_5_5"
ZEROS = "VALUE_NORM_0"
ALTERNATING = "RANDOM_ALTER"
EXTREMES = "RANDOM_EXTREME"
INF = "VALUE_NORM_INF"
NINF = "VALUE_NORM_NINF"
NAN = "VALUE_NORM_NAN"
LARGE = "RANDOM_NORM_1E6"
NULLPTR = "NULLPTR"
#: Fills the ordinary (non-extreme) rows never use: they are the `TC_EX_*` inputs.
SPECIAL_FILLS = (ZEROS, ALTERNATING, EXTREMES, INF, NINF, NAN, LARGE)


def enum_cell(value: int, names: dict[str, int]) -> str:
    """The column's `ACLBLAS_*` name for a valid value, the bare integer otherwise — also for a value that is valid
    in another column (side 121 stays `121`), never `INVALID` or `0xFF`."""
    for name, v in names.items():
        if v == value and name.startswith("ACLBLAS_"):
            return name
    return str(value)


def enum_value(cell: str, names: dict[str, int], default: int) -> int:
    """The integer the C++ `parseEnum` passes: the column's names, else `std::stoi`, else the default."""
    cell = cell.strip()
    if cell in names:
        return names[cell]
    try:
        return int(cell)
    except ValueError:
        return default


def status_cell(status: abi.Status) -> str:
    return f"ACLBLAS_STATUS_{status.name}"


def status_value(cell: str) -> abi.Status:
    cell = cell.strip() or "SUCCESS"
    return abi.Status[cell.removeprefix("ACLBLAS_STATUS_")]


def num(x: float) -> str:
    """A scalar cell: the shortest repr of a Python float (platform independent)."""
    return repr(float(x))


def thresholds(success: bool, dims: Iterable[int]) -> tuple[str, str]:
    """(mere_threshold, mare_multiplier): 2^-13 with 10, or 50 once a dimension reaches 2048; `0,0` on rows that
    expect an error (nothing is verified there)."""
    if not success:
        return "0", "0"
    return MERE_THRESHOLD, "50" if max(dims, default=0) >= 2048 else "10"


def _tenths(t: int) -> str:
    """A number in the fill grammar from tenths: -25 -> `N2.5`."""
    return f"{'N' if t < 0 else ''}{abs(t) // 10}.{abs(t) % 10}"


def normal_fill(rng: random.Random) -> str:
    """`NORMAL_<mean>_<sigma>` (project extension) with mean in [-5, 5] and sigma in [0.1, 2] (task book §3.5)."""
    return f"NORMAL_{_tenths(rng.randint(-50, 50))}_{_tenths(rng.randint(1, 20))}"


def ordinary_fill(rng: random.Random) -> str:
    """Uniform [-5, 5) or normal, half and half."""
    return UNIFORM if rng.random() < 0.5 else normal_fill(rng)


def padded(minimum: int, rng: random.Random, big: bool = False) -> int:
    """A leading dimension above the minimum: a few elements, or a whole unaligned block."""
    return minimum + (rng.choice((17, 33, 64, 100)) if big else rng.randint(1, 7))


def finalize(families: list[tuple[str, list[dict[str, str]]]], header: tuple[str, ...],
             rng: random.Random) -> list[dict[str, str]]:
    """Name rows `<family>_0001`..., give each a distinct uint32 seed, order the cells by the header.

    Seeds stay below 2^31 so per-array derivations (+1, +2, +3b, +7919) never wrap."""
    total = sum(len(rows) for _, rows in families)
    seeds = rng.sample(range(1, 2 ** 31 - 2 ** 20), total)
    out: list[dict[str, str]] = []
    for family, rows in families:
        for i, row in enumerate(rows, start=1):
            full = {**row, "case_name": f"{family}_{i:04d}", "random_seed": str(seeds[len(out)])}
            if set(full) != set(header):
                raise ValueError(f"row {full['case_name']} has cells {sorted(set(full) ^ set(header))} off the header")
            out.append({key: full[key] for key in header})
    return out
