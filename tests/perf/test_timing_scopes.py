"""Timing scopes on a model of an Ascend device (tests/helpers/fake_device.py): an operator that costs H us of host
time per call and enqueues D us of device work in k launches reads D in the `device` scope, H + D in `call` and H + D/N per
call in `steady`; a baseline is judged in the scope it declares; the teardown order is checked by the model. A real
950PR is not needed and not used: what the runtime does is what hicann/runtime docs/api_docs say it does."""
from __future__ import annotations

import ctypes
import json
import time
from ctypes import POINTER, byref, c_int, c_int32, c_void_p

import fake_device
import numpy as np
import pytest

from harness.model import abi
from harness.perf import verdict as perf, timing
from harness.backends import aclblas_lib, npu
from harness.perf.baselines import load_baselines, match
from harness.model import settings
from harness.model.settings import TimingConfig

H, D, K = 25, 6, 3   # the issue's operator: 25 us host, 6 us device in 3 launches; TC_PF_0001's limit is 7.53 us
ROOT = fake_device.ROOT
CSYMM_ARGTYPES = [c_void_p, c_int32, c_int32, c_int, c_int, POINTER(aclblas_lib.AclblasComplex), c_void_p, c_int,
                  c_void_p, c_int, POINTER(aclblas_lib.AclblasComplex), c_void_p, c_int]


@pytest.fixture
def model(monkeypatch, tmp_path):
    """open(unit_ns=..., **costs) -> (npu backend on the model, its violations file); closed at the end."""
    opened = []

    def open_model(clock: str = "real", **costs):
        home, ops = fake_device.build(tmp_path / f"cann{len(opened)}")   # one runtime instance per open
        violations = fake_device.use(monkeypatch, home, fake_device.twin(), clock=clock, **costs)
        opened.append(npu.open(device=0, operator_lib=str(ops)))
        if clock == "virtual":
            model_clock = ctypes.CDLL(str(fake_device.runtime_path())).fakeAclNow
            model_clock.restype = ctypes.c_longlong
            opened[-1].host_clock = model_clock
        return opened[-1], violations

    yield open_model
    for backend in opened:
        if backend.acl is not None:
            backend.close()


def csymm_call(backend, m: int = 8):
    """A zero-filled m x m Csymm on the backend's buffers, as the engine would call it (64-byte data pointers)."""
    addrs = [backend.alloc(m * m * 8) for _ in range(3)]
    for addr in addrs:
        backend.upload(addr, np.zeros(m * m, np.complex64))
    fn = aclblas_lib.function(backend.lib, "aclblasCsymm", CSYMM_ARGTYPES)
    alpha, beta = aclblas_lib.complex_value(1.0), aclblas_lib.complex_value(0.0)
    a, b, c = addrs
    return lambda: fn(backend.handle, abi.SIDE_LEFT, abi.UPPER, m, m, byref(alpha), a, m, b, m, byref(beta), c, m)


def test_each_scope_reads_what_the_model_costs(model):
    """On the model's virtual clock (the harness's own Python costs nothing there): exact figures."""
    backend, violations = model(clock="virtual", host_us=H, device_us=D, launches=K)
    call = csymm_call(backend)
    config = TimingConfig(scopes=("device", "call", "steady"), warmup=1, min_samples=8, max_samples=8,
                          steady_batch=4, max_time_s=60)
    t = timing.measure_scopes(call, backend, config)
    unheld = timing.measure(call, backend.timer, TimingConfig(warmup=1, min_samples=8, max_samples=8))

    assert t["scope"] == "device" and "held by a notify" in t["method"]
    call_scope, steady = t["scopes"]["call"], t["scopes"]["steady"]
    assert call_scope["scope"] == "call" and steady["scope"] == "steady" and steady["calls_per_sample"] == 4
    for record, expected in ((t, D), (call_scope, H + D), (steady, H + D / 4)):  # steady: host-bound, N = 4
        assert record["min_us"] == pytest.approx(expected, rel=1e-3)
        assert record["max_us"] == pytest.approx(expected, rel=1e-3)
    # negative control: events on a stream that is not held start while the host is still enqueuing
    assert unheld["mean_us"] == pytest.approx(H + D, rel=1e-3)
    backend.close()
    assert violations.read_text() == ""


