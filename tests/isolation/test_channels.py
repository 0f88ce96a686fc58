"""Every byte from a worker is untrusted input, and the lifecycle around it is bounded (issue 37, classes 2 and 4).

The readers of harness/model/untrusted.py each meet their attack directly (a crafted note directory, socket, memfd,
timing record), and tests/native/hostile_channels.c mounts the same attacks from inside a real worker: each is
charged to its own row with the verdict it must get, the good rows around it PASS, nothing hangs (every run here
is bounded), no traceback, and nothing of the parent's (its environment, a root-only file) reaches a terminal, a
report or a log. Each of these failed on main b6fba62 (docs/incoming/channels.md says how)."""
from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from conftest import _native_lib
from processes import gone, harness
from tables import csymm_row, write_csymm_table

SECRET = "PARENT-SECRET-" + uuid.uuid4().hex[:8]


@pytest.fixture(scope="session")
def channels_lib(tmp_path_factory) -> Path:
    return _native_lib(tmp_path_factory, "hostile_channels", "-O1")


@contextlib.contextmanager
def within(seconds: float):
    """Fail (TimeoutError) instead of hanging when the block takes longer than `seconds`."""
    def expire(*_):
        raise TimeoutError(f"still blocked after {seconds} s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _hostile_notes(directory: Path, secret_file: Path) -> None:
    """What a worker can leave in its note directory: a FIFO, links to the harness's environment and to a
    root-only file, a hard link to that file, a 200 GiB sparse file; and one honest note."""
    directory.mkdir(mode=0o700)
    os.mkfifo(directory / "a-fifo")
    (directory / "b-environ").symlink_to("/proc/self/environ")
    (directory / "c-secret").symlink_to(secret_file)
    os.link(secret_file, directory / "d-hardlink")
    with open(directory / "e-sparse", "wb") as f:
        f.truncate(200 << 30)
    (directory / "f-note").write_text("out-of-bounds write 8 bytes after the end of C (guard page)\n")


def test_fault_notes_are_read_without_following_links_blocking_or_reading_past_the_cap(own_tmp, monkeypatch):
    from harness.backends import fence

    secret = own_tmp / "root-only"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    monkeypatch.setenv("HARNESS_CHANNELS_TEST", SECRET)  # in this process's /proc/self/environ
    pid = 4_000_000_000 + os.getpid()  # no process has it: the notes of a made-up worker
    _hostile_notes(Path(fence.worker_prefix(pid)), secret)
    with within(10):
        note = fence.fault_note(pid)
    assert note == "out-of-bounds write 8 bytes after the end of C (guard page)"
    assert not Path(fence.worker_prefix(pid)).exists()  # removed once read


def test_read_note_caps_what_it_reads_and_escapes_it(tmp_path):
    from harness.model.untrusted import NOTE_BYTES, read_note

    (tmp_path / "long").write_bytes(b"\x1b[2J" + b"x" * (10 * NOTE_BYTES))
    (tmp_path / "zeros").write_bytes(b"\0" * 4096)
    assert read_note(str(tmp_path / "long")).startswith("\\x1b[2Jxxx")
    assert len(read_note(str(tmp_path / "long"))) == NOTE_BYTES
    assert read_note(str(tmp_path / "zeros")) == ""  # a C string: nothing before its NUL
    assert read_note(str(tmp_path / "missing")) == ""


def _frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big", signed=True) + payload


def test_a_partial_frame_is_kept_never_waited_for():
    from harness.model.untrusted import Frames, Unfit

    ours, theirs = socket.socketpair()
    frames = Frames(ours.fileno(), 1 << 20)
    try:
        theirs.sendall(b"\x00\x00\x03\xe8" + b"0123456789")  # 1000 bytes promised, 10 sent
        start = time.monotonic()
        with within(5):
            assert frames.pull() is None
        assert time.monotonic() - start < 1 and frames.partial == "10 of the 1000 bytes of a message"
        theirs.sendall(b"x" * 990 + _frame(b"next"))
        assert frames.pull() == b"0123456789" + b"x" * 990
        assert frames.pull() == b"next" and frames.partial == ""
        # what multiprocessing's Connection sends reads back the same
        Connection(os.dup(theirs.fileno())).send_bytes(b'["started", null]')
        assert frames.pull() == b'["started", null]'
        theirs.sendall((2_000_000).to_bytes(4, "big"))
        with pytest.raises(Unfit, match="promising 2000000 bytes"):
            frames.pull()
    finally:
        frames.close()
        ours.close()
        theirs.close()
    ours, theirs = socket.socketpair()
    frames = Frames(ours.fileno(), 1 << 20)
    theirs.sendall(b"\x00\x00\x00\x10abc")
    theirs.close()
    with pytest.raises(EOFError):
        frames.pull()
    frames.close()
    ours.close()


def test_the_rows_shared_memory_can_neither_shrink_nor_grow(tmp_path):
    import fcntl

    from harness.run.row_judge import RowJudge
    from harness.tables.load import load_table
    from harness.run.sandbox import BackendInfo

    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_a", 4, 3)])
    (case,) = load_table(table)
    judge = RowJudge(case, BackendInfo())
    try:
        seals = fcntl.fcntl(judge.fd, fcntl.F_GET_SEALS)
        assert seals & fcntl.F_SEAL_SHRINK and seals & fcntl.F_SEAL_GROW and seals & fcntl.F_SEAL_SEAL
        # the worker gets the descriptor itself (SCM_RIGHTS) or reopens it: either way it cannot resize it
        again = os.open(f"/proc/self/fd/{judge.fd}", os.O_RDWR)
        for fd in (judge.fd, again):
            for size in (0, judge.job.size * 2):
                with pytest.raises(PermissionError):
                    os.ftruncate(fd, size)
        os.close(again)
        assert bytes(judge.view[:8]) == bytes(judge.view[:8])  # still readable: no SIGBUS
    finally:
        judge.close()


GOOD_RECORD_SAMPLES = [1e-6 * (1 + (i % 5) / 10) for i in range(60)]


def _good_record() -> dict:
    from harness.model.settings import TimingConfig
    from harness.perf.timing import timing_record

    return json.loads(json.dumps(timing_record(GOOD_RECORD_SAMPLES, TimingConfig(), 10, True, "ci_target")))


@pytest.mark.parametrize("change,field", [
    (lambda r: r.update(mean_us=math.nan), "timing.mean_us"),
    (lambda r: r.update(min_us=math.inf), "timing.min_us"),
    (lambda r: r.update(samples_us=["fast"] * r["n"]), "timing.samples_us[0]"),
    (lambda r: r.update(n=r["n"] + 1), "timing.n"),
    (lambda r: r.update(median_us="1.0"), "timing.median_us"),
    (lambda r: r.update(converged="yes"), "timing.converged"),
    (lambda r: r.update(disturbed_at=[10 ** 9]), "timing.disturbed_at"),
    (lambda r: r.update(ci95_us=[1.0]), "timing.ci95_us"),
    (lambda r: r["outliers"].update(low=math.nan), "timing.outliers.low"),
    (lambda r: r.update(scopes={"call": {"n": 1}}), "timing.scopes.call.samples_us"),
])
def test_a_forged_timing_record_is_refused_naming_the_field(change, field):
    from harness.perf.timing import checked_record
    from harness.run.messages import Malformed, checked_timing

    good = _good_record()
    assert checked_record(good) is good  # the negative control: a real record passes as it is
    bad = _good_record()
    change(bad)
    with pytest.raises(Malformed, match=field.replace("[", r"\[").replace("]", r"\]")):
        checked_timing(bad)


def test_a_message_nested_too_deep_is_refused_naming_the_field():
    from harness.model.untrusted import MAX_DEPTH, Unfit, clean

    deep: list = []
    for _ in range(400):
        deep = [deep]
    with pytest.raises(Unfit, match=r"timed\.timing\.modes_us\[0\]"):
        clean({"timing": {"modes_us": deep}}, "timed")
    shallow: list = []
    for _ in range(MAX_DEPTH - 1):
        shallow = [shallow]
    assert clean(shallow) == shallow


def test_printable_escapes_every_control_sequence_and_keeps_lines_only_when_asked():
    from harness.model.untrusted import printable

    text = "a\x1b[2J\x1b]0;title\x07b\u202ec\x9bd\x7f\te\nf"
    assert printable(text) == "a\\x1b[2J\\x1b]0;title\\x07b\\u202ec\\x9bd\\x7f\\x09e\\x0af"
    assert printable(text, lines=True) == "a\\x1b[2J\\x1b]0;title\\x07b\\u202ec\\x9bd\\x7f\te\nf"
    assert printable("plain text, ümlauts, 中文") == "plain text, ümlauts, 中文"


def test_sweep_removes_the_notes_of_dead_owners_only(own_tmp):
    from harness.backends import fence

    dead = subprocess.Popen(["true"])
    dead.wait()
    unreaped = subprocess.Popen(["true"])  # exited, not waited for: a zombie, as a killed run's judge can be
    _wait_for_exits({f"harness-fault-{os.getuid()}-w{unreaped.pid}"})
    stem = Path(tempfile.gettempdir()) / f"harness-fault-{os.getuid()}-"
    # a directory is the judge's, the process that forked the warden and reads the notes once the warden has ended
    mine = Path(fence.worker_prefix(dead.pid))  # its warden gone, its judge (this process) alive: being read
    theirs, note = Path(fence.worker_prefix(os.getpid(), dead.pid)), Path(f"{stem}{dead.pid}")
    zombie = Path(fence.worker_prefix(os.getpid(), unreaped.pid))
    for d in (mine, theirs, zombie):
        d.mkdir(exist_ok=True)
        (d / "1").write_text("note")
    note.write_text("note")
    # names anyone may write in /tmp: pids no process can have (past a C int, past the kernel's limit, 0: kill(0)
    # would signal our own group) and digits int() refuses; the sweep must neither raise on them nor keep the first
    impossible = [Path(f"{stem}w1-j{n}") for n in (4_000_000_000 + os.getpid(), (1 << 22) + 1, 0)]
    for d in impossible:
        d.mkdir()
    odd = [Path(f"{stem}w1-j\u00b2"), Path(f"{stem}w{dead.pid}"), Path(f"{stem}w1-j{dead.pid}-x")]
    for d in odd:
        d.mkdir()
    try:
        removed = fence.sweep()
        assert str(theirs) in removed and str(note) in removed and not theirs.exists() and not note.exists()
        assert str(zombie) in removed, "a dead judge not yet reaped still counted as alive"
        assert mine.exists(), "a dead warden's notes taken from its live judge"
        assert all(str(d) in removed for d in impossible), removed
        assert all(d.exists() for d in odd)  # not names the harness gives, so not its to remove
    finally:
        fence.forget(dead.pid)
        unreaped.wait()


def _run(tmp_path: Path, lib: Path, rows: list[str], *args: str, limit_s: float = 240, **env: str) -> tuple:
    """`harness run` on `rows`, bounded by `limit_s`; (exit code, stdout + stderr, seconds, report cases)."""
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    mark = uuid.uuid4().hex
    start = time.monotonic()
    # the parent's secret first in its environment: a reader that copies the first bytes of it copies the secret
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", str(table), "--operator-lib", str(lib),
                             "--report-dir", "r", "--history", "h.sqlite", *args], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"HARNESS_CHANNELS_SECRET": SECRET, **os.environ, "HARNESS_TEST_MARK": mark, **env})
    try:
        out, err = proc.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"harness run did not end within {limit_s} s (a channel blocked it): {(out + err)[-2000:]}")
    took = time.monotonic() - start
    assert gone(mark), "a process of the run survived it"
    reports = list((tmp_path / "r").glob("*/report.json"))
    assert reports, f"no report.json (exit {proc.returncode}): {(out + err)[-2000:]}"
    cases = {c["case_name"]: c for c in json.loads(reports[0].read_text())["cases"]}
    return proc.returncode, out + err, took, cases


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _nothing_of_the_parent_and_no_escape(tmp_path: Path, output: str) -> None:
    """No secret of the parent's and no raw control sequence in the terminal output or any report file (the JSON
    ones decoded: json.dumps writes ESC as \\u001b, which a reader turns back into ESC)."""
    texts = [output]
    for path in [p for p in (tmp_path / "r").rglob("*") if p.is_file()]:
        if path.suffix == ".json":
            texts += _strings(json.loads(path.read_text()))
        elif path.suffix == ".jsonl":
            texts += [s for line in path.read_text().splitlines() for s in _strings(json.loads(line))]
        else:
            texts.append(path.read_text(errors="replace"))
    for text in texts:
        assert SECRET not in text and "\x1b" not in text and "\x07" not in text and "\u202e" not in text, text[:300]


