"""The cuda backend and `harness baseline` without a GPU: selection and the one-line unavailable paths, the enum
tables, and the backend's plumbing against a stub CuPy built here (host memory stands in for device memory, so
copies really move bytes). What only a real NVIDIA device exercises: cuBLAS results, CUDA event times, memGetInfo
figures and the describe() values.
"""
from __future__ import annotations

import argparse
import ctypes
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import golden
import harness.perf
from harness.tables.load import load_cases
from harness.model import abi
from harness.model import operators as ops
from harness.run import runner
from harness.backends import BackendUnavailable, cuda, open_backend
from harness.commands import baseline
from harness.ops import csymm
from harness.model.settings import TimingConfig

STREAM_PTR = 0x5100
HANDLE = 0xC0B1A5


class FakeCupy:
    """Just the CuPy surface the backend uses, logging every device-facing call in order."""

    def __init__(self, devices: int | Exception = 1):
        self.log: list[tuple] = []
        self.free = 1 << 34
        self.pool_total = 0
        self.elapsed_ms = 2.5
        self.current_stream = None
        self.csymm_status = 0
        self.compute = False  # True: csymm really computes on the stub's memory (runs whose rows are judged)
        log, fake = self.log, self

        class Stream:
            def __init__(self, non_blocking=False, ptr=STREAM_PTR):
                self.ptr, self.non_blocking = ptr, non_blocking

            def use(self):
                fake.current_stream = self
                log.append(("stream.use", self.ptr))

            def synchronize(self):
                log.append(("stream.sync", self.ptr))

        Stream.null = Stream(ptr=0)

        class Event:
            def record(self, stream=None):
                log.append(("event.record", id(self), stream.ptr))

            def synchronize(self):
                log.append(("event.sync", id(self)))

        class Memory:
            def __init__(self, nbytes):
                self.host = np.zeros(nbytes, np.uint8)
                self.ptr = self.host.ctypes.data

        class Device:
            def __init__(self, index):
                self.index = index

            def use(self):
                log.append(("device.use", self.index))

        def get_device_count():
            if isinstance(devices, Exception):
                raise devices
            return devices

        def memcpy_async(dst, src, size, kind, stream):
            log.append(("memcpyAsync", kind, size, stream))
            ctypes.memmove(dst, src, size)

        def elapsed(start, stop):
            log.append(("elapsed", id(start), id(stop)))
            return fake.elapsed_ms

        runtime = SimpleNamespace(
            memcpyHostToDevice=1, memcpyDeviceToHost=2, getDeviceCount=get_device_count,
            memcpyAsync=memcpy_async, memGetInfo=lambda: (fake.free, 1 << 35),
            getDeviceProperties=lambda d: {"name": b"Fake H200", "major": 9, "minor": 0, "totalGlobalMem": 1 << 35},
            driverGetVersion=lambda: 12080, runtimeGetVersion=lambda: 12060)
        self.cupy = SimpleNamespace(
            __version__="13.9.9", get_default_memory_pool=lambda: SimpleNamespace(total_bytes=lambda: fake.pool_total),
            cuda=SimpleNamespace(runtime=runtime, Stream=Stream, Event=Event, Device=Device, alloc=Memory,
                                 get_elapsed_time=elapsed))

        class CUBLASError(RuntimeError):
            def __init__(self, status):
                super().__init__(f"CUBLAS status {status}")
                self.status = status

        def check_status(status):
            if status != 0:
                raise CUBLASError(status)

        self.cublas = SimpleNamespace(
            CUBLASError=CUBLASError, check_status=check_status, create=lambda: HANDLE,
            destroy=lambda h: log.append(("destroy", h)), getVersion=lambda h: 120803,
            setStream=lambda h, s: log.append(("setStream", h, s)),
            setPointerMode=lambda h, m: log.append(("setPointerMode", h, m)),
            sgemmStridedBatched=lambda *a: log.append(("sgemmStridedBatched", *a)))

        def cublas_csymm_v2(*args):
            log.append(("cublasCsymm_v2", *args))
            if fake.csymm_status == 0 and fake.compute:
                _csymm_in_place(*args)
            return fake.csymm_status

        self.cdll = SimpleNamespace(cublasCsymm_v2=cublas_csymm_v2, _name="/fake/libcublas.so.12")

    def calls(self, name: str) -> list[tuple]:
        return [entry for entry in self.log if entry[0] == name]


