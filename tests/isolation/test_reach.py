"""The worker cannot reach the parent's files (issue 37, class 3): each attack of tests/native/hostile_reach.c is
run on a row between good ones. Under bubblewrap the table and the history are not in the worker's filesystem (chmod
and the POSIX lock find nothing), a SysV segment dies with its IPC namespace; in every sandbox the guard page after C
cannot be made writable (CRASH, not PASS). Without user namespaces (a bwrap that fails, as in such a container) the
run falls back to the in-process layers and says so once. On main (b6fba62) the chmod succeeds, the lock hangs the
run, the segment outlives it and the guard-page write PASSes: each test below fails there."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from conftest import _native_lib
from harness.run import bwrap
from processes import gone, harness, survivors
from tables import csymm_row, write_csymm_table

#: Every run here is bounded: a hang is a failure, not a stuck suite.
RUN_LIMIT_S = 90


@pytest.fixture(scope="session")
def reach_lib(tmp_path_factory) -> Path:
    return _native_lib(tmp_path_factory, "hostile_reach", "-O1")


def _bwrap_usable() -> bool:
    return bool(bwrap.binary()) and not bwrap.probe(bwrap.binary())


needs_bwrap = pytest.mark.skipif(not _bwrap_usable(), reason="requires bubblewrap with user namespaces (bwrap)")


def _run(tmp_path: Path, lib: Path, faults: list[int], prefix: tuple[str, ...] = (),
         **env: str) -> tuple[subprocess.CompletedProcess, dict]:
    """A table of good rows around the `faults` rows, run (under the `prefix` command) to its end within
    RUN_LIMIT_S (killed, and the test failed, past it); the process result and the report."""
    rows = [csymm_row("TC_L0_good0", 4, 3)]
    for m in faults:
        rows += [csymm_row(f"TC_L0_fault{m}", m, 2), csymm_row(f"TC_L0_good{m}", 5, 3)]
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    mark = uuid.uuid4().hex
    args = ["run", str(table), "--operator-lib", str(lib), "--report-dir", "r", "--history", "h.sqlite", "--timeout",
            "10"]
    if prefix:
        proc = subprocess.Popen([*prefix, sys.executable, "-m", "harness.cli", *args], cwd=tmp_path, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "HARNESS_TEST_MARK": mark, **env})
    else:
        proc = harness(args, tmp_path, HARNESS_TEST_MARK=mark, **env)
    try:
        out, err = proc.communicate(timeout=RUN_LIMIT_S)
    except subprocess.TimeoutExpired:
        for pid in survivors(mark):
            os.kill(pid, 9)
        proc.communicate()
        pytest.fail(f"the run did not end within {RUN_LIMIT_S} s")
    assert gone(mark), "a process of the run survived it"
    (report,) = (tmp_path / "r").glob("*/report.json")
    data = json.loads(report.read_text())
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), data


def _cases(report: dict) -> dict[str, dict]:
    return {c["case_name"]: c for c in report["cases"]}


@needs_bwrap
def test_the_worker_cannot_chmod_the_table_or_the_history(tmp_path, reach_lib):
    table, history = tmp_path / "csymm_test.csv", tmp_path / "h.sqlite"
    proc, report = _run(tmp_path, reach_lib, [301], HOSTILE_PATHS=f"{table}:{history}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert stat.S_IMODE(table.stat().st_mode) == 0o644 and stat.S_IMODE(history.stat().st_mode) != 0
    assert report["backend_info"]["isolation"]["sandbox"] == "bwrap"


@needs_bwrap
def test_a_read_lock_on_the_history_cannot_hang_the_run(tmp_path, reach_lib):
    proc, report = _run(tmp_path, reach_lib, [302], HOSTILE_LOCK=str(tmp_path / "h.sqlite"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {c["verdict"] for c in report["cases"]} == {"PASS"}


@needs_bwrap
def test_a_sysv_segment_dies_with_the_worker(tmp_path, reach_lib):
    key = 0x37000000 + int(uuid.uuid4().hex[:6], 16)

    def segments() -> list[str]:
        lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
        return [line for line in lines if int(line.split()[0]) == key]

    try:
        proc, _ = _run(tmp_path, reach_lib, [303], HOSTILE_SHM_KEY=str(key))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert segments() == []
    finally:  # on a harness without an IPC namespace the segment is left: remove it
        for line in segments():
            subprocess.run(["ipcrm", "-m", line.split()[1]], check=False)


@pytest.mark.parametrize("sandbox", ["bwrap", "fallback"])
def test_a_write_past_c_through_an_unprotected_guard_page_is_caught(tmp_path, reach_lib, sandbox):
    if sandbox == "bwrap" and not _bwrap_usable():
        pytest.skip("requires bubblewrap with user namespaces (bwrap)")
    env = {bwrap.OFF_VARIABLE: "1"} if sandbox == "fallback" else {}
    proc, report = _run(tmp_path, reach_lib, [304], **env)
    cases = _cases(report)
    assert cases["TC_L0_fault304"]["verdict"] == "CRASH", cases["TC_L0_fault304"]
    assert "after the end of C (guard page)" in cases["TC_L0_fault304"]["reason"]
    assert cases["TC_L0_good304"]["verdict"] == cases["TC_L0_good0"]["verdict"] == "PASS"
    assert report["backend_info"]["isolation"]["sandbox"] == sandbox
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr


#: A container without user namespaces: the run inside a user namespace of its own whose limit of nested ones is 0
#: (bwrap then fails with ENOSPC, as it fails with EPERM where the container forbids them).
NO_USERNS = ("unshare", "--user", "--map-root-user", "sh", "-c",
             'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"', "sh")


def _container_without_user_namespaces() -> str:
    """Why NO_USERNS cannot be made here ("" when it can)."""
    try:
        probe = subprocess.run([*NO_USERNS, "true"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return probe.stderr.strip()[:200] if probe.returncode else ""


@pytest.mark.parametrize("where", ["failing bwrap", "no user namespaces"])
def test_without_user_namespaces_the_run_falls_back_and_says_so_once(tmp_path, reach_lib, where):
    """Where bwrap cannot create its namespaces (a container without user namespaces, or a bwrap that fails as it
    does there) the run goes on with the in-process layers, said once on the console and in the report."""
    if where == "no user namespaces":
        if why := _container_without_user_namespaces():
            pytest.skip(f"cannot make a user namespace without nested ones here: {why}")
        if not bwrap.binary():
            pytest.skip("requires bubblewrap (bwrap)")
        proc, report = _run(tmp_path, reach_lib, [], prefix=NO_USERNS)
    else:
        failing = tmp_path / "bwrap"
        failing.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
        failing.chmod(0o755)
        proc, report = _run(tmp_path, reach_lib, [], **{bwrap.BINARY_VARIABLE: str(failing)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    isolation = report["backend_info"]["isolation"]
    assert isolation["sandbox"] == "fallback", isolation
    assert "cannot create its namespaces here (bwrap: " in isolation["reason"], isolation
    assert isolation["layers"][0] == "no_new_privs"
    assert proc.stderr.count("workers run without bubblewrap") == 1, proc.stderr
    (markdown,) = (tmp_path / "r").glob("*/report.md")  # and in the report's environment section
    environment = markdown.read_text().split("测试环境", 1)[1]
    (line,) = [x for x in environment.splitlines() if "后端信息.isolation" in x]
    assert "fallback" in line and "cannot create its namespaces here" in line, line


#: Run a command as nobody with the groups cleared (util-linux setpriv).
AS_NOBODY = ("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups")
#: In a mount namespace of its own: each directory given (bind-mounted at the same path) in a view of root's home
#: that anyone may traverse, put over it; then `AS_NOBODY`. For an interpreter and a checkout under /root (a
#: pyenv build on CI: its RUNPATH names /root/..., so it cannot be moved), which nobody could not reach.
_VIEW = ('umask 022; view=$1; shift; while [ "$1" != -- ]; do at="$view/${1#"$HOME"/}"; '
         'mkdir -p "$at" && mount --bind "$1" "$at"; shift; done; shift; mount --rbind "$view" "$HOME" && exec "$@"')


def _as_nobody(view: Path) -> tuple[tuple[str, ...], str]:
    """The command prefix that runs this interpreter and harness as nobody, and why it cannot be made ("" when it
    can): setpriv alone where nobody can read them, else through a view of root's home (`_VIEW`, with unshare)."""
    check = [sys.executable, "-c", "import numpy, scipy, harness"]
    probe = subprocess.run([*AS_NOBODY, *check], capture_output=True, text=True, cwd="/", timeout=60)
    if probe.returncode == 0:
        return AS_NOBODY, ""
    home = os.path.expanduser("~")
    repo = str(Path(__file__).resolve().parents[2])
    inside = sorted({p for p in (sys.base_prefix, sys.prefix, repo) if p.startswith(home + "/")})
    if not inside:
        return (), f"nobody cannot run {sys.executable}: {probe.stderr.strip()[-200:]}"
    view.mkdir()
    view.chmod(0o755)  # every directory of the view is traversable (mkdir -p under umask 022); the rest keep theirs
    prefix = ("unshare", "--mount", "--propagation", "private", "sh", "-c", _VIEW, "sh", str(view), *inside, "--",
              *AS_NOBODY)
    probe = subprocess.run([*prefix, *check], capture_output=True, text=True, cwd="/", timeout=60)
    if probe.returncode != 0:
        return (), f"nobody cannot run {sys.executable} even through a view of {home}: {probe.stderr.strip()[-200:]}"
    return prefix, ""


