"""Whether the judge can vouch for a perf row's figures: the worker's samples against the judge's own clock and the
overhead it measured (a patched timer or a forged record cannot report calls faster than the interval allows)."""
from __future__ import annotations

import math

#: The judge's bound on a perf row's figures (on_timed): its clock, from the "sampling" answer to the "timed"
#: message, may exceed the samples plus the overhead by at most this factor and this many seconds (the worker's
#: share of a loaded core between samples, the judge waking), and the samples may not sum to more than it.
#: 4 and 0.1 s failed honest rows in CI: two concurrent runs beside a busy loop on 2 cores left the twin's
#: TC_PF_0011 0.35 s of samples and overhead in a 1.84 s interval (5.3x), while the one-minute load average, which
#: scales the per-sample allowance, still read low. 50x let the patched-timer attack (a 100 ms call read as 0.1 ms)
#: pass at CI's load of ~3, where the load-scaled allowance brings it to ~60x; 20x catches it up to a load of ~8
#: per core and leaves honest rows ~4x of headroom over the worst seen.
CREDIBLE_FACTOR = 20.0
CREDIBLE_SLACK_S = 0.25
#: What the worker does per sample besides the digest and the restore (timers, scheduler probe, statistics in
#: Python), generously: on the twin's 64x64 rows, in one process at load 12 on 2 cores, the whole gap between
#: samples (digest included) was 0.2-1.4 ms. The per-sample allowance is scaled by the load per core (the
#: worker's share of a core between samples), never below 1.
SAMPLE_OVERHEAD_S = 0.5e-3


def credibility(timing: dict, interval: float, costs: tuple[float, float], accumulates: bool,
                 host_clock: bool, load: float = 1.0) -> str:
    """Why the judge cannot vouch for `timing` ('' when it can): figures that are not finite and positive, samples
    that sum to more than its clock's `interval`, or samples that with the overhead it measured (`costs`: digest
    and copy of the row's bytes; a C put back before each call on rows that read it) leave most of it unexplained.
    The last needs the overhead of a sample known to the judge and every sample host wall time: where `host_clock`
    (the cpu backend: the buffers digested in place). On a device, a sample's timer and the download of every
    buffer after it cost what the judge cannot measure, and a device timeline leaves out the host's share of each
    call: there the figures are bounded from above only. `load`: the machine's load per core (>= 1 counts)."""
    scopes = [timing, *(timing.get("scopes") or {}).values()]
    measured_s, calls_s, events, host_call_s = 0.0, 0.0, 0, 0.0
    for i, t in enumerate(scopes):
        samples = t.get("samples_us") if isinstance(t, dict) else None
        cps = t.get("calls_per_sample", 1) if isinstance(t, dict) else None
        if not isinstance(samples, list) or not samples or not isinstance(cps, int) or cps < 1 or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0
                for x in samples):
            return f"the figures of scope {i + 1} are not all finite and positive numbers"
        warm = t.get("warmup", 0) if i else 0  # a later scope's warm-up runs inside the judge's interval
        warm = warm if isinstance(warm, int) and not isinstance(warm, bool) and warm >= 0 else 0
        mean_s = sum(samples) / len(samples) / 1e6
        measured_s += sum(samples) * cps / 1e6
        calls_s += (sum(samples) / 1e6 + warm * mean_s) * cps
        events += len(samples) + warm
        host_call_s = host_call_s or mean_s
    if measured_s > interval * 1.05 + 0.002:
        return (f"the samples sum to {measured_s:.4g} s, more than the {interval:.4g} s the judge's clock saw "
                "between the first sample and the end of the timed calls")
    if not host_clock:
        return ""
    digest_s, copy_s = costs
    per_sample = (SAMPLE_OVERHEAD_S + digest_s + (copy_s if accumulates else 0.0)) * max(1.0, load)
    overhead_s = events * per_sample + copy_s + (2 * copy_s + host_call_s if accumulates else 0.0)
    if interval > CREDIBLE_FACTOR * (calls_s + overhead_s) + CREDIBLE_SLACK_S:
        return (f"the samples ({calls_s:.4g} s) and the measured overhead ({overhead_s:.4g} s) account for "
                f"{calls_s + overhead_s:.4g} s of the {interval:.4g} s the judge's clock saw between the first "
                "sample and the end of the timed calls")
    return ""
