"""The top-level conftest.py: `pytest cases/<table>.csv` works in a checkout whose package is not installed (the
entry point's plugins not loaded), and with the entry point as well the plugin is registered once."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW = "TC_L0_0001"


def _collect(*extra: str, autoload: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    if not autoload:  # what a checkout without `pip install` has: no entry point of this package
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
                           *extra, "cases/ssymm_test.csv", "-k", ROW], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_table_collects_from_a_checkout_without_the_entry_point():
    done = _collect(autoload=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines().count(f"cases/ssymm_test.csv::{ROW}") == 1
    without = _collect("--noconftest", autoload=False)  # negative control: nothing else registers the plugin
    assert without.returncode != 0 and ROW not in without.stdout


def test_with_the_entry_point_too_the_plugin_is_registered_once():
    done = _collect("--trace-config", autoload=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines().count(f"cases/ssymm_test.csv::{ROW}") == 1
    registered = [line for line in done.stdout.splitlines() if "harness/plugin.py" in line]
    assert len(registered) == 1, registered
