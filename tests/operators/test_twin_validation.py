"""Parameter validation of both operators on the CPU twin: every invalid parameter's status, the documented check
order (two faults in one call: the earlier check wins), validation before quick returns, and the last message."""
from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pytest

from harness.model.abi import INVALID_ENUM_VALUE, OP_N, OP_T, SIDE_LEFT, SIDE_RIGHT, UPPER, Status
from harness.backends import aclblas_lib
from harness.ops import csymm as csymm_op
from harness.ops import sgemm_strided_batched as sgemm_op

M, N, K = 6, 5, 4


@pytest.fixture(scope="module")
def buffers():
    """Generous buffers, so a call that passes validation by mistake cannot run out of bounds."""
    return [np.zeros(64 * 64, np.complex64) for _ in range(3)]


def csymm_args(handle, buffers) -> dict:
    a, b, c = (x.ctypes.data for x in buffers)
    return dict(handle=handle, side=SIDE_LEFT, uplo=UPPER, m=M, n=N, alpha=1 + 1j, a=a, lda=M, b=b, ldb=M,
                beta=0.5, c=c, ldc=M)


# (name, override, status) in the documented check order of csymm_host.h
CSYMM_FAULTS = [
    ("handle null", dict(handle=None), Status.HANDLE_IS_NULLPTR),
    ("side 999", dict(side=999), Status.INVALID_ENUM),
    ("side INVALID", dict(side=INVALID_ENUM_VALUE), Status.INVALID_ENUM),
    ("uplo 0xFF", dict(uplo=INVALID_ENUM_VALUE), Status.INVALID_ENUM),
    ("uplo is a side value", dict(uplo=SIDE_RIGHT), Status.INVALID_ENUM),
    ("m < 0", dict(m=-1), Status.INVALID_VALUE),
    ("n < 0", dict(n=-1), Status.INVALID_VALUE),
    ("alpha null", dict(alpha=None), Status.INVALID_VALUE),
    ("beta null", dict(beta=None), Status.INVALID_VALUE),
    ("lda < m (LEFT)", dict(lda=M - 1), Status.INVALID_VALUE),
    ("ldb < m", dict(ldb=M - 1), Status.INVALID_VALUE),
    ("ldc < m", dict(ldc=M - 1), Status.INVALID_VALUE),
    ("A null", dict(a=None), Status.INVALID_VALUE),
    ("B null", dict(b=None), Status.INVALID_VALUE),
    ("C null, beta != 0", dict(c=None), Status.INVALID_VALUE),
]


def call_csymm(lib, args: dict) -> int:
    return csymm_op.invoke(lib, args["handle"], args["side"], args["uplo"], args["m"], args["n"], args["alpha"],
                             args["a"], args["lda"], args["b"], args["ldb"], args["beta"], args["c"], args["ldc"])


# (override, status) at the edges of csymm's rules
CSYMM_EDGES = [
    (dict(side=SIDE_RIGHT, lda=N - 1), Status.INVALID_VALUE),   # RIGHT: lda >= max(1, n)
    (dict(side=SIDE_RIGHT, lda=N), Status.SUCCESS),
    (dict(m=0, lda=0), Status.INVALID_VALUE),                    # ld >= 1 even for empty matrices
    (dict(m=0, lda=1, ldb=1, ldc=1, side=999), Status.INVALID_ENUM),  # validation precedes the quick return
    (dict(m=0, lda=1, ldb=1, ldc=1, a=None, b=None, c=None), Status.SUCCESS),
    (dict(alpha=0, beta=1, a=None), Status.INVALID_VALUE),       # alpha == 0 && beta == 1 after validation
    (dict(beta=0, c=None), Status.SUCCESS),                      # C may be NULL when beta == 0
]


def sgemm_args(handle, buffers) -> dict:
    a, b, c = (x.ctypes.data for x in buffers)
    return dict(handle=handle, ta=OP_N, tb=OP_N, m=M, n=N, k=K, alpha=1.0, a=a, lda=M, sa=M * K, b=b, ldb=K,
                sb=K * N, beta=0.5, c=c, ldc=M, sc=M * N, batch=2)


SGEMM_FAULTS = [
    ("handle null", dict(handle=None), Status.HANDLE_IS_NULLPTR),
    ("transA 999", dict(ta=999), Status.INVALID_VALUE),
    ("transA 0xFF", dict(ta=INVALID_ENUM_VALUE), Status.INVALID_VALUE),
    ("transB 0", dict(tb=0), Status.INVALID_VALUE),
    ("m < 0", dict(m=-1), Status.INVALID_VALUE),
    ("n < 0", dict(n=-1), Status.INVALID_VALUE),
    ("k < 0", dict(k=-1), Status.INVALID_VALUE),
    ("batchCount < 0", dict(batch=-1), Status.INVALID_VALUE),
    ("alpha null", dict(alpha=None), Status.INVALID_VALUE),
    ("beta null", dict(beta=None), Status.INVALID_VALUE),
    ("lda < m (N)", dict(lda=M - 1), Status.INVALID_VALUE),
    ("ldb < k (N)", dict(ldb=K - 1), Status.INVALID_VALUE),
    ("ldc < m", dict(ldc=M - 1), Status.INVALID_VALUE),
    ("A null", dict(a=None), Status.INVALID_VALUE),
    ("B null", dict(b=None), Status.INVALID_VALUE),
    ("C null", dict(c=None), Status.INVALID_VALUE),
]


