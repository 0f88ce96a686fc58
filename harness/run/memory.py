"""Memory of one row: the harness's own footprint, estimated before anything is allocated (the `--memory-cap`
check), and the worker's resident memory measured around the row and around each operator call.

Linux /proc: VmRSS is what the worker holds now, VmHWM its peak, which writing "5" to /proc/self/clear_refs resets,
so each row's peak is its own. Elsewhere the measurements are None and only the estimate is enforced.
"""
from __future__ import annotations

import os
from pathlib import Path

#: An operator call that leaves the worker this much more resident memory than its expected workspace (or timed
#: calls that grow it by this much in all) leaks: the row FAILs, before the worker runs out of memory on a later one.
LEAK_BYTES = 64 << 20

#: Bytes the harness holds at its peak per byte of each buffer, fitted with margin to the measured VmHWM peaks of the
#: largest rows of both tables (docs/performance.md, "Memory"). Inputs: host data, backend copy, read-back, and
#: the float64 copies the truth and the forward-error scale make; the output as well plus golden, truth, masks and
#: the criteria's float64 temporaries.
INPUT_FACTOR = 9
OUTPUT_FACTOR = 24
#: The same for perf rows whose golden is computed on a sample of C (golden.sample): no full-size golden or truth.
SAMPLED_INPUT_FACTOR = 5
SAMPLED_OUTPUT_FACTOR = 5
#: What a row costs beyond its buffers (numpy temporaries, fill tables), bytes.
OVERHEAD_BYTES = 16 << 20


#: Host copies of a device buffer's guard zones held at once (upload, last check, end-of-row read-back).
ZONE_COPIES = 3


def estimate(buffer_bytes: dict[str, int], output: str = "C", sampled: bool = False,
             device_zones: bool = False) -> int:
    """The harness's peak bytes for a row with these buffers, before allocating any of them. `device_zones`: the
    backend has no guard pages, so each buffer's guard zones (one column or batch each side, at most
    MAX_GUARD_BYTES) are copied to and from the host as well."""
    from harness.tables.layout import MAX_GUARD_BYTES

    out = buffer_bytes.get(output, 0)
    inputs = sum(buffer_bytes.values()) - out
    zones = sum(min(2 * b, 2 * MAX_GUARD_BYTES) for b in buffer_bytes.values()) if device_zones else 0
    factors = (SAMPLED_INPUT_FACTOR, SAMPLED_OUTPUT_FACTOR) if sampled else (INPUT_FACTOR, OUTPUT_FACTOR)
    return factors[0] * inputs + factors[1] * out + ZONE_COPIES * zones + OVERHEAD_BYTES


def _status_bytes(key: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def resident() -> int | None:
    """Resident bytes of this process now."""
    return _status_bytes("VmRSS")


def reset_peak() -> int | None:
    """Start a new peak (VmHWM := VmRSS); returns the resident bytes at the start, None where unsupported."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return None
    return resident()


def peak() -> int | None:
    """Peak resident bytes since the last reset_peak."""
    return _status_bytes("VmHWM")


def threads() -> int:
    """Threads of this process: an operator that returns with more than it was called with left some running."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1
