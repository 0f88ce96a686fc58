"""Many hosts on Ray: a real local Ray cluster (a head without devices plus two worker nodes standing in for two
hosts, each with 2 emulated devices, all on this machine), shared by this module's tests (Ray takes ~10-20 s to start).
The cluster run's verdicts equal a single-host run's row for row; a hostile operator still costs only its own row
on a Ray worker (rows run in the harness's isolated worker there); killing a worker node mid-run loses no finished
row, and --retries re-runs its in-flight rows on the other node."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tables import csymm_row, write_csymm_table

ray = pytest.importorskip("ray", reason="requires Ray (pip install '.[cluster]')")
ROOT = Path(__file__).resolve().parents[2]
TABLES = [str(ROOT / "cases" / "csymm_test.csv"), str(ROOT / "cases" / "sgemm_strided_batched_test.csv")]
SAMPLE = " or ".join(f"TC_L0_000{i}" for i in range(1, 4)) + " or TC_PF_0010"
FAST = ["--rounds", "2", "--min-samples", "4", "--max-time", "0.05"]
#: With `pytest -n 2 --dist loadgroup` (.ci/run) every test of this module runs on one xdist worker: one cluster.
pytestmark = pytest.mark.xdist_group("ray_cluster")
NODE = {"num_cpus": 2, "resources": {"NPU": 2}, "object_store_memory": 80 * 2**20}
#: The GCS declares a killed node dead after ~2 s instead of Ray's default ~15-20 s (a 5 s first delay, then five
#: missed 3 s health checks): what the harness does then is under test, not how long Ray takes to notice (on a loaded
#: machine the default made one node-kill test take 119 s, against 30 s idle). A check still fails only when refused or
#: after Ray's 10 s timeout, so a live node on a loaded machine is not declared dead.
FAST_NODE_DEATH = {"health_check_initial_delay_ms": 1000, "health_check_period_ms": 500,
                   "health_check_failure_threshold": 3}


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "object_store_memory": 80 * 2**20,
                                                      "_system_config": FAST_NODE_DEATH})
    nodes = [c.add_node(**NODE) for _ in range(2)]
    c.wait_for_nodes()
    c.workers = nodes
    yield c
    c.shutdown()


def _harness(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", *argv], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def _report(out: Path) -> dict:
    [path] = out.glob("*/report.json")
    return json.loads(path.read_text())


def _verdicts(report: dict) -> dict:
    return {(Path(r["table"]).name, r["line"]): r["verdict"] for r in report["cases"]}


def test_cluster_run_equals_a_single_host_run_row_for_row(cluster, tmp_path):
    local = _harness("run", *TABLES, "-k", SAMPLE, *FAST, "--device", "0-1", "--report-dir", str(tmp_path / "local"),
                     "--history", str(tmp_path / "h.sqlite"))
    assert local.returncode == 0, local.stderr
    remote = _harness("run", *TABLES, "-k", SAMPLE, *FAST, "--cluster", cluster.address,
                      "--report-dir", str(tmp_path / "ray"), "--history", str(tmp_path / "h.sqlite"))
    assert remote.returncode == 0, remote.stderr
    single, spread = _report(tmp_path / "local"), _report(tmp_path / "ray")
    assert len(single["cases"]) == 8 and _verdicts(spread) == _verdicts(single)
    assert [c["line"] for c in spread["cases"]] == [c["line"] for c in single["cases"]]
    assert len({c["host"] for c in spread["cases"]}) == 2, "the rows did not spread over both hosts"
    assert not [c["host_nice"] for c in spread["cases"] if "host_nice" in c], "a row ran at Ray's low priority"
    assert {c["device"] for c in spread["cases"]} <= {0, 1}
    assert all("host" not in c for c in single["cases"])
    runs = json.loads(_harness("runs", "--history", str(tmp_path / "h.sqlite"), "--json").stdout)
    assert [r["summary"]["total"] for r in runs] == [8, 8], "one history run per harness run"


def test_a_hostile_operator_costs_only_its_row_on_a_ray_worker(cluster, tmp_path, hostile_proc_lib):
    """Crashes, a SIGKILL and a left-behind child on Ray workers: the same verdicts as locally
    (tests/isolation/test_hostile), the good rows after them pass, and the Ray workers survive to run them."""
    faults = {108: ("CRASH", "SIGABRT"), 111: ("CRASH", "SIGKILL"), 112: ("CRASH", "exit code 0"),
              109: ("FAIL", "left 1 process(es) running")}
    rows = [csymm_row("TC_L0_good0", 4, 3)]
    for m in faults:
        rows += [csymm_row(f"TC_L0_fault{m}", m, 2), csymm_row(f"TC_L0_good{m}", 5, 3)]
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    # --timeout bounds a hang, it is not under test: a row's limit includes its worker's start, which on a fresh Ray
    # worker at load ~7 took over 30 s once (the SIGABRT row, the first on its node, read TIMEOUT)
    done = _harness("run", str(table), "--operator-lib", str(hostile_proc_lib), "--timeout", "180",
                    "--cluster", cluster.address, "--report-dir", str(tmp_path / "r"),
                    "--history", str(tmp_path / "h.sqlite"))
    assert done.returncode == 1, done.stdout + done.stderr
    cases = {c["case_name"]: c for c in _report(tmp_path / "r")["cases"]}
    for m, (verdict, words) in faults.items():
        assert cases[f"TC_L0_fault{m}"]["verdict"] == verdict and words in cases[f"TC_L0_fault{m}"]["reason"]
        assert cases[f"TC_L0_good{m}"]["verdict"] == "PASS"
    assert "lost" not in done.stderr, "a fault took a Ray worker down with it"


def _finished(out: Path) -> dict:
    lines = [json.loads(line) for p in out.glob("*/results.jsonl") for line in p.read_text().splitlines()]
    return {(r["case_name"], Path(r["table"]).name): r for r in lines}


def _kill_host(cluster, node) -> None:
    """A host's death: every process under its raylet (the Ray workers running rows, and the rows' own workers) is
    killed at once, then the node is removed. Killing the raylet alone left a Ray worker whose row was nearly done to
    hand its result to the driver, and no row was lost (a loaded CI replica)."""
    from ray._private import ray_constants

    from harness.run import proctree

    proctree.kill_descendants(node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid)
    cluster.remove_node(node, allow_graceful=False)


@pytest.mark.parametrize("retries", [1, 0])
def test_killing_a_worker_node_mid_run_loses_no_finished_row(cluster, tmp_path, retries):
    """Perf rows of 0.1-1 s each keep both nodes busy; one node is killed once a few rows finished. Every row that was
    in results.jsonl before the kill is in the report unchanged and the run ends as one run; the dead node's
    in-flight rows are re-run on the other node (--retries 1) or recorded as ERROR naming the lost host."""
    select = " or ".join(f"TC_PF_00{i}" for i in range(10, 16))
    out = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", *TABLES, "-k", select, "--rounds", "1",
                             "--min-samples", "1000", "--max-time", "1.0", "--retries", str(retries),
                             "--cluster", cluster.address, "--report-dir", str(out),
                             "--history", str(tmp_path / "h.sqlite")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while len(_finished(out)) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    before = _finished(out)
    assert 3 <= len(before) < 12, f"{len(before)} rows finished before the kill: not mid-run {proc.communicate()}"
    # a node that has finished a row, so that it has the next in flight (beside a busy loop with three xdist
    # workers, Ray once gave the first rows to one node only and the other, killed, had none)
    busy = {rec["host"] for rec in before.values()}
    victim = next(node for node in cluster.workers if _host_of(node) in busy)
    cluster.workers.remove(victim)
    _kill_host(cluster, victim)
    stdout, stderr = proc.communicate(timeout=600)
    cluster.workers.append(cluster.add_node(**NODE))  # the next test finds two hosts again
    cluster.wait_for_nodes()
    report = _report(out)
    after = {(c["case_name"], Path(c["table"]).name): c for c in report["cases"]}
    assert len(after) == 12, "a row went missing"
    for key, rec in before.items():
        assert after[key]["verdict"] == rec["verdict"] and after[key]["host"] == rec["host"]
    if retries:
        assert proc.returncode == 0 and all(c["verdict"] == "PASS" for c in after.values()), stdout + stderr
        rerun = [c for c in after.values() if c.get("attempts") == 2]
        assert rerun, "no row was in flight on the killed node"
        assert stderr.count("re-running it elsewhere") == len(rerun)
        assert all(c["host"] != _host_of(victim) for c in rerun)
    else:
        lost = [c for c in after.values() if c["verdict"] != "PASS"]
        assert proc.returncode == 1 and lost, stdout + stderr
        assert all(c["verdict"] == "ERROR" and "was lost" in c["reason"] for c in lost)
        assert report["summary"]["errors"] == len(lost)


def _mapping(lib: Path) -> list[int]:
    """Live processes with `lib` mapped: where a Ray host runs the operator (its isolated worker and what that forked;
    Ray's own processes never load it, and they do not carry the harness's environment)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if str(lib) in Path(f"/proc/{entry}/maps").read_text():
                found.append(int(entry))
        except OSError:
            pass
    return found


