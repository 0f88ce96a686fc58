"""The `npu` backend: without CANN it fails with one line and tries nothing else; its runtime wrapper is exercised
against a model of the ACL runtime (tests/native/fake_acl.c: host memory, a device timeline) with the CPU twin or
a fake operator library that enqueues device work (a real NPU run is not done in CI)."""
from __future__ import annotations

import ctypes
from pathlib import Path

import fake_device
import numpy as np
import pytest

from harness.model.abi import OP_N, OP_T, Status
from harness.backends import BackendUnavailable, aclblas_lib, npu, open_backend
from harness.ops import sgemm_strided_batched as sgemm_op

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_cann(monkeypatch, tmp_path):
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    try:
        ctypes.CDLL("libascendcl.so")
        pytest.skip("this machine has CANN")
    except OSError:
        pass

    def must_not_load(*_args, **_kwargs):
        raise AssertionError("the operator library must not be touched without CANN")

    monkeypatch.setattr(aclblas_lib, "load_aclblas", must_not_load)


def test_without_cann_one_line_and_nothing_else(no_cann):
    with pytest.raises(BackendUnavailable) as err:
        open_backend("npu", device=0, operator_lib="/does/not/matter.so")
    assert str(err.value) == npu.NO_CANN
    assert "\n" not in str(err.value)


def test_acl_candidates_follow_set_env_variables(tmp_path):
    env = {"ASCEND_HOME_PATH": str(tmp_path / "cann"), "ASCEND_TOOLKIT_HOME": str(tmp_path / "tk")}
    assert npu.acl_library_candidates(env) == [str(tmp_path / "cann/lib64/libascendcl.so"),
                                               str(tmp_path / "tk/lib64/libascendcl.so"), "libascendcl.so"]
    assert npu.acl_library_candidates({}) == ["libascendcl.so"]


def test_operator_library_precedence(tmp_path):
    env = {"ASCEND_OPS_BLAS_LIB": str(tmp_path / "env.so")}
    assert npu.operator_library(str(tmp_path / "arg.so"), env) == tmp_path / "arg.so"
    assert npu.operator_library(None, env) == tmp_path / "env.so"
    assert npu.operator_library(None, {}) == npu.DEFAULT_OPERATOR_LIB


@pytest.fixture
def fake_cann(monkeypatch, tmp_path):
    """The fake ACL runtime (tests/native/fake_acl.c, a model of the device timeline) as the CANN install."""
    home, ops = fake_device.build(tmp_path / "cann")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    return ops


@pytest.fixture
def twin_path():
    from harness.backends.build import BuildError, build_twin
    try:
        return str(build_twin())
    except BuildError as exc:
        pytest.skip(f"cannot build the CPU twin: {exc}")


def test_runtime_wrapper_drives_an_operator(fake_cann, twin_path):
    backend = npu.open(device=0, operator_lib=twin_path)
    try:
        m = n = k = 4
        batch = 2
        rng = np.random.default_rng(1)
        a = rng.standard_normal((batch, k, m), dtype=np.float32)  # column-major m x k per batch -> C order (k, m)
        b = rng.standard_normal((batch, n, k), dtype=np.float32)
        c = np.zeros((batch, n, m), dtype=np.float32)
        da, db, dc = (backend.alloc(x.nbytes) for x in (a, b, c))
        for addr, x in ((da, a), (db, b), (dc, c)):
            backend.upload(addr, x)
        backend.reset_peaks()
        timer = backend.timer()
        timer.start()
        status = sgemm_op.invoke(backend.lib, backend.handle, OP_N, OP_T, m, n, k, 1.0, da, m,
                                                   m * k, db, n, n * k, 0.0, dc, m, m * n, batch)
        timer.stop()
        backend.synchronize()
        assert status == Status.SUCCESS
        assert timer.elapsed_s() >= 0.0
        out = backend.download(dc, c.nbytes).view(np.float32).reshape(batch, n, m)
        for i in range(batch):
            expected = a[i].T @ b[i]  # C(m x n) = A(m x k) * B^T(k x n) in column-major terms
            np.testing.assert_allclose(out[i].T, expected, rtol=1e-5, atol=1e-5)
        assert backend.memory()["workspace_bytes"] is None
        assert backend.memory()["peak_bytes"] >= 0
        with pytest.raises(ValueError):
            backend.download(dc, c.nbytes + 4)  # past the end of the buffer: refused, not read
    finally:
        backend.close()


def test_bad_device_is_one_line(fake_cann, twin_path):
    with pytest.raises(BackendUnavailable) as err:
        npu.open(device=3, operator_lib=twin_path)
    assert "aclrtSetDevice" in str(err.value) and "\n" not in str(err.value)