def test_a_call_that_synchronises_its_own_held_stream_is_one_error(model):
    """The device scope holds the stream until the call returns; a call that waits for its stream itself can
    never return there: the model answers the wait with the runtime's timeout error, not a hang."""
    backend, violations = model()
    timer = backend.scope_timer("device")
    timer.start()
    with pytest.raises(npu.AclError, match="aclrtSynchronizeStream"):
        backend.synchronize()
    assert "held by a notify" in violations.read_text()
    timer.stop()    # the release: the stream runs again, and closes cleanly
    timer.elapsed_s()


def taskbook_run(tmp_path, monkeypatch, lib, *scopes):
    from harness import cli
    monkeypatch.chdir(ROOT)
    out = tmp_path / "reports"
    code = cli.main(["run", "cases/csymm_test.csv", "--backend", "npu", "--operator-lib", lib, "-k", "TC_PF_0001",
                     "--report-dir", str(out), "--history", str(tmp_path / "h.sqlite"), "--rounds", "1",
                     "--warmup", "1", "--min-samples", "12", "--max-time", "1", "--timing-scope", ",".join(scopes)])
    return code, json.loads(next(out.glob("*/report.json")).read_text())["cases"][0]


@pytest.mark.slow  # 33 s of a bare pytest -n 2 at load ~20
def test_taskbook_row_passes_in_device_scope_and_fails_in_call_scope(tmp_path, monkeypatch):
    home, ops = fake_device.build(tmp_path / "cann")
    violations = fake_device.use(monkeypatch, home, fake_device.twin(), host_us=H, device_us=D, launches=K)
    code, row = taskbook_run(tmp_path, monkeypatch, str(ops), "device", "call")
    assert row["verdict"] == "PASS" and code == 0, row["reason"]
    t = row["timing"]
    assert t["scope"] == "device" and t["mean_us"] == pytest.approx(D, rel=0.01)
    assert t["scopes"]["call"]["scope"] == "call" and t["scopes"]["call"]["min_us"] >= H + D
    [verdict] = [b for b in row["baseline"] if b["kind"] == "taskbook"]
    assert (verdict["verdict"], verdict["scope"], verdict["value_us"]) == ("PASS", "device", 7.53)
    assert verdict["measured_mean_us"] == pytest.approx(D, rel=0.01)

    # the same limit declared in the call scope is judged on the call figure: FAIL
    table = (ROOT / "cases/baselines/csymm_taskbook.csv").read_text()
    (tmp_path / "call").mkdir()
    (tmp_path / "call/csymm_taskbook.csv").write_text(table.replace(",device\n", ",call\n"))
    params = {"side": abi.SIDE_LEFT, "uplo": abi.UPPER, "m": 256, "n": 256}
    in_call = match(load_baselines(tmp_path / "call", "csymm"), "TC_PF_0001", params)
    [judged] = perf.baseline_verdicts(t, in_call, "Ascend 950PR")
    assert (judged["verdict"], judged["scope"]) == ("FAIL", "call") and judged["measured_mean_us"] >= H + D

    # a device-scope limit and a run that timed only the call scope: not judged, and it says which scope to run
    in_device = match(load_baselines(ROOT / "cases/baselines", "csymm"), "TC_PF_0001", params)
    [unjudged] = perf.baseline_verdicts(t["scopes"]["call"], in_device, "Ascend 950PR")
    assert unjudged["verdict"] == "NO_REF" and "--timing-scope device" in unjudged["reason"]
    assert violations.read_text() == ""