def call_sgemm(lib, args: dict) -> int:
    return sgemm_op.invoke(
        lib, args["handle"], args["ta"], args["tb"], args["m"], args["n"], args["k"], args["alpha"], args["a"],
        args["lda"], args["sa"], args["b"], args["ldb"], args["sb"], args["beta"], args["c"], args["ldc"],
        args["sc"], args["batch"])


SGEMM_EDGES = [
    (dict(ta=OP_T, lda=K - 1), Status.INVALID_VALUE),   # transA != N: lda >= max(1, k)
    (dict(ta=OP_T, lda=K), Status.SUCCESS),
    (dict(tb=OP_T, ldb=N - 1), Status.INVALID_VALUE),   # transB != N: ldb >= max(1, n)
    (dict(tb=OP_T, ldb=N), Status.SUCCESS),
    (dict(m=0, ta=999), Status.INVALID_VALUE),          # validation precedes the quick return
    (dict(m=0, a=None, b=None, c=None), Status.SUCCESS),
    (dict(batch=0, c=None), Status.SUCCESS),
    (dict(k=0, a=None, b=None), Status.SUCCESS),        # no product: A and B are not needed
    (dict(alpha=0.0, beta=1.0, c=None), Status.INVALID_VALUE),
    (dict(sa=0, sb=0), Status.SUCCESS),                 # stride 0 is a broadcast, not an error
]

#: operator -> (its valid arguments, the call, its faults in check order, the edges of its rules)
OPERATORS = {"csymm": (csymm_args, call_csymm, CSYMM_FAULTS, CSYMM_EDGES),
             "sgemm": (sgemm_args, call_sgemm, SGEMM_FAULTS, SGEMM_EDGES)}


def call(op: str, twin, buffers, *overrides: dict) -> int:
    """`op` on valid arguments with the overrides applied in turn (the last one wins on a shared parameter)."""
    args_of, call_op, _, _ = OPERATORS[op]
    args = args_of(twin[1], buffers)
    for override in overrides:
        args.update(override)
    return call_op(twin[0], args)


@pytest.mark.parametrize("op", OPERATORS)
def test_valid_baseline(twin, buffers, op):
    assert call(op, twin, buffers) == Status.SUCCESS


@pytest.mark.parametrize("op,override,status", [
    pytest.param(op, override, status, id=f"{op}-{name}")
    for op, (_, _, faults, _) in OPERATORS.items() for name, override, status in faults])
def test_each_fault(twin, buffers, op, override, status):
    assert call(op, twin, buffers, override) == status


@pytest.mark.parametrize("op,first,second", [
    (op, first, second) for op, (_, _, faults, _) in OPERATORS.items()
    for first, second in itertools.combinations(range(len(faults)), 2)])
def test_first_fault_in_order_wins(twin, buffers, op, first, second):
    faults = OPERATORS[op][2]
    (_, o1, s1), (_, o2, _) = faults[first], faults[second]
    if o1.keys() & o2.keys():
        pytest.skip("same parameter")
    assert call(op, twin, buffers, o2, o1) == s1


@pytest.mark.parametrize("op,override,status", [
    (op, override, status) for op, (_, _, _, edges) in OPERATORS.items() for override, status in edges])
def test_edges_of_the_rules(twin, buffers, op, override, status):
    assert call(op, twin, buffers, override) == status


def test_failure_leaves_a_message_success_clears_it(twin, buffers):
    lib, handle = twin
    assert call_sgemm(lib, {**sgemm_args(handle, buffers), "m": -1}) == Status.INVALID_VALUE
    assert "status 3" in aclblas_lib.last_message(lib, handle)
    assert call_sgemm(lib, sgemm_args(handle, buffers)) == Status.SUCCESS
    assert aclblas_lib.last_message(lib, handle) == ""


def test_handle_functions(twin):
    lib, handle = twin
    assert lib.aclblasCreate(None) == Status.HANDLE_IS_NULLPTR
    preset = ctypes.c_void_p(1234)
    assert lib.aclblasCreate(ctypes.byref(preset)) == Status.INVALID_VALUE  # must be NULL on entry (ops-blas)
    assert lib.aclblasDestroy(None) == Status.HANDLE_IS_NULLPTR
    assert lib.aclblasSetStream(None, None) == Status.HANDLE_IS_NULLPTR
    assert lib.aclblasSetStream(handle, None) == Status.SUCCESS
    assert lib.aclblasSetWorkspace(handle, None, 64) == Status.INVALID_VALUE
    assert lib.aclblasTwinSetCoreCount(handle, 0) == Status.INVALID_VALUE
    assert lib.aclblasTwinGetLastMessage(None) == b""
