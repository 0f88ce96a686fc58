"""Per-operator knowledge, one package per operator; this module is their registry, the one place that lists them.

A package `harness/ops/<op>/` holds everything the harness knows about one operator: its table columns and reader,
buffer plan, golden (through `golden/`), C signature, the call on each backend API, FLOP count, and in submodules its
table generator (`generate`) and coverage categories (`coverage`). Adding an operator means adding its package and one
line to `_PACKAGES`; no other module of `harness/` names an operator (tests/shape/test_op_packages.py enforces it).
What operators of one family do alike lives once in a family module beside the packages (`symm_family`,
`gemm_family`: the call shape, baseline key, FLOP count, shared checks and coverage columns), which names no
operator either; a package re-exports from it what is part of its interface.

Each package provides:

    NAME, COLUMNS (the table header it reads), GATE (precision criterion name), Args (frozen dataclass)
    REQUIRED                                             the columns without which a row means nothing (besides
                                                         case_name and expect_result): a header lacking one is an
                                                         error before any row runs (harness.tables.header)
    DEFAULTS: {column: what a row gets without it}       every other column but the base ones (harness.tables.
                                                         cases.BASE_DEFAULTS); said once for a header lacking it
    SYMBOL, ARGTYPES                                     the aclblas C symbol and its ctypes argument types
    invoke(lib, handle, *C arguments) -> int             the raw C call (tests and probes use it directly)
    CALLS: {backend api: call(backend, args, ptrs, handle, scalars) -> status}
    parse(reader: CellReader, description: str) -> Args
    buffers(args, seed) -> dict[str, Buffer]            host inputs, masks, pointer arrays (harness.tables.layout)
    golden_result(args, buffers, truth=True)            (expected, truth): storage of the output buffers,
                                                         concatenated in plan order; truth None when not asked
                                                         (the table generator measures with the golden alone)
    scalars(args) -> dict[str, ctypes scalar | None]     alpha/beta as the host memory the call points to
    sample_problem(args, buffers, budget, seed)          (args, buffers, C index) of a sample of C, or None
    output_overlap(args) -> str                          why C's batches overlap ("" when they do not)
    accumulates(args) -> bool                            a repeated call changes its own output (beta != 0)
    error_scale(args, buffers) -> G                      |alpha||A||B| + |beta||C|: Netlib's forward-error scale
    gate(args, thresholds) -> (gate name, options)       exact for pure quick-return rows
    flops(args) -> float;  buffer_bytes(args) -> {role: bytes};  bytes_needed(args) -> int
    expected_workspace_bytes(args) -> int | None
    baseline_params(args) -> dict                        params baselines are keyed by

and may provide (optional):

    verify_parts(args, bufs) -> [(label, index)]         parts of the output judged each on its own, as ops-blas
                                                         verifies them (sgemm_batched: per batch); default: the
                                                         written region as one
    frame_notes(reader) -> [(column, message)]           the cells of a row its ops-blas frame reads otherwise than
                                                         their literal value (csymm: an ld <= 0 is compact);
                                                         `harness lint` warns at each; default: none
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

_PACKAGES = {
    "csymm": "harness.ops.csymm",
    "sgemm_strided_batched": "harness.ops.sgemm_strided_batched",
    "ssymm": "harness.ops.ssymm",
    "sgemm_batched": "harness.ops.sgemm_batched",
}


def accumulates(args) -> bool:
    """A repeated call changes its own output (beta != 0 reads C), so re-checking it needs the original C again;
    the BLAS-3 operators here share this rule and export it as theirs."""
    return args.beta != 0


def names() -> tuple[str, ...]:
    return tuple(_PACKAGES)


def gates() -> dict[str, str]:
    """op -> the precision gate its rows are judged by, as every run's meta records them."""
    return {name: get(name).GATE for name in names()}


def get(op: str | None) -> ModuleType | None:
    """The operator package for a table's operator name, or None when this harness does not implement it."""
    if op not in _PACKAGES:
        return None
    return importlib.import_module(_PACKAGES[op])


def part(op: str, name: str) -> ModuleType | None:
    """A submodule of an operator's package (`generate`, `coverage`), or None when the operator has none."""
    if op not in _PACKAGES:
        return None
    try:
        return importlib.import_module(f"{_PACKAGES[op]}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{_PACKAGES[op]}.{name}":
            return None
        raise


def unsupported(spec: ModuleType, backend: Any) -> str:
    """Why `backend` cannot run this operator ("" when it can): no call for its API, or a library without the
    operator's symbol (the operator's rows are skipped, the others run)."""
    if backend.api not in spec.CALLS:
        return f"operator {spec.NAME} has no call on the {backend.name} backend"
    if backend.api == "aclblas" and not hasattr(backend.lib, spec.SYMBOL):
        library = getattr(backend, "library", None) or getattr(backend.lib, "_name", "the operator library")
        return f"{library} does not export {spec.SYMBOL}"
    return ""


def call(spec: ModuleType, backend: Any, args: Any, ptrs: dict[str, int], handle: int,
         host_scalars: dict[str, object] | None = None) -> int:
    """Run the operator once on `backend` through its call for the backend's API; returns the status."""
    return spec.CALLS[backend.api](backend, args, ptrs, handle,
                                   spec.scalars(args) if host_scalars is None else host_scalars)
