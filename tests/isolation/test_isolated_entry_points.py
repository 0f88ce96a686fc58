"""`harness baseline`, `harness ab` and the pytest plugin load the operator library only in isolated workers, as
`harness run` does (issue 11): a library that kills its process costs the row it ran, never the command or the
pytest session, and a library that cannot even be loaded is a clear failure, never a silent exit 0."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.run import runner
from harness.flows.ab import PairService, run_ab, split_pair
from harness.tables.load import load_table
from harness.store.history import History
from harness.model.settings import TimingConfig
from tables import csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[2]


def mapped_after(code: str) -> set[str]:
    """Run `code` in a fresh interpreter (this test process may have loaded libraries through other tests) and
    return the shared objects that interpreter has mapped at the end: what the harness's own process loaded."""
    script = code + "\nprint('\\n'.join(sorted({l.split()[-1] for l in open('/proc/self/maps') if '.so' in l.split()[-1]})))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def _pytest(where: Path, lib: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", f"--harness-operator-lib={lib}", "-p", "no:cacheprovider", *args]
    return subprocess.run(cmd, cwd=where, capture_output=True, text=True, timeout=300, env={**os.environ, **env})


# --- the pytest plugin -------------------------------------------------------------------------------------------

def test_plugin_charges_a_killed_worker_to_its_item_and_the_session_goes_on(tmp_path, hostile_proc_lib):
    """m=112 calls _exit(0) inside the operator: loaded in pytest's process, it would end the session with exit 0
    and no report; m=111 raises SIGKILL."""
    write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L0_a", 4, 3), csymm_row("TC_L0_exit", 112, 2), csymm_row("TC_L0_b", 5, 2),
        csymm_row("TC_L0_kill", 111, 2), csymm_row("TC_L0_c", 3, 3)])
    result = _pytest(tmp_path, hostile_proc_lib, "csymm_test.csv", "-q")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "2 failed, 3 passed" in result.stdout, result.stdout
    assert "csymm_test.csv:3: CRASH: the operator killed its worker process (exit code 0)" in result.stdout
    assert "csymm_test.csv:5: CRASH: the operator killed its worker process (signal SIGKILL" in result.stdout


def test_plugin_fails_items_of_a_library_that_cannot_load(tmp_path, hostile_proc_lib):
    write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 4, 3), csymm_row("TC_L0_b", 5, 2)])
    result = _pytest(tmp_path, hostile_proc_lib, "csymm_test.csv", "-q", HOSTILE_CTOR="exit0")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "2 failed" in result.stdout
    assert "killed the probe worker while loading the library and creating a handle (exit code 0)" in result.stdout


def test_plugin_times_out_a_hanging_operator(tmp_path, hostile_proc_lib):
    write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_spin", 113, 2), csymm_row("TC_L0_a", 4, 3)])
    result = _pytest(tmp_path, hostile_proc_lib, "csymm_test.csv", "-q", "--harness-timeout=2")
    assert "1 failed, 1 passed" in result.stdout, result.stdout + result.stderr
    assert "TIMEOUT: no result within the per-row limit of 2 s" in result.stdout


def test_the_mapping_check_sees_a_library_loaded_in_process(toy_lib):
    """Negative control of the two checks that use mapped_after: opening the backend here maps the library."""
    libs = mapped_after(f"from harness.backends import open_backend\nopen_backend('cpu', operator_lib={str(toy_lib)!r})")
    assert str(toy_lib) in libs


def test_plugin_never_loads_the_library_into_pytests_process(tmp_path, toy_lib):
    """The plugin's path (runner.run_in_order) in a fresh process that then looks at its own mappings."""
    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 4, 3)])
    libs = mapped_after(f"""
from harness.run import runner
from harness.tables.load import load_table
records = []
runner.run_in_order(load_table({str(table)!r}), runner.Settings(backend_options={{"operator_lib": {str(toy_lib)!r}}}),
                    records.append)
assert [r["verdict"] for r in records] == ["PASS"], records
""")
    assert str(toy_lib) not in libs and any("libc.so" in lib for lib in libs)  # the listing works


class _Finalized:
    """Cyclic garbage whose finalizer records which process ran it (as a sqlite connection's closes its database)."""

    def __init__(self, path: Path):
        self.path, self.cycle = path, self

    def __del__(self):
        with open(self.path, "a") as out:
            out.write(f"{os.getpid()}\n")


def test_a_worker_never_finalizes_the_garbage_of_the_process_it_was_forked_from(tmp_path, toy_lib):
    """The plugin forks workers from pytest's process, which holds what earlier tests left (History connections
    among it): a collection in the worker must not run their finalizers there."""
    cases = load_table(write_csymm_table(tmp_path / "csymm_test.csv",
                                         [csymm_row(f"TC_L0_{i}", 4 + i, 3) for i in range(3)]))
    marks = tmp_path / "finalized"
    gc.collect()
    _Finalized(marks)  # unreachable at once: only a collection of the youngest generation runs its finalizer
    records: list[dict] = []
    runner.run_in_order(cases, runner.Settings(backend_options={"operator_lib": str(toy_lib)}), records.append)
    gc.collect()
    assert [r["verdict"] for r in records] == ["PASS"] * 3, records
    assert marks.read_text().split() == [str(os.getpid())], "finalized in a worker, not (only) in this process"