def _csymm_in_place(handle, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc) -> None:
    """cublasCsymm on the stub's host-backed "device" pointers, through the golden (complex64 column-major)."""
    def at(ptr: int, count: int) -> np.ndarray:
        return np.ctypeslib.as_array((ctypes.c_float * (2 * count)).from_address(ptr)).view(np.complex64)
    left = side == cuda.SIDE[abi.SIDE_LEFT]
    ka = m if left else n
    out = golden.cblas.csymm(abi.SIDE_LEFT if left else abi.SIDE_RIGHT,
                             abi.UPPER if uplo == cuda.FILL[abi.UPPER] else abi.LOWER, m, n, at(alpha, 1)[0],
                             at(a, lda * ka), lda, at(b, ldb * n), ldb, at(beta, 1)[0], at(c, ldc * n), ldc)
    at(c, ldc * n)[:] = out


@pytest.fixture
def fake(monkeypatch) -> FakeCupy:
    stub = FakeCupy()
    install(monkeypatch, stub)
    return stub


def install(monkeypatch, stub: FakeCupy) -> None:
    for name in ("cupy_backends", "cupy_backends.cuda", "cupy_backends.cuda.libs"):
        monkeypatch.setitem(sys.modules, name, SimpleNamespace())
    monkeypatch.setitem(sys.modules, "cupy", stub.cupy)
    monkeypatch.setitem(sys.modules, "cupy_backends.cuda.libs.cublas", stub.cublas)
    monkeypatch.setattr(cuda, "_load_cublas_cdll", lambda: stub.cdll)