@pytest.mark.slow  # 28 s of a bare pytest -n 2 at load ~20
def test_a_runtime_without_notify_says_so_once_and_times_the_call_scope(tmp_path, monkeypatch, capsys):
    # the default scope (device) on a runtime without the notify calls: one line at start-up, the row timed in the
    # call scope, its device-scope limit NO_REF with the reason (before: every perf row an ERROR, exit 1)
    home, ops = fake_device.build(tmp_path / "cann", notify=False)
    violations = fake_device.use(monkeypatch, home, fake_device.twin(), host_us=H, device_us=D, launches=K)
    capsys.readouterr()
    code, row = taskbook_run(tmp_path, monkeypatch, str(ops), "device")
    err = capsys.readouterr().err
    assert err.count(npu.NO_NOTIFY) == 1, err
    assert code == 2 and row["verdict"] == "PASS", row.get("reason")
    t = row["timing"]
    assert t["scope"] == "call" and t["min_us"] >= H + D
    assert t["scope_fallback"] == {"asked": "device", "reason": npu.NO_NOTIFY}
    [verdict] = [b for b in row["baseline"] if b["kind"] == "taskbook"]
    assert verdict["verdict"] == "NO_REF" and verdict["scope"] == "device"
    assert "lacks aclrtCreateNotify" in verdict["reason"] and "this run timed call" in verdict["reason"]
    assert violations.read_text() == ""


@pytest.mark.slow  # 35 s of a bare pytest -n 2 at load ~20
def test_a_runtime_with_notify_says_nothing_and_times_the_device_scope(tmp_path, monkeypatch, capsys):
    # the negative control of the test above: the same run on the runtime with the notify calls
    home, ops = fake_device.build(tmp_path / "cann")
    fake_device.use(monkeypatch, home, fake_device.twin(), host_us=H, device_us=D, launches=K)
    capsys.readouterr()
    code, row = taskbook_run(tmp_path, monkeypatch, str(ops), "device")
    assert npu.NO_NOTIFY not in capsys.readouterr().err
    assert code == 0 and row["timing"]["scope"] == "device" and "scope_fallback" not in row["timing"]


def test_default_scope_is_device_and_the_option_is_checked(capsys, monkeypatch):
    from harness import cli
    assert TimingConfig().scopes == ("device",) and TimingConfig(mode="steady").scopes == ("steady",)
    assert TimingConfig(scopes=("call", "steady")).mode == "sync"
    with pytest.raises(ValueError):
        TimingConfig(scopes=("device", "device"))
    with pytest.raises(SystemExit) as exit_:
        cli.main(["run", "--timing-scope", "wall"])
    assert exit_.value.code == 3
    assert "device, call, steady, msprof" in capsys.readouterr().err
    monkeypatch.chdir(ROOT)
    assert cli.main(["run", "cases/csymm_test.csv", "--timing-scope", "msprof"]) == 3   # cpu: no msprof
    assert capsys.readouterr().err.count("\n") == 1


def test_baseline_scope_column(tmp_path):
    table = tmp_path / "csymm_taskbook.csv"
    table.write_text("side,uplo,m,n,limit_us,hardware,source,method,scope\n"
                     "ACLBLAS_SIDE_LEFT,ACLBLAS_UPPER,8,8,5,Ascend 950PR,s,m,steady\n")
    [b] = load_baselines(tmp_path, "csymm")
    assert b.scope == "steady" and "scope" not in b.key
    table.write_text(table.read_text().replace(",steady", ",wall"))
    with pytest.raises(ValueError, match=r"csymm_taskbook.csv:2:9: scope 'wall' is not one of"):
        load_baselines(tmp_path, "csymm")
    table.write_text("side,uplo,m,n,limit_us,hardware,source,method\nLEFT,UPPER,8,8,5,Ascend 950PR,s,m\n")
    assert load_baselines(tmp_path, "csymm")[0].scope == settings.DEFAULT_SCOPE
    shipped = load_baselines(ROOT / "cases/baselines", "csymm")
    assert {b.scope for b in shipped} == {"device"}


def test_free_or_destroy_with_tasks_pending_is_an_error_in_the_model(model):
    """Negative controls of the teardown checks: the model refuses what ACL documents as wrong."""
    backend, violations = model(device_us=50)
    call = csymm_call(backend)
    acl = backend.acl
    assert call() == 0
    assert acl.aclrtFree(next(iter(backend._buffers))) != 0
    assert acl.aclrtDestroyStream(backend.stream) != 0
    log = violations.read_text()
    assert "aclrtFree with tasks not synchronised" in log and "aclrtDestroyStream with tasks not" in log
    backend.close()   # synchronises first: no new violation
    assert violations.read_text() == log
    assert acl.aclrtMalloc(byref(c_void_p()), 8, 0) != 0
    assert "aclrtMalloc after aclFinalize" in violations.read_text()


