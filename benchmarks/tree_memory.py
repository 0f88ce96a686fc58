"""Peak memory of a whole process tree (a `harness run`: the harness, its judge processes, workers and their
bubblewrap parents), sampled from /proc every 50 ms: the sum of RSS (pages shared between processes, such as a
row's shared memory or a forked judge's untouched heap, counted once per process) and of PSS (each shared page
split between its sharers: what the tree holds), per role, at the moment of each peak.

Usage: python3 benchmarks/tree_memory.py [--interval S] [--json PATH] -- COMMAND...   (PATH: rewritten every 10 s)
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def tree(root: int) -> list[int]:
    """`root` and every process below it (re-parented orphans of a subreaper included: they are its children)."""
    seen, todo = [], [root]
    while todo:
        pid = todo.pop()
        seen.append(pid)
        todo += _children(pid)
    return seen


def role(pid: int, root: int, root_cmd: bytes) -> str:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "gone"
    if pid == root:
        return "harness"
    if b"harness.run.worker" in cmd or b"harness.run.zygote" in cmd:
        return "worker"  # a zygote's workers are forked from it and keep its command line
    if cmd.startswith(b"bwrap") or b"/bwrap\0" in cmd:
        return "bwrap"
    if cmd == root_cmd:
        return "judge"  # forked from the harness (the precision judge beside the perf phase, a warden before exec)
    return "other"


def sizes(pid: int) -> tuple[int, int]:
    """(RSS, PSS) bytes of one process, (0, 0) once it is gone."""
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("Pss:"):
                pss = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return rss, pss


def sample(root: int, root_cmd: bytes) -> dict[str, list[int]]:
    """{role: [rss, pss, processes]} now."""
    out: dict[str, list[int]] = {}
    for pid in tree(root):
        rss, pss = sizes(pid)
        entry = out.setdefault(role(pid, root, root_cmd), [0, 0, 0])
        entry[0] += rss
        entry[1] += pss
        entry[2] += 1
    return out


def watch(command: list[str], interval: float = 0.05, out: str | None = None) -> dict:
    """Run `command`, sampling its tree until it exits; the peaks and what each role held at them, written to `out`
    every 10 s as well (a run stopped midway keeps its peaks so far)."""
    start = written = time.monotonic()
    proc = subprocess.Popen(command)
    root_cmd = b""
    peak = {"rss": (0, {}), "pss": (0, {})}
    samples = 0
    while proc.poll() is None:
        if not root_cmd:
            try:
                root_cmd = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
            except OSError:
                pass
        now = sample(proc.pid, root_cmd)
        samples += 1
        for i, key in enumerate(("rss", "pss")):
            total = sum(v[i] for v in now.values())
            if total > peak[key][0]:
                peak[key] = (total, {r: dict(rss=v[0], pss=v[1], n=v[2]) for r, v in now.items()})
        if out and time.monotonic() - written > 10:
            written = time.monotonic()
            Path(out).write_text(json.dumps(_result(command, proc.returncode, start, samples, peak), indent=1))
        time.sleep(interval)
    return _result(command, proc.returncode, start, samples, peak)


def _result(command: list[str], rc: int | None, start: float, samples: int, peak: dict) -> dict:
    return {"command": command, "rc": rc, "wall_s": round(time.monotonic() - start, 1),
            "samples": samples, "peak_rss_bytes": peak["rss"][0], "at_peak_rss": peak["rss"][1],
            "peak_pss_bytes": peak["pss"][0], "at_peak_pss": peak["pss"][1]}


def main() -> int:
    args = sys.argv[1:]
    interval, out = 0.05, None
    while args and args[0] != "--":
        flag, value, args = args[0], args[1], args[2:]
        if flag == "--interval":
            interval = float(value)
        elif flag == "--json":
            out = value
    result = watch(args[1:], interval, out)
    mib = 2 ** 20
    print(f"wall {result['wall_s']} s, rc {result['rc']}, {result['samples']} samples; peak RSS (sum) "
          f"{result['peak_rss_bytes'] / mib:.0f} MiB, peak PSS (sum) {result['peak_pss_bytes'] / mib:.0f} MiB",
          file=sys.stderr)
    for key in ("rss", "pss"):
        held = ", ".join(f"{r} x{v['n']}: rss {v['rss'] / mib:.0f} pss {v['pss'] / mib:.0f}"
                         for r, v in sorted(result[f"at_peak_{key}"].items()))
        print(f"  at the {key.upper()} peak: {held}", file=sys.stderr)
    if out:
        Path(out).write_text(json.dumps(result, indent=1))
    return result["rc"]


if __name__ == "__main__":
    sys.exit(main())
