"""The operator under test as an identity of its own (issue 36): what a run records of the library (sha256, ELF
build-id, symbols) and its source revision, the history's operator columns (with the migration of an older
history), `harness runs` / `history` showing the operator's revision first, and `harness compare` resolving
operator revisions, library paths and ambiguity."""
import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from harness.commands import compare as compare_command
from harness.commands import history as history_command
from harness.commands import runs as runs_command
from harness.store import operator_identity
from harness.store.history import History
from commands import run_command
from perf_records import meta, noisy, rec

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]


def git_repo(path):
    """A tiny git checkout with one commit, tagged v1; returns (path, commit)."""
    path.mkdir(parents=True)
    subprocess.run([*GIT, "-C", str(path), "init", "-q"], check=True)
    (path / "ops.c").write_text("int x;\n")
    subprocess.run([*GIT, "-C", str(path), "add", "ops.c"], check=True)
    subprocess.run([*GIT, "-C", str(path), "commit", "-q", "-m", "one"], check=True)
    subprocess.run([*GIT, "-C", str(path), "tag", "v1"], check=True)
    commit = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    return path, commit


def test_elf_reader_finds_the_build_id_and_only_exported_operator_functions(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("requires gcc")
    src = tmp_path / "lib.c"
    src.write_text("int aclblasCreate(void **h) { return 0; }\n"
                   "__attribute__((visibility(\"hidden\"))) int aclblasHidden(void) { return 1; }\n"
                   "static int aclblasStatic(void) { return 2; }\n"
                   "int aclblasData = 3;\n"
                   "extern int aclblasUndefined(void);\n"
                   "int other(void) { return aclblasStatic() + aclblasUndefined(); }\n")
    lib = tmp_path / "lib.so"
    build_id = "0123456789abcdef0123456789abcdef01234567"
    subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,--build-id=0x{build_id}", "-o", str(lib), str(src)], check=True)
    facts = operator_identity.elf_facts(lib)
    assert facts == {"build_id": build_id, "exported": ["aclblasCreate"], "problem": ""}
    # negative controls: a file that is not ELF, and one cut short inside its section headers
    (tmp_path / "text.so").write_text("not a library")
    assert operator_identity.elf_facts(tmp_path / "text.so")["build_id"] == ""
    cut = tmp_path / "cut.so"
    cut.write_bytes(lib.read_bytes()[:200])
    assert operator_identity.elf_facts(cut)["problem"]


def cli(*argv):
    """The harness CLI in a child process (a run forks workers)."""
    return subprocess.run([sys.executable, "-c", "from harness.cli import main; import sys; sys.exit(main())",
                           *argv], capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # 29 s of a bare pytest -n 2 at load ~20
def test_run_records_the_library_sha256_build_id_and_the_checkout_commit(tmp_path):
    from harness.backends.build import BuildError, build_twin

    try:
        twin = build_twin()
    except BuildError as exc:
        pytest.skip(f"cannot build the CPU twin: {exc}")
    src, commit = git_repo(tmp_path / "opsrc")
    lib = tmp_path / "libops_blas.so"  # outside any checkout: nothing to detect, --operator-src says
    shutil.copy(twin, lib)
    (tmp_path / "csymm_test.csv").write_text(
        "case_name,description,side,uplo,m,n,alpha_real,alpha_imag,a_fill,lda,b_fill,ldb,beta_real,beta_imag,"
        "c_fill,ldc,expect_result,mere_threshold,mare_multiplier,random_seed\n"
        "TC_L0_0001,small,ACLBLAS_SIDE_LEFT,ACLBLAS_UPPER,4,3,1.0,0.0,RANDOM_1_1,,RANDOM_1_1,,0.0,0.0,RANDOM_1_1,,"
        "ACLBLAS_STATUS_SUCCESS,0.0001220703125,10,1\n")
    common = [str(tmp_path / "csymm_test.csv"), "--operator-lib", str(lib), "--report-dir", str(tmp_path / "r"),
              "--history", str(tmp_path / "h.sqlite"), "-n", "1"]
    done = cli("run", *common, "--operator-src", str(src))
    assert done.returncode == 0, done.stderr
    report = json.loads(next((tmp_path / "r").glob("*/report.json")).read_text())
    operator = report["operator"]
    assert operator["sha256"] == hashlib.sha256(lib.read_bytes()).hexdigest()
    if shutil.which("readelf"):
        shown = subprocess.run(["readelf", "-n", str(lib)], capture_output=True, text=True).stdout
        assert f"Build ID: {operator['build_id']}" in shown
    assert len(operator["build_id"]) == 40
    assert operator["revision"]["commit"] == commit and operator["revision"]["dirty"] is False
    assert operator["label"] == "v1" and operator["revision"]["detected"] is False
    assert "aclblasCsymm" in operator["symbols"]["used"] and "aclblasSgemmBatched" not in operator["symbols"]["used"]
    assert report["harness"]["commit"] and report["harness"]["version"]
    markdown = next((tmp_path / "r").glob("*/report.md")).read_text()
    assert f"被测算子：v1，{lib.name}（sha256 {operator['sha256'][:12]}）" in markdown
    # negative controls: a revision the checkout lacks and a source that is no checkout are one line, exit 3,
    # and nothing is recorded
    for bad, says in ((["--operator-src", str(src), "--operator-rev", "nope"], "--operator-rev nope"),
                      (["--operator-src", str(tmp_path)], "not a directory inside a git checkout")):
        refused = cli("run", *common, *bad)
        assert refused.returncode == 3 and says in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert len(list((tmp_path / "r").glob("*/report.json"))) == 1


def test_revision_detected_from_the_checkout_the_library_sits_in(tmp_path):
    src, commit = git_repo(tmp_path / "opsrc")
    inside, outside = src / "build" / "lib.so", tmp_path / "lib.so"
    for path in (inside, outside):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x7fELF not really")
    found = operator_identity.identify(str(inside))
    assert found["revision"]["commit"] == commit and found["revision"]["detected"] is True
    assert found["label"] == "v1"
    alone = operator_identity.identify(str(outside))  # negative control: nothing to detect
    assert alone["revision"]["commit"] == "" and alone["label"] == f"sha256:{alone['sha256'][:12]}"
    named = operator_identity.identify(str(outside), rev="my-fix")
    assert named["label"] == "my-fix" and named["revision"]["commit"] == ""


def operator_meta(run_id, started, label, commit="", sha=None, harness_commit="h" * 40):
    identity = operator_identity.blank(f"/libs/{label}.so", sha or hashlib.sha256(label.encode()).hexdigest())
    identity["revision"].update(rev=label, commit=commit)
    identity["label"] = operator_identity.label(identity)
    return {**meta(run_id=run_id), "commit": harness_commit, "started": started, "operator": identity,
            "harness": {"version": "0.1.0", "commit": harness_commit, "dirty": False}}


def history_of(tmp_path, runs):
    """A history with one perf row per run: (run_id, operator label, center us, commit, harness commit)."""
    rng = np.random.default_rng(3)
    h = History(tmp_path / "h.sqlite")
    for i, (run_id, label, center, commit, harness_commit) in enumerate(runs):
        h.start_run(operator_meta(run_id, f"2026-01-{i + 1:02d}", label, commit, harness_commit=harness_commit))
        h.record(run_id, rec("TC_PF_001", noisy(rng, center), rounds=5))
        h.finish_run(run_id, {"total": 1, "passed": 1})
    return h


def test_runs_and_history_show_the_operator_revision_first(tmp_path, capsys):
    history_of(tmp_path, [("r1", "v1", 100, "a" * 40, "h" * 40), ("r2", "v2", 112, "b" * 40, "h" * 40)])
    hist = ["--history", str(tmp_path / "h.sqlite")]
    assert run_command(runs_command, ["runs", *hist]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("|")[1].strip() == "operator rev"
    assert lines[2].split("|")[1].strip() == "v2" and lines[3].split("|")[1].strip() == "v1"
    assert run_command(history_command, ["history", *hist]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("|")[1].strip() == "operator_rev"
    assert [ln.split("|")[1].strip() for ln in lines[2:]] == ["v1", "v2"]


def test_an_older_history_is_migrated_with_the_operator_of_each_run(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)  # the version-2 schema: runs without operator columns
    db.executescript(
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY, commit_sha TEXT, dirty INTEGER, branch TEXT, backend TEXT,"
        " device TEXT, host TEXT, started TEXT, finished TEXT, meta TEXT NOT NULL, summary TEXT);"
        "CREATE TABLE results (run_id TEXT NOT NULL, table_name TEXT NOT NULL, case_name TEXT NOT NULL, op TEXT,"
        " line INTEGER, verdict TEXT, is_perf INTEGER, n INTEGER, mean_us REAL, median_us REAL, min_us REAL,"
        " converged INTEGER, record TEXT NOT NULL, device TEXT, PRIMARY KEY (run_id, table_name, line, case_name));"
        "CREATE TABLE samples (run_id TEXT NOT NULL, table_name TEXT NOT NULL, case_name TEXT NOT NULL,"
        " samples_us TEXT NOT NULL, line INTEGER, PRIMARY KEY (run_id, table_name, line, case_name));"
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, description TEXT, applied TEXT);"
        "INSERT INTO schema_migrations VALUES (1, 'v1', ''), (2, 'v2', ''); PRAGMA user_version = 2;")
    old_meta = {"run_id": "old", "commit": "c" * 40, "operator_lib": {"path": "/x.so", "sha256": "ab" * 32}}
    db.execute("INSERT INTO runs (run_id, commit_sha, started, meta) VALUES ('old', ?, '2025', ?)",
               ("c" * 40, json.dumps(old_meta)))
    db.commit()
    with pytest.raises(sqlite3.OperationalError):  # negative control: the column is the migration's
        db.execute("SELECT operator_rev FROM runs")
    db.close()
    listed = History(path).run_list()
    assert listed[0]["operator_rev"] == "sha256:" + "ab" * 6 and listed[0]["operator_sha256"] == "ab" * 32


def test_compare_by_operator_revision_library_path_and_ambiguity(tmp_path, capsys):
    h = history_of(tmp_path, [("r1", "v1", 100, "a" * 40, "h" * 40), ("r2", "v2", 112, "b" * 40, "h" * 40),
                              ("r3", "main", 100, "c" * 40, "h" * 40), ("r4", "main", 100, "d" * 40, "h" * 40)])
    hist = ["--history", str(tmp_path / "h.sqlite")]
    assert run_command(compare_command, ["compare", "v1", "v2", *hist]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("base: operator v1") and "run r1" in out[0] and out[1].startswith("head: operator v2")
    assert any("REGRESSION" in line for line in out)
    # a commit prefix of the operator (not of the harness) names its runs too
    assert run_command(compare_command, ["compare", "a" * 8, "b" * 8, *hist]) == 1
    capsys.readouterr()
    # a library file names the newest run of its sha256
    lib = tmp_path / "v1.so"
    lib.write_bytes(b"\x7fELF" + b"v1-bytes")
    digest = hashlib.sha256(lib.read_bytes()).hexdigest()
    h.start_run(operator_meta("r5", "2026-02-01", "libv1", sha=digest))
    h.record("r5", rec("TC_PF_001", noisy(np.random.default_rng(5), 100), rounds=5))
    assert run_command(compare_command, ["compare", str(lib), "v2", *hist]) == 1
    assert "run r5" in capsys.readouterr().out.splitlines()[0]
    other = tmp_path / "unjudged.so"
    other.write_bytes(b"\x7fELF" + b"never run")
    assert run_command(compare_command, ["compare", str(other), "v2", *hist]) == 3
    assert "judged this library" in capsys.readouterr().err
    # two builds under one label: one line naming both, exit 3
    assert run_command(compare_command, ["compare", "main", "v2", *hist]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ambiguous" in err[0] and "c" * 12 in err[0] and "d" * 12 in err[0]


def test_compare_says_when_the_harness_changed(tmp_path, capsys):
    history_of(tmp_path, [("r1", "v1", 100, "a" * 40, "1" * 40), ("r2", "v2", 100, "b" * 40, "2" * 40),
                          ("r3", "v3", 100, "c" * 40, "2" * 40)])
    hist = ["--history", str(tmp_path / "h.sqlite")]
    run_command(compare_command, ["compare", "v1", "v2", *hist])
    err = capsys.readouterr().err
    assert "the harness differs between the runs" in err and "1111111" in err and "2222222" in err
    run_command(compare_command, ["compare", "v2", "v3", *hist])  # negative control: one harness, no line
    assert "harness differs" not in capsys.readouterr().err


def test_npu_identity_names_cann_driver_runtime_and_cores_from_the_runtime(tmp_path, monkeypatch):
    import fake_device
    from harness.backends import npu

    home, _ = fake_device.build(tmp_path / "cann")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    monkeypatch.setenv("FAKE_ACL_AI_CORES", "28")
    (home / "version.info").write_text("Version=8.5.0\nversion_dir=8.5.0\n")
    driver = tmp_path / "driver.info"
    driver.write_text("Version=25.0.rc1\n")
    monkeypatch.setattr(npu, "DRIVER_VERSION_FILE", driver)
    backend = npu.open(device=0, operator_lib=fake_device.twin())
    try:
        info = backend.describe()
    finally:
        backend.close()
    identity = operator_identity.identify(info["library"], info["library_sha256"], runtime=info)
    assert identity["runtime"] == {"cann_version": "8.5.0", "driver_version": "25.0.rc1", "runtime_version": "1.2.3",
                                   "soc_name": "Ascend950PR_9599", "ai_cores": 28, "vector_cores": 56}
    # negative control: without the version files the versions are unknown, not guessed
    (home / "version.info").unlink()
    driver.unlink()
    assert npu.runtime_identity(ctypes_runtime(home), 0)["cann_version"] == ""


def ctypes_runtime(home):
    import ctypes
    return ctypes.CDLL(str(home / "lib64" / "libascendcl.so"))
