"""The ascend-cpu emulator runs a launch's cores as concurrent threads: each cross-core check (deadlock, a GM race,
a missing barrier, a missing dcci, an unpaired or misplaced cross-core flag), each hand-off between one core's
pipes on its UB (vector unit, DataCopyPad, queues) and the Mmad/Fixpipe unitFlag contract (asc-devkit UnitFlag.md)
must fail on a kernel with that bug,
naming kernel, core and flag or address, and stay quiet on the same kernel synchronised as asc-devkit documents.
The scenarios are the emulator's self-test kernels (`operators/ascend_cpu/selftest/emu_selftest_kernel.cpp`); the
real kernels' sample rows and their negative controls are in test_ascend_cpu.py.
"""
from __future__ import annotations

import re

import pytest

from harness.backends import ascend_cpu

#: scenario -> what its fault must say ("" = the launch passes)
SCENARIOS = {
    "vector-race": ["emu_selftest_vector", "AIV block", "GM race on bytes [0x_, 0x_)", "DataCopyPad UB->GM"],
    "vector-syncall": [],
    "syncall-skipped": ["emu_selftest_vector", "deadlock: every live core", "SyncAll<true>"],
    "missing-barrier": ["emu_selftest_mix", "GM race on bytes [0x_, 0x_)", "Copy GM->L1", "AIV block"],
    "cross-core": [],
    "deadlock": ["emu_selftest_mix", "deadlock: every live core", "AIC block 0 waits for CrossCoreWaitFlag<0, PIPE_S>(1)",
                 "AIV block 1 waits for CrossCoreWaitFlag<0, PIPE_S>(2)"],
    "unpaired-set": ["emu_selftest_mix", "flag id 5 never waited for"],
    "aiv-only-flag": ["emu_selftest_aiv_only", "starts no cross-core scheduler"],
    "missing-dcci": ["emu_selftest_mix", "AIC block 0", "needs DataCacheCleanAndInvalid"],
    "dcci": [],
    # UB -> L1 hand-over and Fixpipe L0C -> UB (the on-chip Csymm design): the synchronised twins pass, each bug
    # is named
    "ub-to-l1": [],
    "ub-to-l1-no-flag": ["emu_selftest_mix", "L1 race on bytes [0, 0x_)", "AIC block 0's L1",
                         "AIC block 0 (Copy L1->L0A, read on PIPE_MTE1)", "AIV block 0 (DataCopy UB->L1, write on PIPE_MTE3)",
                         "no cross-core flag ordering them"],
    "ub-to-l1-wait-pipe": ["emu_selftest_mix", "L1 race on bytes", "pipe error",
                           "received AIV block 0's cross-core flag on another pipe than PIPE_MTE1"],
    "ub-to-l1-set-pipe": ["emu_selftest_mix", "AIV block 0", "CrossCoreSetFlag<2, PIPE_V>(3): pipe error",
                          "DataCopy UB->L1 it publishes was issued on PIPE_MTE3"],
    "ub-to-l1-never-set": ["emu_selftest_mix", "deadlock: every live core",
                           "AIC block 0 waits for CrossCoreWaitFlag<2, PIPE_MTE1>(3)"],
    "ub-to-l1-odd": ["emu_selftest_mix", "AIV block 0", "DataCopy UB->L1: 10 elements are 40 bytes, not a multiple of 32"],
    "l0c-to-ub": [],
    "l0c-to-ub-no-wait": ["emu_selftest_mix", "UB race on bytes [0, 0x_)", "AIV block 0's UB",
                          "AIC block 0 (Fixpipe L0C->UB, write on PIPE_FIX)", "AIV block 0 (SIMT on UB, write on PIPE_V)"],
    # One AIV's own pipes on its UB: the vector unit (PIPE_V) against DataCopyPad GM->UB (MTE2) and UB->GM (MTE3);
    # the intra-core message names both calls and pipes and the missing SetFlag/WaitFlag
    "muls-no-flag": ["emu_selftest_ub", "AIV block 0", "Muls: pipe V reads UB [0, 256) that pipe MTE2 written "
                     "(DataCopyPad GM->UB)", "no SetFlag<MTE2_V>/WaitFlag since"],
    "muls-flag": [],
    "axpy-no-flag": ["emu_selftest_ub", "AIV block 0", "Axpy: pipe V reads UB [0, 256) that pipe MTE2 written "
                     "(DataCopyPad GM->UB)", "no SetFlag<MTE2_V>/WaitFlag since"],
    "copy-out-no-flag": ["emu_selftest_ub", "AIV block 0", "DataCopyPad UB->GM: pipe MTE3 reads UB [256, 512) that "
                         "pipe V written (Muls)", "no SetFlag<V_MTE3>/WaitFlag since"],
    "copy-in-over-muls": ["emu_selftest_ub", "AIV block 0", "DataCopyPad GM->UB: pipe MTE2 overwrites UB [0, 256) "
                          "that pipe V read (Muls)", "no SetFlag<V_MTE2>/WaitFlag since"],
    "duplicate-before-copy-out": ["emu_selftest_ub", "AIV block 0", "Duplicate: pipe V overwrites UB [256, 512) that "
                                  "pipe MTE3 read (DataCopyPad UB->GM)", "no SetFlag<MTE3_V>/WaitFlag since"],
    "duplicate-after-copy-out": [],
    # The VECIN/VECOUT queues carry those hand-offs (EnQue -> DeQue, FreeTensor -> AllocTensor), as the Sgemm
    # epilogue relies on; a skipped call leaves the access unsignalled
    "queue": [],
    "queue-no-enque": ["emu_selftest_ub", "AIV block 0", "Muls: pipe V reads UB [0, 256) that pipe MTE2 written "
                       "(DataCopyPad GM->UB)", "no SetFlag<MTE2_V>/WaitFlag since"],
    "queue-no-free": ["emu_selftest_ub", "AIV block 0", "DataCopyPad GM->UB: pipe MTE2 overwrites UB [0, 256) that "
                      "pipe V read (Muls)", "no SetFlag<V_MTE2>/WaitFlag since"],
    # The AIC's Fixpipe into an AIV's UB read by the vector unit: the cross-core flag must reach PIPE_V
    "l0c-to-ub-muls": [],
    "l0c-to-ub-muls-no-wait": ["emu_selftest_mix", "UB race on bytes [0, 0x_)", "AIV block 0's UB",
                               "AIC block 0 (Fixpipe L0C->UB, write on PIPE_FIX)", "AIV block 0 (Muls, write on PIPE_V)",
                               "no cross-core flag ordering them"],
    "l0c-to-ub-muls-wait-pipe": ["emu_selftest_mix", "UB race on bytes [0, 0x_)", "AIV block 0's UB",
                                 "AIV block 0 (Muls, read on PIPE_V)", "pipe error",
                                 "received AIC block 0's cross-core flag on another pipe than PIPE_V"],
    "l0c-to-ub-copy": [],
    "l0c-to-ub-copy-no-wait": ["emu_selftest_mix", "UB race on bytes [0, 0x_)", "AIV block 0's UB",
                               "AIC block 0 (Fixpipe L0C->UB, write on PIPE_FIX)",
                               "AIV block 0 (DataCopy UB->L1, read on PIPE_MTE3)", "no cross-core flag ordering them"],
    # unitFlag (asc-devkit TensorAPI UnitFlag.md, Mmad.md): Mmads with 2 then 3 need a Fixpipe with 2/3 after them
    "unit-flag-ub": [],
    "unit-flag-ub-off": ["emu_selftest_mix", "AIC block 0", "Fixpipe L0C->UB with unitFlag 0 reads L0C block [0, 512)",
                         "marked for a Fixpipe with unitFlag 2/3", "must enable unitFlag together"],
    "unit-flag-gm": [],
    "unit-flag-gm-off": ["emu_selftest_mix", "AIC block 0", "Fixpipe L0C->GM with unitFlag 0 reads L0C block [0, 512)",
                         "must enable unitFlag together"],
    "unit-flag-no-final": ["emu_selftest_mix", "AIC block 0", "Fixpipe L0C->UB with unitFlag 3 waits until L0C block "
                           "[0, 512) is finished by an Mmad with unitFlag 3", "the device hangs"],
}


@pytest.fixture(scope="module")
def device():
    backend = ascend_cpu.open()
    yield backend
    backend.close()


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_cross_core_check(device, scenario):
    expected = SCENARIOS[scenario]
    # three runs: the threads interleave differently each time, the verdict and its message must not (only the GM
    # buffer's address changes from run to run)
    faults = {re.sub(r"0x[0-9a-f]+", "0x_", device.self_test(scenario)) for _ in range(3)}
    assert len(faults) == 1, faults
    fault = faults.pop()
    if not expected:
        assert fault == ""
    for part in expected:
        assert part in fault, fault


def test_unknown_scenario_is_refused(device):
    with pytest.raises(ValueError, match="no emulator self-test"):
        device.self_test("no-such-scenario")
