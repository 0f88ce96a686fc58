"""Every device of a host: `--device` lists and ranges, one worker per device, perf rows one per device at a time,
each record naming its device (cpu backend: emulated devices)."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pytest

from harness.run import handle, phase, runner
from harness.model import devices
from harness.tables.load import load_cases
from harness.model.settings import TimingConfig

CASES = Path(__file__).resolve().parents[2] / "cases"


def test_device_lists_ranges_and_all():
    assert devices.ids("3") == [3]
    assert devices.ids("0,2,5") == [0, 2, 5]
    assert devices.ids("0-3,6,2") == [0, 1, 2, 3, 6]
    assert devices.resolve("1-2", "npu") == [1, 2]


@pytest.mark.parametrize("bad", ["x", "3-1", "0,,1", "-1", "1.5"])
def test_bad_device_text_is_one_clear_error(bad):
    with pytest.raises(argparse.ArgumentTypeError, match="device"):
        devices.parse(bad)


def test_all_on_cpu_is_the_configured_emulated_count(monkeypatch):
    monkeypatch.setenv("HARNESS_CPU_DEVICES", "3")
    assert devices.resolve("all", "cpu") == [0, 1, 2]
    for bad in ("0", "\u00b2"):  # "²" passes str.isdigit, not int()
        monkeypatch.setenv("HARNESS_CPU_DEVICES", bad)
        with pytest.raises(ValueError, match="HARNESS_CPU_DEVICES"):
            devices.resolve("all", "cpu")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5")
    assert devices.resolve("all", "cuda") == [0, 1]


class _Watched(handle.Worker):
    """A worker that checks, each time it is handed a row, that no other live worker of its device runs one."""

    live: list[_Watched] = []
    clashes: list[tuple[int, str, str]] = []
    submitted: list[tuple[int, str, float]] = []

    def __init__(self, settings, device=None):
        super().__init__(settings, device)
        self.live.append(self)

    def submit(self, case):
        for other in self.live:
            if other is not self and other.device == self.device and other.case is not None:
                self.clashes.append((self.device, other.case.id, case.id))
        self.submitted.append((self.device, case.id, time.monotonic()))
        super().submit(case)

    def release(self):
        if self in self.live:
            self.live.remove(self)
        super().release()


@pytest.fixture
def watched(monkeypatch):
    _Watched.live, _Watched.clashes, _Watched.submitted = [], [], []
    monkeypatch.setattr(phase, "Worker", _Watched)
    return _Watched


def _sample():
    precision = load_cases([CASES / "csymm_test.csv"], "TC_L0_0001 or TC_L0_0002 or TC_L0_0003 or TC_L0_0004")
    perf = load_cases([CASES / "csymm_test.csv"], "TC_PF_0010 or TC_PF_0011 or TC_PF_0012")
    assert len(precision) == 4 and len(perf) == 3
    return precision + perf


def test_rows_spread_over_devices_and_never_share_one(watched):
    cases = _sample()
    config = TimingConfig(warmup=1, min_samples=4, max_time_s=0.05, warmup_max_time_s=0.01, rounds=2)
    got = []
    runner.run(cases, runner.Settings(devices=[0, 1, 2], timing=config, timeout_s=300), got.append)
    assert sorted(r["case_name"] for r in got) == sorted(c.name for c in cases)
    assert watched.clashes == []
    assert {r["device"] for r in got} <= {0, 1, 2}
    assert len({r["device"] for r in got if not r["is_perf"]}) >= 2, "precision rows all went to one device"
    perf_devices = {r["case_name"]: r["device"] for r in got if r["is_perf"]}
    assert sorted(perf_devices.values()) == [0, 1, 2], "each perf row keeps its own device"
    first_perf = min(t for _, cid, t in watched.submitted if cid.split("::")[1] in perf_devices)
    last_precision = max(t for _, cid, t in watched.submitted if cid.split("::")[1].startswith("TC_L0"))
    assert last_precision < first_perf, "a perf row started beside a precision row"


def test_the_clash_checker_sees_two_workers_on_one_device(watched):
    """Negative control: several workers on a single device (the `-n 2` default there) do share it."""
    cases = _sample()[:4]
    runner.run(cases, runner.Settings(devices=[0], workers=2, timeout_s=300), lambda r: None)
    assert watched.clashes, "the checker cannot fail"