#: m of the attack row (tests/native/hostile_channels.c) -> (verdict, words its reason must contain). 305's
#: truncation is refused by the seal: the row runs on as if nothing had happened.
CHANNEL_ATTACKS = {
    301: ("CRASH", "signal SIGABRT"), 302: ("CRASH", "signal SIGABRT"), 311: ("CRASH", "signal SIGABRT"),
    303: ("CRASH", "signal SIGABRT"), 305: ("PASS", ""), 309: ("FAIL", "\\x1b[2J\\x1b]0;owned\\x07\\u202eEVIL"),
    310: ("CRASH", "signal SIGSEGV"),
}


def test_each_attack_on_a_channel_is_charged_to_its_row(tmp_path, channels_lib):
    """Every attack of CHANNEL_ATTACKS in one run, each row followed by one that must pass: each is its own row's
    verdict and reason, and none reaches a row after it (one run for all: a run per attack cost 7 harness runs,
    about 15 s of CPU)."""
    secret = tmp_path / "root-only"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    rows = [csymm_row("TC_L0_good", 4, 3)]
    for m in CHANNEL_ATTACKS:
        rows += [csymm_row(f"TC_L0_attack{m}", m, 2), csymm_row(f"TC_L0_after{m}", 5, 3)]
    code, output, _, cases = _run(tmp_path, channels_lib, rows, "--timeout", "20", "-n", "1", limit_s=240,
                                  HOSTILE_SECRET_FILE=str(secret))
    wrong = {}
    for m, (verdict, words) in CHANNEL_ATTACKS.items():
        got = cases[f"TC_L0_attack{m}"]
        if (got["verdict"], words in got["reason"]) != (verdict, True) or "disposition" in got["reason"] \
                or "\\x00" in got["reason"]:
            wrong[m] = (got["verdict"], got["reason"][:300])
    assert not wrong, wrong
    after = {name: c["verdict"] for name, c in cases.items() if not name.startswith("TC_L0_attack")}
    assert set(after.values()) == {"PASS"} and len(after) == len(CHANNEL_ATTACKS) + 1, after
    assert code == 1 and "Traceback" not in output, output[-3000:]
    assert "truncated" not in (cases["TC_L0_attack305"].get("captured") or {}).get("text", "")
    assert "captured \\x1b]0;captured-title\\x07" in cases["TC_L0_attack309"]["captured"]["text"]
    _nothing_of_the_parent_and_no_escape(tmp_path, output)


