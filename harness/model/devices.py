"""Which devices of this host a run uses: `--device` as one id, a list (`0,2,5`), a range (`0-7`) or `all`.

The harness never loads a device runtime itself (the operator library lives only in isolated workers), so `all`
counts devices from what the host says outside any runtime: the visibility variable the runtime honours, else the
vendor's management tool. On the `cpu` backend the devices are emulated: `all` is HARNESS_CPU_DEVICES (default 4),
so the multi-device code paths run and are tested on any machine.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess

from harness.model.untrusted import count

#: Emulated devices of the cpu backend that `--device all` means (override with HARNESS_CPU_DEVICES).
DEFAULT_CPU_DEVICES = 4
_VISIBLE = {"npu": "ASCEND_RT_VISIBLE_DEVICES", "cuda": "CUDA_VISIBLE_DEVICES"}
#: Device ids (and emulated device counts) above this are a typo, not a machine.
MAX_DEVICES = 1024
_PART = re.compile(r"^(\d+)(?:-(\d+))?$")


def parse(text: str) -> str:
    """argparse type of `--device`: checks the syntax now (one line on a typo), resolves `all` later."""
    text = text.strip()
    if text != "all":
        ids(text)
    return text


def ids(text: str) -> list[int]:
    """`3`, `0,2,5`, `0-7`, `0-3,6` as sorted distinct ids; argparse.ArgumentTypeError names the bad part."""
    out: set[int] = set()
    for part in text.split(","):
        m = _PART.match(part.strip())
        if not m:
            raise argparse.ArgumentTypeError(f"device {part.strip()!r}: expected an id (3), a list (0,2,5), a range "
                                             "(0-7) or all")
        lo, hi = int(m[1]), int(m[2] if m[2] is not None else m[1])
        if hi < lo:
            raise argparse.ArgumentTypeError(f"device range {part.strip()!r} runs backwards")
        if hi >= MAX_DEVICES:
            raise argparse.ArgumentTypeError(f"device {part.strip()!r}: ids go up to {MAX_DEVICES - 1}")
        out.update(range(lo, hi + 1))
    return sorted(out)


def resolve(text: str, backend: str) -> list[int]:
    """The device ids `text` names on this host; ValueError (one line) when `all` finds none."""
    if text != "all":
        return ids(text)
    count = count_devices(backend)
    if count < 1:
        raise ValueError(f"--device all: no {backend} device found on this host")
    return list(range(count))


def count_devices(backend: str) -> int:
    """How many devices `all` means for `backend` on this host (0 when it cannot tell)."""
    if backend == "cpu":
        value = os.environ.get("HARNESS_CPU_DEVICES", str(DEFAULT_CPU_DEVICES))
        number = count(value) or 0
        if not 1 <= number <= MAX_DEVICES:
            raise ValueError(f"HARNESS_CPU_DEVICES={value[:20]!r}: expected a number of emulated devices from 1 to "
                             f"{MAX_DEVICES}")
        return number
    visible = os.environ.get(_VISIBLE.get(backend, ""), "").strip()
    if visible:
        return len([v for v in visible.split(",") if v.strip()])
    return _count_from_tool(backend)


def _count_from_tool(backend: str) -> int:
    """npu-smi / nvidia-smi list one device per line: count those lines."""
    tool, argv, pattern = {"npu": ("npu-smi", ["info", "-l"], r"NPU ID"),
                           "cuda": ("nvidia-smi", ["-L"], r"^GPU \d+")}.get(backend, ("", [], ""))
    if not tool or shutil.which(tool) is None:
        return 0
    try:
        out = subprocess.run([tool, *argv], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return len(re.findall(pattern, out, re.MULTILINE))
