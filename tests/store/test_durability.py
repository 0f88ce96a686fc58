"""A run killed with SIGKILL halfway keeps every row it finished: in results.jsonl and in the history database."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from harness.store.history import History
from tables import csymm_row, write_csymm_table


def test_sigkilled_run_keeps_every_finished_row(tmp_path, toy_lib):
    good = [csymm_row(f"TC_L0_{i}", 3 + i, 2) for i in range(6)]
    table = write_csymm_table(tmp_path / "csymm_test.csv", [*good, csymm_row("TC_L0_hang", 17, 2)])
    env = dict(os.environ, TOY_HANG_M="17")
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", str(table), "--operator-lib", str(toy_lib),
                             "-n", "1", "--timeout", "600", "--report-dir", str(tmp_path / "reports"),
                             "--history", str(tmp_path / "h.sqlite")],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        stream = None
        while time.monotonic() < deadline:
            found = list((tmp_path / "reports").glob("*/results.jsonl"))
            if found and len(found[0].read_text().splitlines()) >= len(good):
                stream = found[0]
                break
            time.sleep(0.2)
        assert stream is not None, "the good rows did not finish in time"
        time.sleep(0.5)  # the run now sits in the hanging row
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    lines = [json.loads(line) for line in stream.read_text().splitlines()]
    assert sorted(r["case_name"] for r in lines) == sorted(f"TC_L0_{i}" for i in range(6))
    history = History(tmp_path / "h.sqlite")
    (run_id,) = history.runs()["run_id"].tolist()
    _, records = history.load_run(run_id)
    assert sorted(r["case_name"] for r in records) == sorted(r["case_name"] for r in lines)
    assert all(r["verdict"] == "PASS" for r in records)
