"""harness.run.cluster without a cluster: the Ray task puts its row back at the caller's scheduling priority (Ray
starts its workers at nice 15), and says so on the record where the host refuses. The cluster itself:
tests/scale/test_cluster.py."""
from __future__ import annotations

import os

import pytest

from harness.run import cluster


def _in_child(body) -> int:
    """Run `body` in a forked child (priorities and uids are per process); its exit status."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(body())
        except BaseException:  # noqa: BLE001 - a failure is the child's exit status
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.mark.skipif(os.geteuid() != 0, reason="lowering a nice value needs CAP_SYS_NICE (runs as root in CI)")
def test_a_row_at_rays_nice_15_goes_back_to_the_callers_priority():
    def body() -> int:
        os.setpriority(os.PRIO_PROCESS, 0, 15)  # where Ray's worker_niceness leaves a task
        left = cluster.match_priority(0)
        return 0 if left is None and os.getpriority(os.PRIO_PROCESS, 0) == 0 else 1
    assert _in_child(body) == 0


def test_a_host_that_refuses_leaves_the_row_where_it_is_and_says_at_what():
    """The negative control: without the privilege the value stays 15 and is returned for the record."""
    def body() -> int:
        os.setpriority(os.PRIO_PROCESS, 0, 15)
        if os.geteuid() == 0:
            os.setuid(65534)  # nobody: no CAP_SYS_NICE
        left = cluster.match_priority(0)
        return 0 if left == 15 and os.getpriority(os.PRIO_PROCESS, 0) == 15 else 1
    assert _in_child(body) == 0


def test_at_the_callers_priority_already_nothing_changes():
    def body() -> int:
        here = os.getpriority(os.PRIO_PROCESS, 0)
        return 0 if cluster.match_priority(here) is None and os.getpriority(os.PRIO_PROCESS, 0) == here else 1
    assert _in_child(body) == 0
