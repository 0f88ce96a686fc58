"""The worker's outer sandbox: bubblewrap (`bwrap`), and the probe that decides whether this machine can use it.

Under bwrap a worker is a fresh interpreter in new user, mount, PID, IPC, network, UTS and cgroup namespaces:
inside, uid/gid 65534 with no capabilities; its filesystem is a private tmpfs holding, read-only, /usr (and the
/lib, /bin links), the interpreter's prefixes, the harness's own packages and the guard-page helper, plus its own
fault-note directory writable; /proc is its own PID namespace's, /tmp is empty and private. The table, the history,
the report directory, the home directory and every other process of the machine are not there to be named, so the
worker cannot chmod, lock, read or signal them; SysV IPC objects it makes die with its IPC namespace. The operator
library reaches it as the descriptor the harness opened (/proc/self/fd/N), the row's shared memory by descriptor
passing, as before. bwrap maps the sandbox's uid to the caller's own (the only mapping an unprivileged bwrap can
write): for a root harness that is root outside, with nothing mounted that it could use root's ownership on.

Where bwrap is missing, or cannot create its namespaces (a container without user namespaces), workers fall back to
the in-process layers of harness.run.confine alone and the run says so (`isolation` in the report's backend info,
and one line on the console). The device backends (npu, cuda, ascend-cpu) need device files, driver libraries and
log directories of their own: they use the fallback layers too (reason given).
"""
from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

#: Set to 1 to run workers without bwrap (the fallback layers only), as on a machine without user namespaces.
OFF_VARIABLE = "HARNESS_NO_BWRAP"
#: The bwrap binary to use instead of the one on PATH (tests point it at one that fails like a container's).
BINARY_VARIABLE = "HARNESS_BWRAP"
#: The worker's uid and gid inside its user namespace (nobody).
SANDBOX_ID = "65534"
PROBE_LIMIT_S = 10.0
_NAMESPACES = ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
               "--unshare-cgroup-try", "--uid", SANDBOX_ID, "--gid", SANDBOX_ID, "--cap-drop", "ALL",
               "--die-with-parent", "--new-session")
_SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
#: What the harness, not the worker, knows it applied (the worker adds the in-process layers it applied itself).
LAYERS = ["bubblewrap: user namespace (uid 65534, no capabilities)",
          "mount namespace (read-only interpreter and harness, writable note directory only; no table, history or "
          "reports)", "PID, IPC, network, UTS and cgroup namespaces"]
#: The cpu backend's guard pages, in either sandbox (harness/backends/fence.c).
GUARDS = "guard pages: shared mappings of a write-sealed memfd (the kernel refuses to make them writable)"


def _mounts() -> list[str]:
    """bwrap's arguments for what a worker reads: system directories (a symlink stays a symlink), the interpreter,
    the harness's own packages, the guard-page helper's build directory."""
    from harness.backends import fence

    args: list[str] = []
    for path in _SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in _SYSTEM_FILES:
        args += ["--ro-bind-try", path, path]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    root = Path(__file__).resolve().parents[2]
    reads = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(sys.executable).resolve().parent),
             str(root / "harness"), str(root / "golden"), str(fence.CACHE_DIR)}
    if (user_site := site.getusersitepackages()) in sys.path:  # packages installed with pip --user
        reads.add(user_site)
    for path in sorted(reads):  # sorted: a directory comes before the ones inside it, which it covers
        if os.path.isdir(path) and not any(path.startswith(s + "/") for s in [*_SYSTEM, *reads]):
            args += ["--ro-bind", path, path]
    return args


def command(binary: str, notes: str, argv: list[str]) -> list[str]:
    """The command line that runs `argv` (a worker's interpreter) confined, with `notes` writable."""
    notes = notes.rstrip("/")
    return [binary, *_NAMESPACES, *_mounts(), "--bind", notes, notes, "--chdir", "/tmp", "--", *argv]


def exit_status(status: int) -> int:
    """A wait status of bwrap as the worker's own: bwrap exits 128 + n when its child died of signal n."""
    if os.WIFEXITED(status) and 128 < (code := os.WEXITSTATUS(status)) < 128 + 65:
        return code - 128  # the wait status of a death by that signal
    return status


def wanted(settings: Any) -> str:
    """Why the workers of `settings` run without bwrap ("" when they may use it)."""
    from harness.run import confine

    if os.environ.get(OFF_VARIABLE) == "1":
        return f"{OFF_VARIABLE}=1"
    if os.environ.get(confine.OFF_VARIABLE) == "1":
        return f"{confine.OFF_VARIABLE}=1"
    if settings.backend != "cpu":
        return f"the {settings.backend} backend needs device files and driver directories of its own"
    if getattr(settings, "service", None) is not None:
        return "this command's workers open their libraries by path"
    return ""


@lru_cache(maxsize=4)
def probe(binary: str) -> str:
    """Why `binary` cannot confine a worker on this machine ("" when it can): it runs /bin/true in the same
    namespaces and mounts, within PROBE_LIMIT_S (once per run)."""
    notes = "/tmp"
    try:
        proc = subprocess.run(command(binary, notes, ["true"]), capture_output=True, text=True,
                              timeout=PROBE_LIMIT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{binary} cannot run: {exc}"
    if proc.returncode != 0:
        line = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return f"{binary} cannot create its namespaces here ({line[:200]})"
    return ""


def binary() -> str:
    """The bwrap to use; "" when there is none."""
    return os.environ.get(BINARY_VARIABLE) or shutil.which("bwrap") or ""


def choose(settings: Any) -> tuple[str, str]:
    """(bwrap binary, "") when the workers of `settings` run under bwrap, else ("", why not)."""
    if why := wanted(settings):
        return "", why
    found = binary()
    if not found:
        return "", "bubblewrap (bwrap) is not installed"
    why = probe(found)
    return ("", why) if why else (found, "")


def isolation(settings: Any, worker_layers: list[str]) -> dict[str, Any]:
    """The run's `isolation` entry: which sandbox its workers run in, why bwrap is not used, every layer (in that
    order: the report's environment section shortens a long entry at its end)."""
    found, why = choose(settings)
    guards = [GUARDS] if settings.backend == "cpu" else []
    if found:
        return {"sandbox": "bwrap", "reason": "", "layers": [*LAYERS, *worker_layers, *guards]}
    return {"sandbox": "fallback", "reason": why, "layers": [*worker_layers, *guards]}