def test_close_resets_and_finalises_when_a_step_fails(model, monkeypatch):
    backend, violations = model(device_us=50)
    call = csymm_call(backend)
    call()
    acl = backend.acl
    monkeypatch.setattr(acl, "aclrtFree", lambda addr: 507899)
    timer = backend.timer()
    with pytest.raises(npu.AclError, match="aclrtFree"):
        backend.close()
    assert ctypes.CDLL(str(fake_device.runtime_path())).fakeAclFinalized() == 1
    assert not ctypes.CDLL(str(fake_device.runtime_path())).fakeAclDeviceSet()
    del timer      # its events went at close; nothing touches ACL after aclFinalize
    assert violations.read_text() == ""


def test_a_failed_open_finalises(monkeypatch, tmp_path):
    home, ops = fake_device.build(tmp_path / "cann")
    fake_device.use(monkeypatch, home, fake_device.twin())
    with pytest.raises(Exception, match="aclrtSetDevice"):
        npu.open(device=3, operator_lib=str(ops))
    assert ctypes.CDLL(str(fake_device.runtime_path())).fakeAclFinalized() == 1


def test_finalise_skips_the_log_flush_wait_unless_the_user_asks_for_it(model, monkeypatch):
    """aclFinalize waits up to 2 s for the device log flush unless ASCEND_LOG_DEVICE_FLUSH_TIMEOUT=0 (the model
    waits the 2 s); open sets 0 where the user has not set it."""
    monkeypatch.delenv(npu.LOG_FLUSH_ENV, raising=False)
    backend, _ = model()
    began = time.monotonic()
    backend.close()
    quick = time.monotonic() - began
    assert quick < 1.5
    monkeypatch.setenv(npu.LOG_FLUSH_ENV, "2000")
    backend, _ = model()
    began = time.monotonic()
    backend.close()
    assert time.monotonic() - began >= 2.0


def test_timed_rows_keep_the_alignment_of_acl_malloc(model):
    """The fake operator reports a matrix pointer that is not 64-byte aligned; one 8 bytes off is caught."""
    backend, violations = model()
    fn = aclblas_lib.function(backend.lib, "aclblasCsymm", CSYMM_ARGTYPES)
    base = backend.alloc(4096)
    one = aclblas_lib.complex_value(1.0)
    assert fn(backend.handle, abi.SIDE_LEFT, abi.UPPER, 2, 2, byref(one), base, 2, base, 2, byref(one), base, 2) == 0
    assert fn(backend.handle, abi.SIDE_LEFT, abi.UPPER, 2, 2, byref(one), base + 8, 2, base, 2, byref(one), base,
              2) != 0
    assert "not 64-byte aligned" in violations.read_text()


def msprof_run(tmp_path, monkeypatch, lib):
    from harness import cli
    monkeypatch.chdir(ROOT)
    out = tmp_path / "reports"
    code = cli.main(["run", "cases/csymm_test.csv", "--backend", "npu", "--operator-lib", lib, "-k", "TC_PF_0001",
                     "--report-dir", str(out), "--warmup", "1", "--min-samples", "12", "--max-time", "1",
                     "--timing-scope", "msprof"])
    found = list(out.glob("msprof-*/msprof.json"))
    return code, json.loads(found[0].read_text())["cases"] if found else None


