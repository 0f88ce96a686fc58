"""The ops-blas C ABI vocabulary: enum values and status codes exactly as `cann_ops_blas_common.h` defines them.

Everything that talks to an operator library (CSV parsing, goldens, backends) uses these numbers, so a value
read from a CSV reaches the C validation unchanged.
"""
from __future__ import annotations

from enum import IntEnum


class Status(IntEnum):
    SUCCESS = 0
    NOT_INITIALIZED = 1
    ALLOC_FAILED = 2
    INVALID_VALUE = 3
    MAPPING_ERROR = 4
    EXECUTION_FAILED = 5
    INTERNAL_ERROR = 6
    NOT_SUPPORTED = 7
    ARCH_MISMATCH = 8
    HANDLE_IS_NULLPTR = 9
    INVALID_ENUM = 10
    UNKNOWN = 11


OP_N, OP_T, OP_C = 111, 112, 113
UPPER, LOWER = 121, 122
NON_UNIT, UNIT = 131, 132
SIDE_LEFT, SIDE_RIGHT = 141, 142

#: The value the C++ frame's parsers give the word `INVALID` (uplo, trans, diag; not side).
INVALID_ENUM_VALUE = 0xFF

#: Every spelling ops-blas tables use for each enum, beside the values (the one copy: table reading, generators,
#: baselines and lint use these). `INVALID` is not a name: only the C++ parsers' fallback (harness.tables.cases).
SIDE_NAMES = {"ACLBLAS_SIDE_LEFT": SIDE_LEFT, "LEFT": SIDE_LEFT, "ACLBLAS_SIDE_RIGHT": SIDE_RIGHT, "RIGHT": SIDE_RIGHT}
UPLO_NAMES = {"ACLBLAS_UPPER": UPPER, "UPPER": UPPER, "ACLBLAS_LOWER": LOWER, "LOWER": LOWER}
TRANS_NAMES = {"ACLBLAS_OP_N": OP_N, "N": OP_N, "ACLBLAS_OP_T": OP_T, "T": OP_T, "ACLBLAS_OP_C": OP_C, "C": OP_C,
               "ACLBLAS_OP_H": OP_C, "H": OP_C}
DIAG_NAMES = {"ACLBLAS_NON_UNIT": NON_UNIT, "NON_UNIT": NON_UNIT, "ACLBLAS_UNIT": UNIT, "UNIT": UNIT}


#: `ACLBLAS_STATUS_X` and `X` for every status.
STATUS_NAMES = {name: int(s) for s in Status for name in (f"ACLBLAS_STATUS_{s.name}", s.name)}


def status_name(code: int) -> str:
    """`ACLBLAS_STATUS_X` for a known code, the bare integer otherwise."""
    try:
        return f"ACLBLAS_STATUS_{Status(code).name}"
    except ValueError:
        return str(code)
