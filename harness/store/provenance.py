"""Where a run came from: the harness's commit, dirty flag and branch, the host, file hashes. Recorded with every run
so numbers stay attributable."""
from __future__ import annotations

import datetime as dt
import hashlib
import os
import platform
import subprocess
from functools import lru_cache
from pathlib import Path


def _git(*args: str, cwd: Path) -> str:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=20,
                              check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def git_state(cwd: Path | None = None) -> dict[str, object]:
    cwd = cwd or Path.cwd()
    commit = _git("rev-parse", "HEAD", cwd=cwd)
    return {
        "commit": commit or "unknown",
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no", cwd=cwd)) if commit else False,
        "branch": _git("rev-parse", "--abbrev-ref", "HEAD", cwd=cwd) or "unknown",
    }


def harness_git_state() -> dict[str, object]:
    """The commit of the checkout this harness package runs from (an editable install's repository), whatever the
    current directory is; "unknown" when the package is not in a git checkout."""
    return dict(_harness_git_state())


@lru_cache(maxsize=1)
def _harness_git_state() -> dict[str, object]:
    """Asked once per process (three git commands): a run's meta and its harness identity both record it, and the
    checkout a process runs its code from does not change under it."""
    return git_state(Path(__file__).resolve().parent)


@lru_cache(maxsize=1)
def harness_version() -> str:
    """The installed harness's version ("unknown (not installed)" for a checkout never installed); once per
    process (importlib.metadata scans every installed distribution)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("ops-blas-harness")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def harness_identity() -> dict[str, object]:
    """The judging harness, recorded beside the operator it judged: version, commit and dirty flag."""
    state = harness_git_state()
    return {"version": harness_version(), "commit": state["commit"], "dirty": state["dirty"]}


def host() -> dict[str, object]:
    return {"hostname": platform.node(), "platform": platform.platform(), "python": platform.python_version(),
            "cpus": os.cpu_count()}


def sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def table_sha256(path: str | Path) -> str:
    """The sha256 of the bytes the run parsed from a case table (cases.PARSED_SHA256); read now only for a table
    this process never parsed, and "" for one that is gone."""
    from harness.tables.reader import PARSED_SHA256

    if str(path) in PARSED_SHA256:
        return PARSED_SHA256[str(path)]
    try:
        return sha256(path)
    except OSError:
        return ""


def new_run_id(commit: str) -> str:
    """Sortable and unique enough for one machine: UTC time to the microsecond plus the short commit."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{stamp}-{commit[:8]}"


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