@pytest.mark.slow  # 92 s of a bare pytest -n 2 at load ~20
def test_msprof_scope_sums_each_calls_kernels_from_the_profile(tmp_path, monkeypatch, capsys):
    home, ops = fake_device.build(tmp_path / "cann")
    violations = fake_device.use(monkeypatch, home, fake_device.twin(), host_us=H, device_us=D, launches=K)
    fake_device.msprof_on_path(monkeypatch, tmp_path / "bin")
    code, [row] = msprof_run(tmp_path, monkeypatch, str(ops))
    t = row["timing"]
    assert (t["scope"], t["kernels_per_call"], t["n"]) == ("msprof", K, t["scopes"]["call"]["n"])
    assert t["n"] >= 12 and all(us == pytest.approx(D, abs=0.002) for us in t["samples_us"])
    assert t["scopes"]["call"]["min_us"] >= H + D
    assert len(t["kernel_blocks"]) == K and all(b == {"blocks": [24], "mix_blocks": []}
                                                for b in t["kernel_blocks"].values())
    [verdict] = [b for b in row["baseline"] if b["kind"] == "taskbook"]
    assert verdict["verdict"] == "NO_REF" and "device scope, this run timed msprof, call" in verdict["reason"]
    assert code == 2    # the shipped limit is in the device scope: not judged on an msprof figure
    table = (ROOT / "cases/baselines/csymm_taskbook.csv").read_text().replace(",device\n", ",msprof\n")
    (tmp_path / "msprof").mkdir()
    (tmp_path / "msprof/csymm_taskbook.csv").write_text(table)
    params = {"side": abi.SIDE_LEFT, "uplo": abi.UPPER, "m": 256, "n": 256}
    [judged] = perf.baseline_verdicts(t, match(load_baselines(tmp_path / "msprof", "csymm"), "TC_PF_0001", params),
                                      "Ascend 950PR")
    assert (judged["verdict"], judged["scope"]) == ("PASS", "msprof")
    assert "TC_PF_0001: PASS, msprof 6 us per call" in capsys.readouterr().out
    assert violations.read_text() == ""


@pytest.mark.slow  # 67 s of a bare pytest -n 2 at load ~20
def test_msprof_profile_problems_are_one_line(tmp_path, monkeypatch, capsys):
    from harness.flows import msprof
    with pytest.raises(msprof.MsprofError, match="no op_summary_"):
        msprof.read_kernels(tmp_path)
    (tmp_path / "op_summary_0_1.csv").write_text("Op Name,Task Type\nk0,AI_CORE\n")
    with pytest.raises(msprof.MsprofError, match=r"op_summary_0_1.csv:1:1: no 'Task Duration\(us\)' column"):
        msprof.read_kernels(tmp_path)
    (tmp_path / "op_summary_0_1.csv").write_text("Op Name,Task Type,Task Duration(us)\nk0,AI_CORE,x\n"
                                                 "memcpy,MEMCPY_ASYNC,3\n")
    with pytest.raises(msprof.MsprofError, match=r"op_summary_0_1.csv:2:3: Task Duration\(us\) 'x' is not"):
        msprof.read_kernels(tmp_path)
    kernels = [("a", 1.0), ("b", 2.0)] * 4
    assert msprof.period([n for n, _ in kernels]) == 2
    assert msprof.per_call_us(kernels, 2, 1) == ([3.0, 3.0], 2)
    with pytest.raises(msprof.MsprofError, match="do not group into 5"):
        msprof.per_call_us(kernels, 4, 1)

    home, ops = fake_device.build(tmp_path / "cann")
    fake_device.use(monkeypatch, home, fake_device.twin(), device_us=D, launches=K)
    fake_device.msprof_on_path(monkeypatch, tmp_path / "bin")
    monkeypatch.setenv("FAKE_MSPROF_WRITE", "0")
    capsys.readouterr()
    code, _ = msprof_run(tmp_path, monkeypatch, str(ops))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3 and len(err) == 1 and "no op_summary_*.csv or OpBasicInfo*.csv under" in err[0]


