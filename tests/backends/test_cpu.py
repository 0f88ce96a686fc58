"""The `cpu` backend: the Backend protocol over the CPU twin (or another library with the same ABI)."""
from __future__ import annotations

import hashlib
import os

import foreign
import numpy as np
import pytest

from harness.model.abi import OP_N, Status
from harness.backends import BackendUnavailable, open_backend
from harness.backends import cpu
from harness.backends.build import BuildError, build_twin
from harness.ops import csymm as csymm_op
from harness.ops import sgemm_strided_batched as sgemm_op


@pytest.fixture()
def backend():
    b = open_backend("cpu", cores=2)
    yield b
    b.close()


def test_describe_names_the_twin_and_its_hash(backend):
    info = backend.describe()
    assert info["device"] == "cpu twin (2 emulated cores)"
    assert info["library"] == str(build_twin())
    assert info["library_sha256"] == hashlib.sha256(build_twin().read_bytes()).hexdigest()
    assert info["host"]["machine"]
    assert backend.name == "cpu" and backend.api == "aclblas" and backend.handle


def test_alloc_is_aligned_and_round_trips(backend):
    addrs = [backend.alloc(n) for n in (1, 100, 4096)]
    assert all(a % 64 == 0 for a in addrs)
    data = np.arange(25, dtype=np.float32)
    backend.upload(addrs[1], data)
    assert np.array_equal(backend.download(addrs[1], 100).view(np.float32), data)
    with pytest.raises(ValueError):
        backend.upload(addrs[0], data)  # 100 bytes do not fit in a 1-byte buffer
    with pytest.raises(ValueError):
        backend.download(addrs[2] + 4000, 200)


def test_operator_call_through_device_buffers(backend):
    m = n = k = 8
    a = np.eye(m, dtype=np.float32)
    b = np.arange(k * n, dtype=np.float32)
    da, db, dc = (backend.alloc(x) for x in (a.nbytes, b.nbytes, 4 * m * n))
    backend.upload(da, a)
    backend.upload(db, b)
    timer = backend.timer()
    timer.start()
    status = sgemm_op.invoke(backend.lib, backend.handle, OP_N, OP_N, m, n, k, 2.0, da, m, 0,
                                               db, k, 0, 0.0, dc, m, 0, 1)
    backend.synchronize()
    timer.stop()
    assert status == Status.SUCCESS
    assert np.array_equal(backend.download(dc, 4 * m * n).view(np.float32), 2 * b)
    assert timer.elapsed_s() > 0


def test_memory_reports_workspace_and_peak(backend):
    backend.reset_peaks()
    first = backend.alloc(1000)
    second = backend.alloc(3000)
    backend.free(second)
    backend.alloc(500)
    m, n = 10, 6
    c = backend.alloc(4 * m * n)
    status = sgemm_op.invoke(backend.lib, backend.handle, OP_N, OP_N, m, n, 1, 3.0, first, m, 0,
                                               first, 1, 0, 0.0, c, m, 0, 1)
    assert status == Status.SUCCESS
    workspace = n * 16 * 4
    assert backend.memory() == {"workspace_bytes": workspace, "peak_bytes": 4000 + workspace}
    backend.reset_peaks()
    assert backend.memory() == {"workspace_bytes": 0, "peak_bytes": 1000 + 500 + 4 * m * n}


FOREIGN = foreign.HANDLE + """
extern "C" {
aclblasStatus_t aclblasCsymm(aclblasHandle_t, aclblasSideMode_t, aclblasFillMode_t, int, int, const aclblasComplex*,
    const aclblasComplex*, int, const aclblasComplex*, int, const aclblasComplex*, aclblasComplex*, int)
{ return ACLBLAS_STATUS_NOT_SUPPORTED; }
aclblasStatus_t aclblasSgemmStridedBatched(aclblasHandle_t, aclblasOperation_t, aclblasOperation_t, int, int, int,
    const float*, const float*, int, int64_t, const float*, int, int64_t, const float*, float*, int, int64_t, int)
{ return ACLBLAS_STATUS_NOT_SUPPORTED; }
}
"""


def test_foreign_library_without_twin_extensions(tmp_path):
    """Any library with the required ABI loads; without the twin's extensions memory() cannot tell the workspace."""
    path = foreign.build_library(tmp_path, FOREIGN)
    b = open_backend("cpu", operator_lib=str(path))
    try:
        assert b.describe()["device"] == str(path)
        b.alloc(128)
        b.reset_peaks()
        assert b.memory() == {"workspace_bytes": None, "peak_bytes": 128}
        assert csymm_op.invoke(b.lib, b.handle, 999, 0, 1, 1, 1, None, 1, None, 1, 1, None, 1) == 7
        assert b.last_message() == ""
    finally:
        b.close()


def test_missing_operator_lib_is_unavailable(tmp_path):
    with pytest.raises(BackendUnavailable, match="does not exist"):
        open_backend("cpu", operator_lib=str(tmp_path / "nope.so"))


def test_library_without_the_abi_is_unavailable(tmp_path):
    not_aclblas = tmp_path / "libother.so"
    not_aclblas.write_bytes(b"not an ELF file")
    with pytest.raises(BackendUnavailable, match="cannot use"):
        open_backend("cpu", operator_lib=str(not_aclblas))


def test_build_failure_is_unavailable(monkeypatch):
    def broken(*_, **__):
        raise BuildError("building the CPU twin failed (g++ exit 1): boom")
    monkeypatch.setattr(cpu, "build_twin", broken)
    with pytest.raises(BackendUnavailable, match="boom"):
        open_backend("cpu")


def test_default_cores_follow_the_environment(monkeypatch):
    monkeypatch.setenv("ACLBLAS_TWIN_CORES", "3")
    assert cpu.default_cores() == 3
    for bad in ("zero", "0", "\u00b2"):
        monkeypatch.setenv("ACLBLAS_TWIN_CORES", bad)
        assert cpu.default_cores() == (os.cpu_count() or 1)
