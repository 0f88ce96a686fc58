"""harness.store.provenance: the harness's own git state is asked once per process (a run's meta and its harness
identity both record it), and what a caller does to the dict it got does not change what the next caller gets."""
from __future__ import annotations

from harness.store import provenance


def test_the_harness_git_state_is_asked_once_per_process(monkeypatch):
    calls = []
    monkeypatch.setattr(provenance, "_git", lambda *args, cwd: calls.append(args) or ("abc123" if "HEAD" in args
                                                                                         else ""))
    provenance._harness_git_state.cache_clear()
    try:
        first = provenance.harness_git_state()
        identity = provenance.harness_identity()
        first["commit"] = "changed by a caller"
        again = provenance.harness_git_state()
    finally:
        provenance._harness_git_state.cache_clear()
    assert len(calls) == 3  # rev-parse HEAD, status, rev-parse --abbrev-ref: once, not once per caller
    assert identity["commit"] == again["commit"] == "abc123"


def test_git_state_of_another_checkout_is_asked_each_time(monkeypatch):
    """Negative control: only the harness's own checkout is remembered; git_state(cwd) asks git every call."""
    calls = []
    monkeypatch.setattr(provenance, "_git", lambda *args, cwd: calls.append(args) or "")
    provenance.git_state()
    provenance.git_state()
    assert len(calls) == 4  # rev-parse HEAD and --abbrev-ref each time (no commit: no status)