def _nice(pid: int) -> int | None:
    try:
        return os.getpriority(os.PRIO_PROCESS, pid)
    except OSError:
        return None  # gone while looked at


def _describe(pid: int) -> str:
    try:
        status = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                      if ":\t" in line)
        parent = Path(f"/proc/{status['PPid'].strip()}/cmdline").read_bytes().replace(b"\0", b" ")[:80]
        return f"{status['Name'].strip()} state {status['State'].strip()}, parent {status['PPid'].strip()} {parent!r}"
    except (OSError, KeyError):
        return "gone while looked at"


def test_ctrl_c_on_a_cluster_run_cancels_its_rows_and_reports_what_finished(cluster, tmp_path, hostile_proc_lib):
    """Six good rows and one that forks a busy child and spins (m=113) on a Ray host: SIGINT once the good rows are
    in results.jsonl ends the run with 130, the spinning row and its child gone from the host (Ray cancels the task,
    the isolated worker follows through its lifeline), the report and history run marked interrupted."""
    good = [csymm_row(f"TC_L0_{i}", 3 + i % 4, 2) for i in range(6)]
    table = write_csymm_table(tmp_path / "csymm_test.csv", [*good, csymm_row("TC_L0_spin", 113, 2)])
    out = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", str(table), "--operator-lib",
                             str(hostile_proc_lib), "--timeout", "600", "--cluster", cluster.address,
                             "--report-dir", str(out), "--history", str(tmp_path / "h.sqlite")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while (len(_finished(out)) < 6 or len(_mapping(hostile_proc_lib)) < 2) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    assert len(_finished(out)) == 6 and len(_mapping(hostile_proc_lib)) >= 2, "the spinning row never started"
    # Ray runs its workers at nice 15; the row (and what it forked) runs at harness run's priority (cluster.py)
    assert {_nice(pid) for pid in _mapping(hostile_proc_lib)} <= {os.getpriority(os.PRIO_PROCESS, 0), None}
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stdout + stderr
    assert "Traceback" not in stdout + stderr and "interrupted" in stderr, stderr
    end = time.monotonic() + 30
    while _mapping(hostile_proc_lib) and time.monotonic() < end:
        time.sleep(0.1)
    left = {pid: _describe(pid) for pid in _mapping(hostile_proc_lib)}
    assert left == {}, f"the spinning row (or its child) outlived the interrupted run: {left}"
    report = _report(out)
    assert report["interrupted"] is True and report["summary"]["total"] == 6
    assert {c["case_name"] for c in report["cases"]} == {f"TC_L0_{i}" for i in range(6)}
    runs = json.loads(_harness("runs", "--history", str(tmp_path / "h.sqlite"), "--json").stdout)
    assert len(runs) == 1 and runs[0]["summary"] == {**report["summary"], "interrupted": True}


def _host_of(node) -> str:
    return f"{os.uname().nodename}/{node.node_id[:8]}"


@pytest.mark.parametrize("address", ["127.0.0.1:1", "nohost.invalid:6379"])
def test_an_unreachable_cluster_is_one_line_and_exit_3(address, tmp_path):
    done = _harness("run", TABLES[0], "-k", "TC_L0_0001", "--cluster", address, "--report-dir", str(tmp_path),
                    timeout=120)
    assert done.returncode == 3 and done.stderr.startswith(f"harness run: --cluster {address}: cannot reach")
    assert len(done.stderr.strip().splitlines()) == 1 and not list(tmp_path.glob("*/report.json"))