def test_missing_operator_library_is_one_line(fake_cann, tmp_path):
    with pytest.raises(BackendUnavailable) as err:
        npu.open(operator_lib=str(tmp_path / "absent.so"))
    assert "does not exist" in str(err.value) and "\n" not in str(err.value)


@pytest.fixture
def slow_ops(fake_cann, twin_path, monkeypatch, tmp_path):
    """A fake operator whose calls take 200 us of device work (over every Ascend limit, TC_PF_0001's 7.53 us and
    the 1024^2 rows' 86-89 us) in 3 launches after 25 us of host time; the CPU twin computes its results."""
    fake_device.use(monkeypatch, tmp_path / "cann", twin_path, host_us=25, device_us=200, launches=3)
    return str(fake_cann)


def test_soc_names_map_to_baseline_hardware():
    assert npu.canonical_hardware("Ascend950PR_9599") == "Ascend 950PR"
    assert npu.canonical_hardware("Ascend910B3") == "Ascend 910B"
    assert npu.canonical_hardware(" something else ") == "something else"


TASKBOOK_ROWS = "TC_PF_0001 or TC_PF_0002 or TC_PF_0003"


def run_taskbook_rows(tmp_path, lib, *extra):
    """The three task-book rows through --backend npu on the fake runtime; (exit code, report.json).

    One round of at least 4 samples within 2 s: a FAIL needs the CI's low end above the limit, and with 2 samples of
    a loaded machine's 1024x1024 row (t(1) = 12.7) that end can reach zero. (The verdicts, not the rounds, are
    under test here: every call of those rows is a 1024x1024 csymm on the twin, and 3 rounds tripled them.)"""
    import json

    from harness import cli
    out = tmp_path / "reports"
    code = cli.main(["run", "cases/csymm_test.csv", "--backend", "npu", "--operator-lib", lib, "-k", TASKBOOK_ROWS,
                     "--report-dir", str(out), "--history", str(tmp_path / "h.sqlite"), "--rounds", "1",
                     "--warmup", "1", "--min-samples", "4", "--max-time", "2", *extra])
    report = json.loads(next(out.glob("*/report.json")).read_text())
    return code, report


def taskbook_verdicts(report):
    return {c["case_name"]: [b["verdict"] for b in c["baseline"] if b["kind"] == "taskbook"] for c in report["cases"]}


@pytest.mark.slow  # 1024x1024 rows on the twin: the three tests 17 s idle
def test_too_slow_on_ascend_950pr_fails_each_taskbook_row(fake_cann, slow_ops, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, report = run_taskbook_rows(tmp_path, slow_ops)
    assert report["hardware"] == {"name": "Ascend 950PR", "detected": "Ascend 950PR", "override": None}
    assert report["backend_info"]["soc_name"] == "Ascend950PR_9599"
    assert taskbook_verdicts(report) == {f"TC_PF_000{i}": ["FAIL"] for i in (1, 2, 3)}
    assert all(c["timing"]["n"] >= 4 for c in report["cases"])
    assert code == 1


@pytest.mark.slow  # as above
def test_other_soc_is_no_ref_and_exits_2_with_one_line(fake_cann, slow_ops, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("FAKE_ACL_SOC", "Ascend910B3")
    code, report = run_taskbook_rows(tmp_path, slow_ops)
    assert report["hardware"]["name"] == "Ascend 910B"
    assert taskbook_verdicts(report) == {f"TC_PF_000{i}": ["NO_REF"] for i in (1, 2, 3)}
    assert code == 2
    lines = [line for line in capsys.readouterr().out.splitlines() if "no perf row got a judged baseline" in line]
    assert len(lines) == 1 and "Ascend 910B" in lines[0]


@pytest.mark.slow  # as above
def test_hardware_override_is_judged_and_both_names_reported(fake_cann, slow_ops, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("FAKE_ACL_SOC", "Ascend910B3")
    code, report = run_taskbook_rows(tmp_path, slow_ops, "--hardware", "Ascend 950PR")
    assert report["hardware"] == {"name": "Ascend 950PR", "detected": "Ascend 910B", "override": "Ascend 950PR"}
    assert set(map(tuple, taskbook_verdicts(report).values())) == {("FAIL",)} and code == 1
    md = next((tmp_path / "reports").glob("*/report.md")).read_text()
    assert "Ascend 910B" in md and "Ascend 950PR" in md


def test_harness_run_backend_npu_exits_3(no_cann, capsys):
    from harness import cli
    assert cli.main(["run", "--backend", "npu"]) == 3
    captured = capsys.readouterr()
    assert npu.NO_CANN in captured.out + captured.err