def test_as_a_non_root_user_the_run_works(tmp_path, reach_lib):
    """The harness run by an unprivileged user (nobody, no groups): bwrap where it can make user namespaces, else
    the fallback, said in the report; nobody's worker cannot chmod the table it was given read access to."""
    if os.geteuid() != 0:
        pytest.skip("the suite itself runs as a non-root user here")
    work = Path(tempfile.mkdtemp(prefix="harness-nobody-"))  # tmp_path's parents are root's alone (0700)
    try:
        work.chmod(0o755)
        prefix, why = _as_nobody(work / "view")
        if why:
            pytest.skip(why)
        run = work / "run"
        run.mkdir(mode=0o777)
        run.chmod(0o777)
        lib = run / reach_lib.name
        shutil.copy(reach_lib, lib)
        lib.chmod(0o755)
        proc, report = _run(run, lib, [301], prefix=prefix, HOSTILE_PATHS=f"{run / 'csymm_test.csv'}")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        users = {(run / name).stat().st_uid for name in ("h.sqlite", "r")}
        assert users == {65534}, users  # the run was nobody's: its history and reports are nobody's
        isolation = report["backend_info"]["isolation"]
        assert isolation["sandbox"] == ("bwrap" if _bwrap_usable() else "fallback"), isolation
        assert stat.S_IMODE((run / "csymm_test.csv").stat().st_mode) != 0, "the worker chmodded the table"
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)