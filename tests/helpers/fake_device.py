"""The fake Ascend device of the npu backend's tests: tests/native/fake_acl.c (a model of the ACL runtime's
timeline, as libascendcl.so under a fake CANN home) and tests/native/fake_ops.c (an operator library costing
FAKE_OPS_HOST_US of host time per call and enqueuing FAKE_OPS_DEVICE_US of device work in FAKE_OPS_LAUNCHES
kernels, the result computed by the CPU twin)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def build(home: Path, notify: bool = True) -> tuple[Path, Path]:
    """(fake CANN home with lib64/libascendcl.so, the fake operator library linked to it); skips without gcc.
    Each home is its own runtime instance: the model's state (aclFinalize ran) is per loaded library. notify False:
    a runtime without aclrtCreateNotify/aclrtDestroyNotify/aclrtRecordNotify/aclrtWaitAndResetNotify."""
    if shutil.which("gcc") is None:
        pytest.skip("requires gcc")
    lib64 = home / "lib64"
    lib64.mkdir(parents=True, exist_ok=True)
    cc = ["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror"]
    subprocess.run([*cc, *([] if notify else ["-DFAKE_ACL_NO_NOTIFY"]), "-o", str(lib64 / "libascendcl.so"),
                    str(ROOT / "tests/native/fake_acl.c")], check=True)
    ops = home / "libfake_ops.so"
    subprocess.run([*cc, "-o", str(ops), str(ROOT / "tests/native/fake_ops.c"), "-ldl"], check=True)
    return home, ops


def use(monkeypatch, home: Path, twin: str, host_us: float = 0, device_us: float = 0, launches: int = 1,
        clock: str = "real") -> Path:
    """Point the npu backend at the fake runtime in `home` with an operator of the given costs, on the host's
    clock or (`virtual`) the model's own, which moves only by modelled costs; returns the violations file the
    model writes (created empty)."""
    violations = home / "violations.txt"
    violations.write_text("")
    for name, value in {"ASCEND_HOME_PATH": home, "FAKE_OPS_COMPUTE": twin, "FAKE_OPS_HOST_US": host_us,
                        "FAKE_OPS_DEVICE_US": device_us, "FAKE_OPS_LAUNCHES": launches,
                        "FAKE_ACL_CLOCK": clock, "FAKE_ACL_VIOLATIONS": violations,
                        "FAKE_ACL_TASK_LOG": home / "tasks.csv"}.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    return violations


def twin() -> str:
    """The CPU twin, which computes the fake operator's results; skips where it cannot be built."""
    from harness.backends.build import BuildError, build_twin
    try:
        return str(build_twin())
    except BuildError as exc:
        pytest.skip(f"cannot build the CPU twin: {exc}")


def runtime_path() -> Path:
    """The fake runtime the npu backend loads now (ctypes.CDLL of it is the same instance, for its model-only
    queries fakeAclFinalized and fakeAclDeviceSet)."""
    return Path(os.environ["ASCEND_HOME_PATH"]) / "lib64" / "libascendcl.so"


def msprof_on_path(monkeypatch, bin_dir: Path) -> None:
    """tests/helpers/fake_msprof.py as `msprof` on PATH."""
    import sys
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "msprof"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ROOT / "tests/helpers/fake_msprof.py"}" "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
