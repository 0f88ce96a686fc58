"""Per-operator knowledge, one module per operator: its case schema, buffer plan, golden, call and FLOP count.

Adding an operator means adding a module here and listing it in `_MODULES`; nothing else branches on operator names.
Each module provides:

    NAME, COLUMNS (the table header it reads), GATE (precision criterion name), Args (frozen dataclass)
    parse(reader: CellReader, description: str) -> Args
    buffers(args, seed) -> dict[str, Buffer]            host inputs, masks (harness.layout)
    golden_result(args, buffers) -> (expected, truth)   storage arrays of the output buffer
    scalars(args) -> dict[str, ctypes scalar | None]     alpha/beta as the host memory the call points to
    call(backend, args, ptrs, handle, scalars) -> int    the status the operator returned
    sample_problem(args, buffers, budget, seed)          (args, buffers, C index) of a sample of C, or None
    output_overlap(args) -> str                          why C's batches overlap ("" when they do not)
    accumulates(args) -> bool                            a repeated call changes its own output (beta != 0)
    error_scale(args, buffers) -> G                      |alpha||A||B| + |beta||C|: Netlib's forward-error scale
    gate(args, thresholds) -> (gate name, options)       exact for pure quick-return rows
    flops(args) -> float;  buffer_bytes(args) -> {name: bytes};  bytes_needed(args) -> int
    expected_workspace_bytes(args) -> int | None
    baseline_params(args) -> dict                        params baselines are keyed by
"""
from __future__ import annotations

import importlib
from types import ModuleType

_MODULES = {"csymm": "harness.ops.csymm", "sgemm_strided_batched": "harness.ops.sgemm_strided_batched"}


def accumulates(args) -> bool:
    """A repeated call changes its own output (beta != 0 reads C), so re-checking it needs the original C again;
    the BLAS-3 operators here share this rule and export it as theirs."""
    return args.beta != 0


def names() -> tuple[str, ...]:
    return tuple(_MODULES)


def get(op: str | None) -> ModuleType | None:
    """The operator module for a table's operator name, or None when this harness does not implement it."""
    if op not in _MODULES:
        return None
    return importlib.import_module(_MODULES[op])