# --- harness baseline ----------------------------------------------------------------------------------------------

def _baseline(table: Path, lib: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "harness.cli", "baseline", str(table), "--backend", "cpu", "--operator-lib",
           str(lib), "--max-time", "0.05", "--min-samples", "5", "--warmup", "1", "--rounds", "1",
           "--history", str(table.parent / "h.sqlite"), "--report-dir", str(table.parent / "reports"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, **env})


def test_baseline_writes_the_good_rows_and_names_the_crashed_one(tmp_path, hostile_proc_lib):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_PF_0001", 8, 8), csymm_row("TC_PF_0002", 111, 2), csymm_row("TC_PF_0003", 6, 4)])
    result = _baseline(table, hostile_proc_lib)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "[CRASH] TC_PF_0002: the operator killed its worker process (signal SIGKILL" in result.stderr
    assert "Traceback" not in result.stderr
    written = (tmp_path / "baselines" / "csymm_gpu_baseline.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in written[1:]] == ["TC_PF_0001", "TC_PF_0003"]
    assert "cpu backend timer" in written[1]


@pytest.mark.parametrize("fault", ["HOSTILE_CTOR=segv", "HOSTILE_CREATE=hang"])
def test_baseline_with_a_library_that_cannot_load_is_one_line_and_exit_3(tmp_path, hostile_proc_lib, fault):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_PF_0001", 8, 8)])
    name, value = fault.split("=")
    result = _baseline(table, hostile_proc_lib, "--timeout", "5", **{name: value})
    assert result.returncode == 3, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("cpu backend: the operator library") and "creating a handle" in line, line
    assert not (tmp_path / "baselines").exists()


# --- harness ab --------------------------------------------------------------------------------------------------

def _perf_cases(tmp_path: Path, *rows: str) -> list:
    return load_table(write_csymm_table(tmp_path / "csymm_test.csv", list(rows)))


def test_ab_pair_in_one_worker_times_both_sides_and_charges_a_crash_to_both(tmp_path, toy_lib, hostile_proc_lib):
    cases = _perf_cases(tmp_path, csymm_row("TC_PF_0001", 8, 8), csymm_row("TC_PF_0002", 111, 2),
                        csymm_row("TC_PF_0003", 6, 4))
    config = TimingConfig(warmup=1, min_samples=5, max_samples=20, max_time_s=2.0, warmup_max_time_s=0.5)
    got: dict[str, tuple[dict, dict]] = {}
    settings = runner.Settings(service=PairService((str(toy_lib), str(hostile_proc_lib)), config), timeout_s=60)
    runner.run(cases, settings, lambda rec: got.__setitem__(rec["case_name"], split_pair(rec)))
    for name in ("TC_PF_0001", "TC_PF_0003"):
        a, b = got[name]
        assert a["verdict"] == b["verdict"] == "SKIP", (name, a.get("reason"), b.get("reason"))
        assert a["timing"]["n"] >= 5 and b["timing"]["n"] >= 5
    a, b = got["TC_PF_0002"]
    assert a["verdict"] == b["verdict"] == "CRASH" and "SIGKILL" in b["reason"]


def test_split_pair_charges_what_the_worker_saw_to_both_sides():
    side = {"case_name": "x", "verdict": "SKIP", "reason": "timed by harness ab; outputs not checked"}
    a, b = split_pair({"case_name": "x", "verdict": "FAIL", "reason": "the operator changed the umask",
                       "pair": [dict(side), dict(side)]})
    assert a["verdict"] == b["verdict"] == "FAIL" and b["reason"].endswith("; the operator changed the umask")
    a, b = split_pair({"case_name": "x", "verdict": "TIMEOUT", "reason": "no result"})
    assert a == b == {"case_name": "x", "verdict": "TIMEOUT", "reason": "no result"}


def test_ab_end_to_end_on_this_checkout_loads_no_library_here(tmp_path):
    """run_ab on this checkout (HEAD against HEAD), in a fresh process that then looks at its own mappings."""
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True).returncode != 0:
        pytest.skip("requires the project as a git checkout")
    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_PF_0001", 8, 8)])
    libs = mapped_after(f"""
from pathlib import Path
from harness.flows.ab import run_ab
from harness.store.history import History
from harness.model.settings import TimingConfig
config = TimingConfig(warmup=1, min_samples=5, max_samples=20, max_time_s=2.0, warmup_max_time_s=0.5)
history = History({str(tmp_path / "history.db")!r})
a, b = run_ab("HEAD", "HEAD", [{str(table)!r}], None, {{}}, {{}}, config, history, Path({str(ROOT)!r}),
              Path({str(tmp_path / "reports")!r}))
assert a.info.get("device") and [r["verdict"] for r in a.records + b.records] == ["SKIP", "SKIP"]
assert all(r["timing"]["n"] >= 5 for r in a.records + b.records)
runs = history.runs()
assert set(runs["run_id"]) == {{a.run_id, b.run_id}} and runs["finished"].notna().all()
assert all((Path({str(tmp_path / "reports")!r}) / side.run_id / "report.md").is_file() for side in (a, b))
""")
    twin = [lib for lib in libs if lib.endswith("libaclblas_twin.so")]
    assert twin == [], twin