def without_cupy(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` fail even where CuPy is installed


# --- selection and the unavailable paths -------------------------------------------------------------------------

def test_no_cupy_is_one_exact_line(monkeypatch):
    without_cupy(monkeypatch)
    with pytest.raises(BackendUnavailable) as err:
        open_backend("cuda")
    assert str(err.value) == "cuda backend: CuPy is not installed (pip install '.[cuda]')"


def test_broken_cupy_import_says_so_in_one_line(monkeypatch):
    class Refuse:
        def find_spec(self, name, path=None, target=None):
            if name == "cupy":
                raise ImportError("libcublas.so.12: cannot open shared object file\nCuPy diagnostics follow")
            return None

    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Refuse(), *sys.meta_path])
    with pytest.raises(BackendUnavailable) as err:
        cuda.open()
    assert str(err.value) == "cuda backend: CuPy failed to import (libcublas.so.12: cannot open shared object file)"


@pytest.mark.parametrize("devices, device, message", [
    (0, 0, "cuda backend: no CUDA device visible (cudaGetDeviceCount returned 0)"),
    (RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected\ntrace"), 0,
     "cuda backend: no CUDA device visible (cudaErrorNoDevice: no CUDA-capable device is detected)"),
    (2, 2, "cuda backend: no CUDA device 2 (2 visible)"),
])
def test_no_device_is_one_exact_line(monkeypatch, devices, device, message):
    install(monkeypatch, FakeCupy(devices))
    with pytest.raises(BackendUnavailable) as err:
        open_backend("cuda", device=device)
    assert str(err.value) == message


def test_selection_returns_the_cublas_backend_and_refuses_unknown_names(fake):
    backend = open_backend("cuda", device=0, operator_lib="ignored")
    assert (backend.name, backend.api, backend.handle) == ("cuda", "cublas", HANDLE)
    assert isinstance(backend, cuda.CudaBackend)
    with pytest.raises(BackendUnavailable, match="unknown backend 'gpu'"):
        open_backend("gpu")


# --- enum translation and host scalars ---------------------------------------------------------------------------

def test_enum_tables_cover_exactly_the_valid_aclblas_values():
    assert cuda.SIDE == {abi.SIDE_LEFT: 0, abi.SIDE_RIGHT: 1}
    assert cuda.FILL == {abi.UPPER: 1, abi.LOWER: 0}
    assert cuda.OP == {abi.OP_N: 0, abi.OP_T: 1, abi.OP_C: 2}
    for table in (cuda.SIDE, cuda.FILL, cuda.OP):
        assert abi.INVALID_ENUM_VALUE not in table and 999 not in table and 0 not in table


@pytest.mark.parametrize("value, dtype", [(complex(1.5, -2.25), np.complex64), (-0.75, np.float32)])
def test_scalar_ptr_points_at_the_value(value, dtype):
    addr, keep = cuda.scalar_ptr(value, dtype)
    assert addr == keep.ctypes.data
    assert np.frombuffer(ctypes.string_at(addr, np.dtype(dtype).itemsize), dtype=dtype)[0] == value


def test_scalar_ptr_refuses_to_drop_an_imaginary_part():
    with pytest.raises(ValueError, match="imaginary"):
        cuda.scalar_ptr(complex(1, 2), np.float32)


# --- plumbing against the stub -----------------------------------------------------------------------------------

def test_open_binds_handle_to_its_current_stream_in_host_pointer_mode(fake):
    backend = cuda.open(device=0)
    assert ("device.use", 0) in fake.log
    assert fake.current_stream.ptr == STREAM_PTR and not fake.current_stream.non_blocking
    assert fake.calls("setStream") == [("setStream", HANDLE, STREAM_PTR)]
    assert fake.calls("setPointerMode") == [("setPointerMode", HANDLE, cuda.CUBLAS_POINTER_MODE_HOST)]
    assert backend.lib.sgemmStridedBatched is fake.cublas.sgemmStridedBatched  # CuPy's own, passed through


def test_upload_download_round_trip_on_the_backend_stream(fake):
    backend = cuda.open()
    data = np.arange(300, dtype=np.uint8)
    addr = backend.alloc(data.nbytes)
    fake.log.clear()
    backend.upload(addr, data)
    assert fake.log == [("memcpyAsync", 1, 300, STREAM_PTR), ("stream.sync", STREAM_PTR)]
    fake.log.clear()
    back = backend.download(addr + 100, 200)
    assert fake.log == [("memcpyAsync", 2, 200, STREAM_PTR), ("stream.sync", STREAM_PTR)]
    assert np.array_equal(back, data[100:])


def test_copies_outside_a_buffer_are_refused_before_any_copy(fake):
    backend = cuda.open()
    addr = backend.alloc(64)
    fake.log.clear()
    with pytest.raises(ValueError, match="not inside a buffer"):
        backend.upload(addr, np.zeros(65, np.uint8))
    with pytest.raises(ValueError, match="not inside a buffer"):
        backend.download(addr + 8, 64)
    backend.free(addr)
    with pytest.raises(ValueError):
        backend.download(addr, 1)
    assert fake.calls("memcpyAsync") == []


def test_empty_buffers_get_distinct_non_null_addresses(fake):
    backend = cuda.open()
    first, second = backend.alloc(0), backend.alloc(0)
    assert first and second and first != second
    backend.free(first)
    with pytest.raises(KeyError):
        backend.free(first)


def test_timer_brackets_on_the_stream_and_waits_for_stop(fake):
    backend = cuda.open()
    timer = backend.timer()
    fake.log.clear()
    timer.start()
    timer.stop()
    assert timer.elapsed_s() == pytest.approx(2.5e-3)
    (_, start_id, on1), (_, stop_id, on2) = fake.calls("event.record")
    assert (on1, on2) == (STREAM_PTR, STREAM_PTR) and start_id != stop_id
    assert fake.log[2:] == [("event.sync", stop_id), ("elapsed", start_id, stop_id)]


def test_native_call_rebinds_the_stream_then_calls_cublas_and_raises_on_bad_status(fake):
    backend = cuda.open()
    fake.log.clear()
    argtypes = [ctypes.c_void_p] * 13
    backend.lib.native("cublasCsymm_v2", argtypes, HANDLE, 0, 1, 3, 4, 0xA, 0x1000, 3, 0x2000, 3, 0xB, 0x3000, 3)
    assert fake.log == [("setStream", HANDLE, STREAM_PTR),
                        ("cublasCsymm_v2", HANDLE, 0, 1, 3, 4, 0xA, 0x1000, 3, 0x2000, 3, 0xB, 0x3000, 3)]
    assert len(fake.cdll.cublasCsymm_v2.argtypes) == 13
    fake.csymm_status = 7  # CUBLAS_STATUS_INVALID_VALUE
    with pytest.raises(fake.cublas.CUBLASError) as err:
        backend.lib.native("cublasCsymm_v2", argtypes, HANDLE, 0, 1, 3, 4, 0xA, 0x1000, 3, 0x2000, 3, 0xB, 0x3000, 3)
    assert err.value.status == 7


def test_operator_code_reaches_cublas_with_translated_enums(fake):
    backend = cuda.open()
    args = csymm.Args(side=abi.SIDE_RIGHT, uplo=abi.LOWER, m=2, n=3, alpha=1 + 0j, beta=0j, a_fill="", b_fill="",
                      c_fill="", lda=3, ldb=2, ldc=2)
    ptrs = {"A": 0x1000, "B": 0x2000, "C": 0x3000}
    assert ops.call(csymm, backend, args, ptrs, backend.handle) == abi.Status.SUCCESS
    (_, handle, side, uplo, m, n, *_rest), = fake.calls("cublasCsymm_v2")
    assert (handle, side, uplo, m, n) == (HANDLE, cuda.CUBLAS_SIDE_RIGHT, cuda.CUBLAS_FILL_MODE_LOWER, 2, 3)
    bad = csymm.Args(**{**vars(args), "side": 999})
    assert ops.call(csymm, backend, bad, ptrs, backend.handle) == abi.Status.INVALID_VALUE
    assert len(fake.calls("cublasCsymm_v2")) == 1


def test_peak_bytes_count_buffers_and_memory_taken_outside_the_pool(fake):
    backend = cuda.open()
    a = backend.alloc(1000)
    assert backend.memory() == {"workspace_bytes": None, "peak_bytes": 1000}
    fake.free -= 4096 + 8192  # 4 KiB taken by cuBLAS itself, 8 KiB by the pool growing for our buffers
    fake.pool_total += 8192
    backend.synchronize()
    backend.free(a)
    assert backend.memory()["peak_bytes"] == 1000 + 4096
    backend.reset_peaks()
    assert backend.memory()["peak_bytes"] == 0


def test_describe_formats_versions(fake):
    info = cuda.open().describe()
    assert info["device"] == "Fake H200" and info["compute_capability"] == "9.0"
    assert (info["driver_cuda_version"], info["cuda_runtime_version"]) == ("12.8", "12.6")
    assert info["cublas_version"] == "12.8.3" and info["cupy_version"] == "13.9.9"
    assert info["library"] == "/fake/libcublas.so.12"


def test_close_destroys_the_handle_once_and_restores_the_null_stream(fake):
    backend = cuda.open()
    backend.close()
    backend.close()
    assert fake.calls("destroy") == [("destroy", HANDLE)]
    assert fake.current_stream.ptr == 0


def test_loaded_cublas_path_ignores_cublaslt(monkeypatch, tmp_path):
    maps = tmp_path / "maps"
    maps.write_text("7f00-7f01 r-xp 0 08:01 1 /usr/lib/libcublasLt.so.12\n"
                    "7f02-7f03 r-xp 0 08:01 2 /opt/cuda/lib64/libcublas.so.12.8.3.14\n")
    real_path = cuda.Path
    monkeypatch.setattr(cuda, "Path", lambda p: real_path(maps) if p == "/proc/self/maps" else real_path(p))
    assert cuda._loaded_cublas_path() == "/opt/cuda/lib64/libcublas.so.12.8.3.14"


# --- harness baseline --------------------------------------------------------------------------------------------

def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    baseline.add_parser(parser.add_subparsers())
    return parser.parse_args(["baseline", *argv])


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "csymm_test.csv"
    path.write_text("case_name\n")
    return path


def test_baseline_defaults_to_cuda_and_exits_3_with_one_line_without_cupy(table, capsys):
    """The backend is probed in a fresh interpreter (an isolated worker), so only a machine without CuPy shows
    this path; the stub of the other tests cannot reach it."""
    try:
        import cupy  # noqa: F401
        pytest.skip("requires a machine without CuPy")
    except ImportError:
        pass
    table.write_text(HEADER + PERF_ROW)
    args = parse([str(table)])
    assert args.backend == "cuda"
    assert args.func(args) == 3
    assert capsys.readouterr().err == "cuda backend: CuPy is not installed (pip install '.[cuda]')\n"


def test_baseline_exits_3_for_a_missing_table(tmp_path, capsys):
    args = parse([str(tmp_path / "nope.csv")])
    assert args.func(args) == 3
    assert "no such case table" in capsys.readouterr().err


INFO = {"device": "Fake H200", "driver": "570.1", "driver_cuda_version": "12.8", "cuda_runtime_version": "12.6",
        "cublas_version": "12.8.3"}


def perf_case(name: str, m: int, line: int):
    args = csymm.Args(side=abi.SIDE_LEFT, uplo=abi.UPPER, m=m, n=m, alpha=1 + 0j, beta=0j, a_fill="", b_fill="",
                      c_fill="", lda=m, ldb=m, ldc=m)
    return SimpleNamespace(name=name, op="csymm", is_perf=name.startswith("TC_PF_"), args=args, table="t.csv",
                           line=line, description="")


@pytest.fixture
def measured(monkeypatch, tmp_path):
    """baseline's collaborators replaced: the runner's probe and isolated run (each row's record canned), three
    cases, a capturing writer. Records arrive out of table order, as parallel workers may send them. The run's
    session (history, reports) goes to the default paths under tmp_path."""
    from harness.model.record import new_record

    monkeypatch.chdir(tmp_path)
    cases = [perf_case("TC_L0_001", 8, 2), perf_case("TC_PF_001", 256, 3), perf_case("TC_PF_002", 1024, 4)]
    outcome = {"TC_PF_001": ("PASS", 50, 18.75), "TC_PF_002": ("PASS", 60, 250.0)}
    written = {}
    timed = []

    def run(cases, settings, on_record):
        timed.extend((case.name, settings) for case in cases)
        for case in reversed(cases):
            verdict, n, mean = outcome[case.name]
            rec = new_record(case.name, case.op, case.table, case.line, 0, case.is_perf)
            on_record({**rec, "verdict": verdict,
                       "reason": "status ACLBLAS_STATUS_INVALID_VALUE" if verdict != "PASS" else "",
                       "timing": {"n": n, "mean_us": mean} if verdict == "PASS" else None})

    monkeypatch.setattr(runner, "check_backend", lambda settings: INFO)
    monkeypatch.setattr(runner, "run", run)
    monkeypatch.setattr("harness.tables.load.load_cases", lambda paths, select: cases)
    writer = SimpleNamespace(write_gpu_baseline=lambda path, rows: written.update(path=path, rows=rows))
    monkeypatch.setitem(sys.modules, "harness.perf.baselines", writer)
    monkeypatch.setattr(harness.perf, "baselines", writer, raising=False)
    return SimpleNamespace(outcome=outcome, written=written, timed=timed)


def test_baseline_times_only_perf_rows_and_writes_the_table(measured, table):
    args = parse([str(table), "--warmup", "3"])
    assert args.func(args) == 0
    assert [name for name, _ in measured.timed] == ["TC_PF_001", "TC_PF_002"]
    settings = measured.timed[0][1]
    assert settings.backend == "cuda" and settings.timing.mode == "sync" and settings.timing.warmup == 3
    assert measured.written["path"] == table.parent / "baselines" / "csymm_gpu_baseline.csv"
    first = measured.written["rows"][0]
    assert first == {"case_name": "TC_PF_001", "side": abi.SIDE_LEFT, "uplo": abi.UPPER, "m": 256, "n": 256,
                     "gpu_ms": 0.01875, "hardware": "Fake H200", "driver": "570.1", "cuda": "12.6",
                     "cublas": "12.8.3", "method": "CUDA events, per-call sync, warm-up 3, >= 50 samples, mean",
                     "date": first["date"]}
    assert measured.written["rows"][1]["gpu_ms"] == 0.25


def test_baseline_leaves_out_failed_and_short_rows_and_exits_1(measured, table, tmp_path, capsys):
    measured.outcome["TC_PF_001"] = ("FAIL", 0, 0.0)
    measured.outcome["TC_PF_002"] = ("PASS", 12, 250.0)
    args = parse([str(table), "--out", str(tmp_path / "out.csv")])
    assert args.func(args) == 1
    err = capsys.readouterr().err
    assert "[FAIL] TC_PF_001: status ACLBLAS_STATUS_INVALID_VALUE" in err and "[SHORT] TC_PF_002" in err
    assert measured.written == {}  # nothing timed properly, nothing written


def test_baseline_with_no_perf_row_selected_exits_2(measured, table, monkeypatch):
    monkeypatch.setattr("harness.tables.load.load_cases", lambda paths, select: [perf_case("TC_L0_001", 8, 2)])
    args = parse([str(table)])
    assert args.func(args) == 2
    assert measured.written == {} and measured.timed == []


def test_method_text_names_clock_mode_and_sampling():
    assert baseline.method_text("cuda", TimingConfig(mode="steady", steady_batch=16)) == \
        "CUDA events, back-to-back batches of 16 calls per sync, warm-up 10, >= 50 samples, mean per call"
    assert baseline.method_text("cpu", TimingConfig()).startswith("cpu backend timer, per-call sync")


HEADER = ("case_name,description,side,uplo,m,n,alpha_real,alpha_imag,a_fill,lda,b_fill,ldb,beta_real,beta_imag,"
          "c_fill,ldc,expect_result,mere_threshold,mare_multiplier,random_seed\n")
PERF_ROW = ("TC_PF_001,b,ACLBLAS_SIDE_RIGHT,ACLBLAS_LOWER,64,32,1,0,RANDOM_NORM_5_5,,RANDOM_NORM_5_5,,"
            "0.5,0,RANDOM_NORM_5_5,,ACLBLAS_STATUS_SUCCESS,0.0001220703125,10,1\n")


def test_a_timed_perf_row_through_the_engine_and_the_stub(fake, tmp_path):
    """What a baseline worker does with a perf row on the cuda backend: real table parsing, buffer plan, guard
    checks, operator code and timing loop; only CuPy is a stub, so the time is the stub's 20 us per event pair.
    (In `harness baseline` this runs in an isolated worker, a fresh interpreter the stub cannot reach.)"""
    from harness.run import row_judge

    table = tmp_path / "csymm_test.csv"
    table.write_text(HEADER + PERF_ROW)
    fake.elapsed_ms = 0.02
    fake.compute = True  # perf rows are judged like precision rows: the stub must compute
    backend = cuda.open()
    try:
        (case,) = load_cases([str(table)], None)
        rec = row_judge.run_case(case, backend, timing_config=TimingConfig())
    finally:
        backend.close()
    assert rec["verdict"] == "PASS" and rec["timing"]["mean_us"] == pytest.approx(20.0)
    row = baseline.baseline_row(case, rec["timing"], INFO, "m", "d")
    assert (row["case_name"], row["side"], row["uplo"], row["m"], row["n"]) == ("TC_PF_001", 142, 122, 64, 32)
    assert row["gpu_ms"] == 0.02 and row["cuda"] == "12.6" and row["cublas"] == "12.8.3"
    calls = fake.calls("cublasCsymm_v2")
    assert len(calls) == 1 + 10 + 50 + 1  # checked call, warm-up, samples, re-checked call after timing
    _, handle, side, uplo, m, n, _alpha, _a, lda, _b, ldb, _beta, _c, ldc = calls[0]
    assert (handle, side, uplo, m, n, lda, ldb, ldc) == (HANDLE, 1, 0, 64, 32, 32, 64, 64)
    assert fake.calls("destroy") == [("destroy", HANDLE)]


def test_missing_libcublas_is_one_line_and_releases_the_handle(fake, monkeypatch):
    def missing():
        raise BackendUnavailable("cuda backend: cannot locate the libcublas CuPy uses (needed for cublasCsymm)")

    monkeypatch.setattr(cuda, "_load_cublas_cdll", missing)
    with pytest.raises(BackendUnavailable, match="cannot locate the libcublas"):
        cuda.open()
    assert fake.calls("destroy") == [("destroy", HANDLE)] and fake.current_stream.ptr == 0


def test_ssymm_reaches_cublas_as_the_transposed_column_major_problem(fake):
    """Row-major ssymm (LEFT, UPPER, m x n) is cuBLAS's column-major SYMM with side and uplo flipped, n x m."""
    from harness.ops import ssymm

    fake.cdll.cublasSsymm_v2 = lambda *a: fake.log.append(("cublasSsymm_v2", *a)) or 0
    backend = cuda.open()
    args = ssymm.Args(side=abi.SIDE_LEFT, uplo=abi.UPPER, m=2, n=3, alpha=1.0, beta=0.0, lda=2, ldb=3, ldc=3,
                      a_fill="", b_fill="", c_fill="")
    ptrs = {"A": 0x1000, "B": 0x2000, "C": 0x3000}
    assert ops.call(ssymm, backend, args, ptrs, backend.handle) == abi.Status.SUCCESS
    (_, handle, side, uplo, m, n, _alpha, a, lda, b, ldb, _beta, c, ldc), = fake.calls("cublasSsymm_v2")
    assert (handle, side, uplo, m, n) == (HANDLE, cuda.CUBLAS_SIDE_RIGHT, cuda.CUBLAS_FILL_MODE_LOWER, 3, 2)
    assert (a, lda, b, ldb, c, ldc) == (0x1000, 2, 0x2000, 3, 0x3000, 3)


def test_sgemm_batched_hands_cublas_the_device_pointer_arrays(fake):
    from harness.ops import sgemm_batched

    fake.cublas.sgemmBatched = lambda *a: fake.log.append(("sgemmBatched", *a))
    backend = cuda.open()
    args = sgemm_batched.Args(trans_a=abi.OP_T, trans_b=abi.OP_N, m=2, n=3, k=4, alpha=1.0, beta=0.0, lda=4,
                              ldb=4, ldc=2, batch=5, a_fill="", b_fill="", c_fill="")
    ptrs = {"Aarray": 0x1000, "Barray": 0x2000, "Carray": 0x3000}
    assert ops.call(sgemm_batched, backend, args, ptrs, backend.handle) == abi.Status.SUCCESS
    (_, handle, ta, tb, m, n, k, _alpha, a, lda, b, ldb, _beta, c, ldc, batch), = fake.calls("sgemmBatched")
    assert (handle, ta, tb, m, n, k, batch) == (HANDLE, cuda.CUBLAS_OP_T, cuda.CUBLAS_OP_N, 2, 3, 4, 5)
    assert (a, lda, b, ldb, c, ldc) == (0x1000, 4, 0x2000, 4, 0x3000, 2)
    bad = sgemm_batched.Args(**{**vars(args), "alpha": None})
    assert ops.call(sgemm_batched, backend, bad, ptrs, backend.handle) == abi.Status.INVALID_VALUE
    assert len(fake.calls("sgemmBatched")) == 1
