"""The twin's pool of emulated cores (operators/cpu_twin/twin_parallel.*): threads made once per process and reused,
results that do not depend on which thread ran a core's share, a pool that survives fork() in the child, and callers
on several threads at once."""
from __future__ import annotations

import os
import threading
import time

import numpy as np

from harness.model.abi import LOWER, OP_N, SIDE_LEFT, SIDE_RIGHT, UPPER, Status
from harness.backends import aclblas_lib
from csymm_calls import Call, check
from sgemm_calls import Call as SgemmCall
from sgemm_calls import check as check_sgemm

POOL_CORES = 13  # more than any other test of this module asks for, so this one starts the threads it counts


def pool_threads() -> dict[int, str]:
    """tid -> name of this process's twin pool threads."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            name = open(f"/proc/self/task/{tid}/comm").read().strip()
        except OSError:
            continue  # a thread that ended meanwhile
        if name.startswith("twin-core-"):
            out[int(tid)] = name
    return out


def test_threads_start_with_the_handle_and_serve_every_call(twin, handle_with_cores):
    lib, _ = twin
    handle = handle_with_cores(POOL_CORES)
    started = pool_threads()
    assert {f"twin-core-{i}" for i in range(1, POOL_CORES)} <= set(started.values())
    for i in range(30):
        check(Call(SIDE_LEFT, UPPER, 300, 290, 1 - 0.5j, 0.5, seed=i), lib, handle)
    assert pool_threads() == started  # the same threads, none made per call


def timeslices(tids) -> int:
    """Times the kernel has put these threads on a CPU (field 3 of schedstat): a thread never woken adds none."""
    return sum(int(open(f"/proc/self/task/{tid}/schedstat").read().split()[2]) for tid in tids)


def test_a_small_call_runs_on_the_caller_and_a_large_one_wakes_the_pool(twin, handle_with_cores):
    """Under the serial threshold (16 MFLOP) the shares run one after another on the calling thread: no pool thread
    is woken (a woken one counts a timeslice). The large call is the control: the same check sees its wake-ups."""
    lib, _ = twin
    handle = handle_with_cores(4)
    threads = pool_threads()
    time.sleep(0.05)  # threads still spinning after an earlier call go to sleep
    before = timeslices(threads)
    for i in range(40):
        check(Call(SIDE_LEFT, UPPER, 64, 64, 1, 0, seed=i), lib, handle)  # 8 * 64^3 = 2.1 MFLOP, 4 tiles
    assert timeslices(threads) == before, "a small call woke pool threads"
    check(Call(SIDE_LEFT, UPPER, 300, 300, 1, 0, seed=1), lib, handle)  # 216 MFLOP
    assert timeslices(threads) > before


def test_a_core_count_gives_the_same_bytes_on_every_call(twin, handle_with_cores):
    lib, _ = twin
    for cores in (2, 3, 5, 8):
        handle = handle_with_cores(cores)
        first = None
        for _ in range(12):
            call = Call(SIDE_RIGHT, LOWER, 260, 140, 0.5 + 2j, -1 + 0.5j, pads=(3, 5, 7), seed=cores)
            check(call, lib, handle)
            first = call.result().tobytes() if first is None else first
            assert call.result().tobytes() == first, f"{cores} cores: a call's bytes differ from the first call's"


def general_sgemm() -> SgemmCall:
    """Sgemm's general path (alpha != 1): its cores meet at barriers, so each share needs a thread of its own."""
    return SgemmCall(OP_N, OP_N, 256, 256, 64, 2.0, 0.5, batch=2, seed=3)  # several tiles: several cores


def test_the_pool_works_in_a_forked_child(twin, handle_with_cores):
    """The parent's pool threads do not exist in a child; a child that used the parent's pool would wait forever at
    the general path's barrier (checked: a twin without the pid check hangs here)."""
    lib, _ = twin
    handle = handle_with_cores(4)
    check(Call(SIDE_LEFT, LOWER, 200, 150, 1, 0, seed=1), lib, handle)
    check_sgemm(general_sgemm(), lib, handle)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            check(Call(SIDE_LEFT, LOWER, 200, 150, 1, 0, seed=2), lib, handle)
            check_sgemm(general_sgemm(), lib, handle)
            code = 0 if pool_threads() else 3
        finally:
            os._exit(code)
    deadline = time.monotonic() + 120
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert done[0] == pid, "the forked child's call did not return in 120 s"
    assert os.waitstatus_to_exitcode(done[1]) == 0, "the child's call was wrong (1) or made no pool of its own (3)"


def test_callers_on_several_threads_take_turns(twin, handle_with_cores):
    lib, _ = twin
    handles = [handle_with_cores(3) for _ in range(3)]
    errors: list[str] = []

    def caller(index: int) -> None:
        for i in range(15):
            call = Call(SIDE_LEFT, UPPER, 150, 170, 0.25 + 1j, 1j, seed=100 * index + i)
            if call.run(lib, handles[index]) != Status.SUCCESS:
                errors.append(aclblas_lib.last_message(lib, handles[index]))
            elif not np.all(np.abs(call.result() - call.golden()) <= call.bound()):
                errors.append(f"thread {index} call {i}: wrong result")

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(len(handles))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a caller did not finish in 300 s"
    assert errors == []