def test_a_partial_frame_is_the_rows_timeout_not_a_hang(tmp_path, channels_lib):
    rows = [csymm_row("TC_L0_partial", 304, 2), csymm_row("TC_L0_good", 5, 3)]
    code, output, took, cases = _run(tmp_path, channels_lib, rows, "--timeout", "3", "-n", "1", limit_s=90)
    got = cases["TC_L0_partial"]
    assert got["verdict"] == "TIMEOUT" and "(10 of the 1000 bytes of a message had arrived)" in got["reason"], got
    assert cases["TC_L0_good"]["verdict"] == "PASS"
    assert code == 1 and "Traceback" not in output and took < 60


def test_forged_timing_records_are_the_rows_error_naming_the_field(tmp_path, channels_lib):
    rows = [csymm_row("TC_PF_good", 4, 2, beta="0,0")] + [csymm_row(f"TC_PF_forged{m}", m, 1, beta="0,0")
                                                          for m in (306, 307, 308)]
    code, output, _, cases = _run(tmp_path, channels_lib, rows, "--timeout", "20", "--rounds", "1",
                                  "--min-samples", "8", "--max-time", "0.3")
    assert code == 1 and "Traceback" not in output, output[-3000:]
    for m, field in {306: "timing.mean_us is nan", 307: "timing.samples_us[0] is 'fast'",
                     308: "timed.timing.modes_us[0]"}.items():
        got = cases[f"TC_PF_forged{m}"]
        assert got["verdict"] == "ERROR" and f"malformed 'timed' message: {field}" in got["reason"], (m, got)
    assert cases["TC_PF_good"]["verdict"] == "PASS", cases["TC_PF_good"]["reason"]