#: One file of each header shape msprof's export code lists (harness/flows/msprof.py START, BLOCKS, MIX_BLOCKS cite
#: them): the current op_summary, the older one (Block Dim / Mix Block Dim), the header mapping's start time without
#: its unit (and no Task Type), and msprof op's OpBasicInfo.csv (no start time: file order).
MSPROF_SHAPES = {
    "op_summary_0_1.csv": ("Model Name,Model ID,Task ID,Stream ID,Infer ID,Op Name,OP Type,OP State,Task Type,"
                           "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Num,Mix Block Num,"
                           "HF32 Eligible",
                           "m,1,{i},2,0,{name},Csymm,static,{type},{start},{us},0.1,{blocks},{mix},NO"),
    "op_summary_old_0_1.csv": ("Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
                               "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,"
                               "HF32 Eligible",
                               "0,1,{i},2,{name},Csymm,static,{type},{start}\t,{us},0.1,{blocks},{mix},NO"),
    "op_summary_mapping_0_1.csv": ("Op Name,Task ID,OP Type,Stream ID,Task Start Time,Task Duration(us),"
                                   "Task Wait Time(us),Block Num",
                                   "{name},{i},Csymm,2,{start},{us},0.1,{blocks}"),
    "OpBasicInfo.csv": ("Op Name,Op Type,Task Duration(us),Block Dim,Mix Block Dim,Device Id,Pid,Current Freq,"
                        "Rated Freq", "{name},mix,{us},{blocks},{mix},0,77,1650,1650"),
}


def _profile(directory, file: str, header: str | None = None) -> None:
    """Two calls of two kernels (a: 28 blocks + 56 mixed, b: 28 blocks, no mix), written out of start order, plus
    a memcpy task where the file has a Task Type column."""
    head, row = MSPROF_SHAPES[file]
    tasks = [(30.0, "a", 4.0, 28, 56), (10.0, "a", 1.0, 28, 56), (40.0, "b", 8.0, 28, None), (20.0, "b", 2.0, 28,
                                                                                            None)]
    if file == "OpBasicInfo.csv":  # no start time: the file's order is the launch order
        tasks.sort()
    lines = [header or head] + [row.format(i=i, name=n, type="MIX_AIC" if m else "AI_CORE", start=s, us=us,
                                           blocks=b, mix="N/A" if m is None else m)
                                for i, (s, n, us, b, m) in enumerate(tasks)]
    if "Task Type" in (header or head):
        lines.append(row.format(i=9, name="memcpy", type="MEMCPY_ASYNC", start=50.0, us=9.0, blocks=0, mix="N/A"))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / file).write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("file", list(MSPROF_SHAPES))
def test_msprof_reader_takes_each_header_variant(tmp_path, file):
    from harness.flows import msprof
    _profile(tmp_path, file)
    kernels = msprof.read_kernels(tmp_path)
    assert kernels == [("a", 1.0), ("b", 2.0), ("a", 4.0), ("b", 8.0)]  # start-time order, the memcpy dropped
    assert msprof.per_call_us(kernels, 2, 0) == ([3.0, 12.0], 2)
    mix = [56] if "Mix Block" in MSPROF_SHAPES[file][0] else []  # the header mapping has no mix column
    assert msprof.kernel_blocks(tmp_path) == {"a": {"blocks": [28], "mix_blocks": mix},
                                              "b": {"blocks": [28], "mix_blocks": []}}


def test_msprof_reader_negative_control_an_unknown_start_column_is_file_order(tmp_path):
    # a start-time header none of msprof's variants has: the rows stay in file order, so the per-call sums differ
    # from the start-ordered ones above (the variants are what the reader recognises, nothing looser)
    from harness.flows import msprof
    head = MSPROF_SHAPES["op_summary_0_1.csv"][0].replace("Task Start Time(us)", "Task Begin(us)")
    _profile(tmp_path, "op_summary_0_1.csv", head)
    assert msprof.read_kernels(tmp_path) == [("a", 4.0), ("a", 1.0), ("b", 8.0), ("b", 2.0)]
    head = MSPROF_SHAPES["op_summary_0_1.csv"][0].replace("Block Num", "Blocks").replace("Mix Block Num", "Mix")
    _profile(tmp_path, "op_summary_0_1.csv", head)
    assert msprof.kernel_blocks(tmp_path)["a"] == {"blocks": [], "mix_blocks": []}
    _profile(tmp_path, "op_summary_0_1.csv")
    summary = tmp_path / "op_summary_0_1.csv"
    summary.write_text(summary.read_text().replace(",28,56,", ",\u00b2,56,"))  # a digit to str, not to int()
    assert msprof.kernel_blocks(tmp_path)["a"] == {"blocks": [], "mix_blocks": [56]}