def test_a_hung_create_is_one_line_and_exit_3_within_the_limit(tmp_path, hostile_proc_lib):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_good", 4, 3)])
    start = time.monotonic()
    proc = harness(["run", str(table), "--operator-lib", str(hostile_proc_lib), "--timeout", "5", "--report-dir",
                    "r", "--history", "h.sqlite"], tmp_path, HOSTILE_CREATE="hang")
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 3 and len(err.strip().splitlines()) == 1, err
    assert "did not finish loading the library and creating a handle within 5 s" in err
    assert time.monotonic() - start < 5 + 30  # the limit, and the interpreter's start-up grace at most


def _fault_dirs(harness_pid: int | None = None, tmp: Path | None = None) -> set[str]:
    """The fault-note directories of this uid in `tmp` (default: the temporary directory); with `harness_pid`,
    only those of that harness's wardens (other runs on the machine make and remove theirs meanwhile)."""
    found = set()
    for p in Path(tmp or tempfile.gettempdir()).glob(f"harness-fault-{os.getuid()}-w*-j*"):
        if harness_pid is None or p.name.endswith(f"-j{harness_pid}"):
            found.add(p.name)
    return found


def _wait_for_fault_dirs(proc: subprocess.Popen, tmp: Path | None = None) -> set[str]:
    """The fault-note directories (in `tmp`, as _fault_dirs) of the run `proc` once its row's worker is up
    (bounded)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if _fault_dirs(proc.pid, tmp):
            time.sleep(1.0)  # the probe's directory comes and goes; the row's worker's stays (its row hangs)
            if seen := _fault_dirs(proc.pid, tmp):
                return seen
        time.sleep(0.1)
    return set()


def _wait_for_exits(dirs: set[str]) -> None:
    """Until the wardens named by these directories have exited (dead or unreaped), at most 30 s."""
    deadline = time.monotonic() + 30
    for name in dirs:
        stat = Path(f"/proc/{name.rsplit('-w', 1)[1].split('-j')[0]}/stat")
        while time.monotonic() < deadline:
            try:
                if stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    break
            except (OSError, IndexError):
                break
            time.sleep(0.05)


def test_fault_directories_of_a_killed_run_are_removed_by_the_next_start(tmp_path, channels_lib, toy_lib):
    # both runs in a temporary directory of their own: any harness run the other xdist workers start meanwhile
    # sweeps the shared one, and may remove the killed run's directories before this test looks at them
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_hang", 304, 2)])
    proc = harness(["run", str(table), "--operator-lib", str(channels_lib), "--timeout", "600", "--report-dir",
                    "r", "--history", "h.sqlite"], tmp_path, TMPDIR=str(tmp))
    try:
        left = _wait_for_fault_dirs(proc, tmp)
    finally:
        proc.kill()
        proc.communicate()
    _wait_for_exits(left)  # the wardens die with the harness (parent-death signal), at load ~5 later than 0.5 s
    assert left and all((tmp / d).exists() for d in left)
    (tmp_path / "next").mkdir()
    code, output, _, _ = _run(tmp_path / "next", toy_lib, [csymm_row("TC_L0_good", 4, 3)], "--timeout", "20",
                              TMPDIR=str(tmp))
    assert code == 0, output[-2000:]
    assert not (left & _fault_dirs(tmp=tmp)), f"left behind: {left & _fault_dirs(tmp=tmp)}"


def test_a_run_stopped_by_sigterm_leaves_no_fault_directory(tmp_path, channels_lib):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_hang", 304, 2)])
    proc = harness(["run", str(table), "--operator-lib", str(channels_lib), "--timeout", "600", "--report-dir",
                    "r", "--history", "h.sqlite"], tmp_path)
    mine = _wait_for_fault_dirs(proc)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and "Traceback" not in out + err, out + err
    assert mine and not (mine & _fault_dirs())
