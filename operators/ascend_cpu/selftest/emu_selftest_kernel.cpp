/*
 * Small kernels that prove the concurrent emulator's cross-core checks (emu/emu_launch.h) and one core's pipe hand-off
 * checks on UB (emu/emu_core.h Touch) bite and stay quiet:
 * each scenario is a correct kernel or the same kernel with one synchronisation bug, run by
 * aclblasAscendCpuSelfTest(name) and judged by the fault it reports (tests/backends/test_ascend_cpu_concurrency.py).
 * The operators' own kernels are the sample rows; these isolate one rule each, on a few bytes of GM.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "tensor_api/tensor.h"
#include "simt_api/asc_simt.h"

namespace {

namespace te = AscendC::Te;

constexpr uint32_t kFloats = 64;  // one 256-byte GM tile per writer
constexpr uint32_t kBytes = kFloats * sizeof(float);

enum Scenario : uint32_t {
    VECTOR_RACE,       // two vector cores: one writes a tile, the other reads it, no barrier
    VECTOR_SYNCALL,    // the same with SyncAll between them
    SYNCALL_SKIPPED,   // one vector core returns before SyncAll: the others wait forever
    MISSING_BARRIER,   // AIVs write a workspace tile, the AIC copies it to L1 without waiting for them
    CROSS_CORE,        // the same with CrossCoreSetFlag<2> on the AIVs and CrossCoreWaitFlag on the AIC
    DEADLOCK,          // AIC and AIVs each wait for the other's flag before setting their own
    UNPAIRED_SET,      // the AIC sets a flag its AIVs never wait for
    AIV_ONLY_FLAG,     // a cross-core flag in a KERNEL_TYPE_AIV_ONLY kernel
    MISSING_DCCI,      // the AIC re-reads a word the AIVs rewrote, through a stale DCache line
    DCCI,              // the same with DataCacheCleanAndInvalid before the re-read
    UB_TO_L1,          // AIV0 fills UB, copies it UB -> L1 of its AIC, CrossCoreSetFlag<2, PIPE_MTE3>; the AIC waits
                       // on PIPE_MTE1 and reads the panel L1 -> L0A
    UB_TO_L1_NO_FLAG,  // the same without the handshake: the AIC's read races the AIV's write (L1 race)
    UB_TO_L1_WAIT_PIPE,  // the AIC waits on PIPE_MTE2 and reads on MTE1 (a wait on the wrong pipe)
    UB_TO_L1_SET_PIPE,   // the AIV sets on PIPE_V after its MTE3 copy (a set on the wrong pipe)
    UB_TO_L1_NEVER_SET,  // the AIV never sets: the AIC waits forever (deadlock)
    UB_TO_L1_ODD,      // a copy of 10 floats (40 bytes, not a multiple of 32)
    L0C_TO_UB,         // the AIC Fixpipes L0C -> both AIVs' UB (dualDstCtl 1) and sets <2, PIPE_FIX>; the AIVs wait
                       // on PIPE_V and read it with SIMT
    L0C_TO_UB_NO_WAIT, // the same, the AIVs read without waiting (UB race)
    // one AIV, its own pipes on its UB (vector unit, DataCopyPad): each bug with its synchronised twin
    MULS_NO_FLAG,      // DataCopyPad GM->UB (MTE2), then Muls reads it (V) with no MTE2_V flag
    MULS_FLAG,         // the same with SetFlag/WaitFlag<MTE2_V>, then V_MTE3 before the copy out
    AXPY_NO_FLAG,      // Duplicate y, DataCopyPad GM->UB x, Axpy(y, x) with no MTE2_V flag
    COPY_OUT_NO_FLAG,  // Muls writes UB, DataCopyPad UB->GM (MTE3) reads it with no V_MTE3 flag
    COPY_IN_OVER_MULS, // DataCopyPad GM->UB overwrites the UB a Muls read, with no V_MTE2 flag
    DUP_BEFORE_COPY_OUT,  // Duplicate overwrites the UB a DataCopyPad UB->GM read, with no MTE3_V flag
    DUP_AFTER_COPY_OUT,   // the same with SetFlag/WaitFlag<MTE3_V>
    QUEUE,             // two tiles through VECIN/VECOUT queues (the Sgemm epilogue's pattern): EnQue/DeQue and
                       // FreeTensor/AllocTensor carry the hand-offs
    QUEUE_NO_ENQUE,    // the same, the input tile used without EnQue/DeQue (no MTE2 -> V hand-off)
    QUEUE_NO_FREE,     // the same, the input buffer reused without FreeTensor (no V -> MTE2 hand-off)
    // the AIC's Fixpipe L0C -> UB read by the vector unit, or copied on UB -> L1
    L0C_TO_UB_MULS,    // the AIVs wait on PIPE_V, then Muls the result in place
    L0C_TO_UB_MULS_NO_WAIT,    // the same without the wait (UB race)
    L0C_TO_UB_MULS_WAIT_PIPE,  // the wait on PIPE_MTE2, a Muls on V reads it into UB 512 (pipe error)
    L0C_TO_UB_COPY,    // the AIVs wait on PIPE_MTE3, then copy the result UB -> their AIC's L1
    L0C_TO_UB_COPY_NO_WAIT,    // the same without the wait (UB race)
    // unitFlag (asc-devkit UnitFlag.md): two accumulating Mmads (unitFlag 2, then 3), then one Fixpipe of L0C
    UNIT_FLAG_UB,      // Fixpipe L0C -> UB with unitFlag 3: the flag set by the last Mmad is read and reset
    UNIT_FLAG_UB_OFF,  // the same Fixpipe with unitFlag 0 (Csymm's epilogue before the fix): the flag stays set
    UNIT_FLAG_GM,      // Fixpipe L0C -> GM with unitFlag 3 (the arch35 GEMM's pattern)
    UNIT_FLAG_GM_OFF,  // the same Fixpipe with unitFlag 0
    UNIT_FLAG_NO_FINAL,  // both Mmads with unitFlag 2: the Fixpipe with unitFlag 3 waits for a flag never set
};

/* Fills `count` floats of UB with `value` and copies them to gm (UB -> GM, MTE3). */
__aicore__ inline void WriteTile(AscendC::TPipe& pipe, __gm__ float* gm, float value)
{
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> que;
    pipe.InitBuffer(que, 1, kBytes);
    AscendC::LocalTensor<float> t = que.AllocTensor<float>();
    AscendC::Duplicate(t, value, static_cast<int32_t>(kFloats));
    que.EnQue(t);  // V -> MTE3
    t = que.DeQue<float>();
    AscendC::GlobalTensor<float> g;
    g.SetGlobalBuffer(gm, kFloats);
    AscendC::DataCopyPad(g, t, AscendC::DataCopyExtParams{1, kBytes, 0, 0, 0});
    que.FreeTensor(t);
}

__aicore__ inline void ReadTile(AscendC::TPipe& pipe, __gm__ float* gm)
{
    AscendC::TQue<AscendC::TPosition::VECIN, 1> que;
    pipe.InitBuffer(que, 1, kBytes);
    AscendC::LocalTensor<float> t = que.AllocTensor<float>();
    AscendC::GlobalTensor<float> g;
    g.SetGlobalBuffer(gm, kFloats);
    AscendC::DataCopyPad(t, g, AscendC::DataCopyExtParams{1, kBytes, 0, 0, 0},
                         AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
}

/* The AIC's scalar read of word 0 of the tile (through its DCache), optionally after DataCacheCleanAndInvalid. */
__aicore__ inline float ScalarWord(__gm__ float* gm, bool dcci)
{
    AscendC::GlobalTensor<float> g;
    g.SetGlobalBuffer(gm, kFloats);
    if (dcci) {
        AscendC::DataCacheCleanAndInvalid<float, AscendC::CacheLine::SINGLE_CACHE_LINE,
                                          AscendC::DcciDst::CACHELINE_OUT>(g);
    }
    return g.GetValue(0);
}

/* Both AIVs' tiles (2 x kFloats, 16 rows of 8) GM -> L1 on the AIC. */
__aicore__ inline void CopyTilesToL1(__gm__ float* gm)
{
    const auto src = te::MakeTensor(te::MakeMemPtr<te::Location::GM>(gm),
                                    te::MakeFrameLayout<te::NDExtLayoutPtn, AscendC::Std::Int<8>>(16, 8));
    const auto l1 = te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(0),
                                   te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<8>>(16, 8));
    te::Copy(te::MakeCopy(te::CopyGM2L1{}), l1, src.Slice(te::MakeCoord(0, 0), te::MakeShape(16, 8)));
}

/* AIV0: 64 floats of UB (value 3) -> its AIC's L1 at 0, on MTE3 after V wrote them. */
__aicore__ inline void HandPanel(uint32_t scenario)
{
    AscendC::LocalTensor<float> ub(AscendC::TPosition::VECCALC, 0, kFloats);
    AscendC::LocalTensor<float> l1(AscendC::TPosition::A1, 0, kFloats);
    AscendC::Duplicate(ub, 3.0f, static_cast<int32_t>(kFloats));
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::DataCopy(l1, ub, scenario == UB_TO_L1_ODD ? 10u : kFloats);
    if (scenario == UB_TO_L1_SET_PIPE) {
        AscendC::CrossCoreSetFlag<2, PIPE_V>(3);
    } else if (scenario != UB_TO_L1_NO_FLAG && scenario != UB_TO_L1_NEVER_SET) {
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(3);
    }
}

/* The AIC: the panel (16 x 8 floats, NZ) L1 -> L0A on MTE1 after the AIVs' flag. */
__aicore__ inline void TakePanel(uint32_t scenario)
{
    if (scenario == UB_TO_L1_WAIT_PIPE) {
        AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(3);
    } else if (scenario != UB_TO_L1_NO_FLAG) {
        AscendC::CrossCoreWaitFlag<2, PIPE_MTE1>(3);
    }
    const auto l1 = te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(0),
                                   te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<8>>(16, 8));
    const auto l0a = te::MakeTensor(te::MakeMemPtr<te::Location::L0A, float>(0),
                                    te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<8>>(16, 8));
    te::Copy(te::MakeCopy(te::CopyL12L0A{}), l0a, l1.Slice(te::MakeCoord(0, 0), te::MakeShape(8, 8)));
}

constexpr AscendC::FixpipeConfig kToUb = {AscendC::CO2Layout::ROW_MAJOR, true};

/* The AIC: a 16 x 16 L0C region (zeros) -> rows 0-7 to AIV0's UB, 8-15 to AIV1's, then the flag on PIPE_FIX. */
__aicore__ inline void ResultToUb(uint8_t unitFlag = 0)
{
    AscendC::LocalTensor<float> l0c(AscendC::TPosition::CO1, 0, 256);
    AscendC::LocalTensor<float> ub(AscendC::TPosition::VECCALC, 0, 128);
    AscendC::FixpipeParamsArch3510<AscendC::CO2Layout::ROW_MAJOR> p;
    p.nSize = 16;
    p.mSize = 16;
    p.srcStride = 16;
    p.dstStride = 16;
    p.dualDstCtl = 1;
    p.unitFlag = unitFlag;
    AscendC::Fixpipe<float, float, kToUb>(ub, l0c, p);
    AscendC::CrossCoreSetFlag<2, PIPE_FIX>(4);
}

/* The AIC: the 16 x 16 L0C result at 0 from two accumulating 16 x 16 x 8 Mmads of zero operands (L1 -> L0A/L0B),
 * unitFlag 2 then `last` (UnitFlag.md's K loop: 2 on every Mmad but the last, 3 on the last), handed to PIPE_FIX. */
__aicore__ inline void AccumulateWithUnitFlag(uint8_t last)
{
    const auto l1a = te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(0),
                                    te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<8>>(16, 8));
    const auto l1b = te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(512),
                                    te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<8>>(8, 16));
    const auto l0a = te::MakeTensor(te::MakeMemPtr<te::Location::L0A, float>(0),
                                    te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<8>>(16, 8));
    const auto l0b = te::MakeTensor(te::MakeMemPtr<te::Location::L0B, float>(0),
                                    te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<8>>(8, 16));
    te::Copy(te::MakeCopy(te::CopyL12L0A{}), l0a, l1a.Slice(te::MakeCoord(0, 0), te::MakeShape(16, 8)));
    te::Copy(te::MakeCopy(te::CopyL12L0B{}), l0b, l1b.Slice(te::MakeCoord(0, 0), te::MakeShape(8, 16)));
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(0);
    auto l0c = te::MakeTensor(te::MakeMemPtr<te::Location::L0C, float>(0),
                              te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<16>>(16, 16));
    te::Mmad(te::MmadAtom<te::MmadTraits<te::MmadOperation>>{}.with(te::MmadParams{16, 16, 8, 2, true}), l0c, l0a,
             l0b);
    AscendC::PipeBarrier<PIPE_M>();  // (m/16)*(n/16) = 1 < 10: accumulating Mmads need the barrier (Mmad doc)
    te::Mmad(te::MmadAtom<te::MmadTraits<te::MmadOperation>>{}.with(te::MmadParams{16, 16, 8, last, false}), l0c, l0a,
             l0b);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(0);
}

/* The AIC: the L0C result's first 8 columns -> GM (16 rows of 8), Fixpipe with `unitFlag`. */
__aicore__ inline void ResultToGm(__gm__ float* gm, uint8_t unitFlag)
{
    const auto out = te::MakeTensor(te::MakeMemPtr<te::Location::GM>(gm),
                                    te::MakeFrameLayout<te::NDExtLayoutPtn, AscendC::Std::Int<8>>(16, 8));
    const auto l0c = te::MakeTensor(te::MakeMemPtr<te::Location::L0C, float>(0),
                                    te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<16>>(16, 16));
    te::MakeCopy(te::CopyL0C2GM{}).Call(out.Slice(te::MakeCoord(0, 0), te::MakeShape(16, 8)), l0c,
                                        te::FixpipeParams{unitFlag});
}

__simt_vf__ __aicore__ LAUNCH_BOUND(64) inline void SimtScale(__ubuf__ float* ub)
{
    for (uint32_t i = threadIdx.x; i < 128; i += blockDim.x) {
        ub[i] = 2.0f * ub[i];
    }
}

/* Each AIV: its half of the result (8 rows of 16) read and scaled in UB by SIMT threads or the vector unit, or
 * copied UB -> L1 (AIV s to L1 bytes [512 s, 512 s + 512)). */
__aicore__ inline void UseResult(uint32_t scenario)
{
    const bool copies = scenario == L0C_TO_UB_COPY || scenario == L0C_TO_UB_COPY_NO_WAIT;
    if (scenario == L0C_TO_UB_MULS_WAIT_PIPE) {
        AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(4);
    } else if (scenario == L0C_TO_UB_COPY) {
        AscendC::CrossCoreWaitFlag<2, PIPE_MTE3>(4);
    } else if (scenario != L0C_TO_UB_NO_WAIT && scenario != L0C_TO_UB_MULS_NO_WAIT && !copies) {
        AscendC::CrossCoreWaitFlag<2, PIPE_V>(4);
    }
    AscendC::LocalTensor<float> ub(AscendC::TPosition::VECCALC, 0, 128);
    if (scenario == L0C_TO_UB || scenario == L0C_TO_UB_NO_WAIT) {
        asc_vf_call<SimtScale>(dim3{64, 1, 1}, ub.GetPhyAddr());
    } else if (copies) {
        const uint32_t at = static_cast<uint32_t>(AscendC::GetSubBlockIdx()) * 512;
        AscendC::DataCopy(AscendC::LocalTensor<float>(AscendC::TPosition::A1, at, 128), ub, 128u);
    } else if (scenario == L0C_TO_UB_MULS_WAIT_PIPE) {
        AscendC::Muls(AscendC::LocalTensor<float>(AscendC::TPosition::VECCALC, 512, 128), ub, 2.0f, 128);
    } else {
        AscendC::Muls(ub, ub, 2.0f, 128);  // in place
    }
}

/* One AIV on its own UB: tile x at UB 0 and y at UB kBytes, GM words [0, kFloats) in, [kFloats, 2 kFloats) out. */
__aicore__ inline void UbPipes(__gm__ float* gm, uint32_t scenario)
{
    using AscendC::HardEvent;
    AscendC::LocalTensor<float> x(AscendC::TPosition::VECCALC, 0, kFloats);
    AscendC::LocalTensor<float> y(AscendC::TPosition::VECCALC, kBytes, kFloats);
    AscendC::GlobalTensor<float> in;
    AscendC::GlobalTensor<float> out;
    in.SetGlobalBuffer(gm, kFloats);
    out.SetGlobalBuffer(gm + kFloats, kFloats);
    const AscendC::DataCopyExtParams tile{1, kBytes, 0, 0, 0};
    const AscendC::DataCopyPadExtParams<float> noPad{false, 0, 0, 0.0f};
    const int32_t n = static_cast<int32_t>(kFloats);
    if (scenario == AXPY_NO_FLAG) {
        AscendC::Duplicate(y, 1.0f, n);
        AscendC::DataCopyPad(x, in, tile, noPad);
        AscendC::Axpy(y, x, 2.0f, n);
        return;
    }
    if (scenario == DUP_BEFORE_COPY_OUT || scenario == DUP_AFTER_COPY_OUT) {
        AscendC::Duplicate(y, 1.0f, n);
        AscendC::SetFlag<HardEvent::V_MTE3>(0);
        AscendC::WaitFlag<HardEvent::V_MTE3>(0);
        AscendC::DataCopyPad(out, y, tile);
        if (scenario == DUP_AFTER_COPY_OUT) {
            AscendC::SetFlag<HardEvent::MTE3_V>(0);
            AscendC::WaitFlag<HardEvent::MTE3_V>(0);
        }
        AscendC::Duplicate(y, 2.0f, n);  // the next tile's value
        return;
    }
    AscendC::DataCopyPad(x, in, tile, noPad);
    if (scenario != MULS_NO_FLAG) {
        AscendC::SetFlag<HardEvent::MTE2_V>(0);
        AscendC::WaitFlag<HardEvent::MTE2_V>(0);
    }
    AscendC::Muls(y, x, 2.0f, n);
    if (scenario == COPY_IN_OVER_MULS) {
        AscendC::DataCopyPad(x, in, tile, noPad);  // the next tile into x while V may still read it
        return;
    }
    if (scenario != COPY_OUT_NO_FLAG) {
        AscendC::SetFlag<HardEvent::V_MTE3>(0);
        AscendC::WaitFlag<HardEvent::V_MTE3>(0);
    }
    AscendC::DataCopyPad(out, y, tile);
}

/* Two tiles GM -> UB -> Muls -> UB -> GM through queues of one buffer each: the second tile reuses both buffers. */
__aicore__ inline void UbQueues(__gm__ float* gm, uint32_t scenario)
{
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQue;
    pipe.InitBuffer(inQue, 1, kBytes);
    pipe.InitBuffer(outQue, 1, kBytes);
    AscendC::GlobalTensor<float> g;
    g.SetGlobalBuffer(gm, 2 * kFloats);
    const AscendC::DataCopyExtParams tile{1, kBytes, 0, 0, 0};
    for (uint32_t i = 0; i < 2; ++i) {
        AscendC::LocalTensor<float> x = inQue.AllocTensor<float>();
        AscendC::DataCopyPad(x, g[i * kFloats], tile, AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
        if (scenario != QUEUE_NO_ENQUE) {
            inQue.EnQue(x);
            x = inQue.DeQue<float>();
        }
        AscendC::LocalTensor<float> y = outQue.AllocTensor<float>();
        AscendC::Muls(y, x, 2.0f, static_cast<int32_t>(kFloats));
        if (scenario != QUEUE_NO_FREE) {
            inQue.FreeTensor(x);
        }
        outQue.EnQue(y);
        y = outQue.DeQue<float>();
        AscendC::DataCopyPad(g[i * kFloats], y, tile);
        outQue.FreeTensor(y);
    }
}

__aicore__ inline void Check(bool ok, const char* what)
{
    if (!ok) {
        ascend_cpu::Raise(std::string("self-test: ") + what);
    }
}

}  // namespace

extern "C" __global__ __aicore__ void emu_selftest_vector(GM_ADDR gm, uint32_t scenario)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIV_1_0);
    AscendC::TPipe pipe;
    auto* tile = reinterpret_cast<__gm__ float*>(gm);
    if (AscendC::GetBlockIdx() == 0) {
        WriteTile(pipe, tile, 1.0f);
    }
    if (scenario == SYNCALL_SKIPPED && AscendC::GetBlockIdx() == 1) {
        return;
    }
    if (scenario != VECTOR_RACE) {
        AscendC::SyncAll<true>();
    }
    if (AscendC::GetBlockIdx() == 1) {
        ReadTile(pipe, tile);
    }
}

extern "C" __global__ __aicore__ void emu_selftest_mix(GM_ADDR gm, uint32_t scenario)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    auto* tiles = reinterpret_cast<__gm__ float*>(gm);
    const bool dcciScenario = scenario == MISSING_DCCI || scenario == DCCI;
    if (scenario >= UB_TO_L1 && scenario <= UB_TO_L1_ODD) {
        if (ASCEND_IS_AIV) {
            if (AscendC::GetSubBlockIdx() == 0) {
                HandPanel(scenario);
            } else if (scenario != UB_TO_L1_NO_FLAG && scenario != UB_TO_L1_NEVER_SET) {
                AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(3);  // mode 2: the AIC passes once both AIVs have set
            }
        } else {
            TakePanel(scenario);
        }
        return;
    }
    if (scenario >= UNIT_FLAG_UB) {
        const bool ub = scenario == UNIT_FLAG_UB || scenario == UNIT_FLAG_UB_OFF || scenario == UNIT_FLAG_NO_FINAL;
        const bool off = scenario == UNIT_FLAG_UB_OFF || scenario == UNIT_FLAG_GM_OFF;
        if (ASCEND_IS_AIV) {
            if (ub) {
                UseResult(L0C_TO_UB);
            }
            return;
        }
        AccumulateWithUnitFlag(scenario == UNIT_FLAG_NO_FINAL ? 2 : 3);
        if (ub) {
            ResultToUb(off ? 0 : 3);
        } else {
            ResultToGm(tiles, off ? 0 : 3);
        }
        return;
    }
    if (scenario == L0C_TO_UB || scenario == L0C_TO_UB_NO_WAIT || scenario >= L0C_TO_UB_MULS) {
        if (ASCEND_IS_AIV) {
            UseResult(scenario);
        } else {
            ResultToUb();
        }
        return;
    }
    if (ASCEND_IS_AIV) {
        AscendC::TPipe pipe;
        if (scenario == DEADLOCK || dcciScenario) {
            AscendC::CrossCoreWaitFlag(2);
        }
        WriteTile(pipe, tiles + AscendC::GetSubBlockIdx() * kFloats, 2.0f);
        if (scenario != MISSING_BARRIER) {
            AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(1);
        }
        return;
    }
    if (dcciScenario) {
        Check(ScalarWord(tiles, false) == 0.0f, "the tile starts zeroed");
        AscendC::CrossCoreSetFlag<2, PIPE_MTE2>(2);  // the AIVs may now rewrite the word
    }
    if (scenario == DEADLOCK) {
        AscendC::CrossCoreWaitFlag(1);
        AscendC::CrossCoreSetFlag<2, PIPE_MTE2>(2);
        return;
    }
    if (scenario == UNPAIRED_SET) {
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(5);
    }
    if (scenario != MISSING_BARRIER) {
        AscendC::CrossCoreWaitFlag(1);
    }
    if (dcciScenario) {
        Check(ScalarWord(tiles, scenario == DCCI) == 2.0f, "the AIC reads what the AIVs wrote");
        return;
    }
    CopyTilesToL1(tiles);
}

extern "C" __global__ __aicore__ void emu_selftest_ub(GM_ADDR gm, uint32_t scenario)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    auto* tiles = reinterpret_cast<__gm__ float*>(gm);
    if (scenario >= QUEUE) {
        UbQueues(tiles, scenario);
    } else {
        UbPipes(tiles, scenario);
    }
}

extern "C" __global__ __aicore__ void emu_selftest_aiv_only(GM_ADDR, uint32_t)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::CrossCoreSetFlag<0, PIPE_MTE3>(0);
}

namespace {

struct Named {
    const char* name;
    Scenario scenario;
};

constexpr Named kScenarios[] = {
    {"vector-race", VECTOR_RACE}, {"vector-syncall", VECTOR_SYNCALL}, {"syncall-skipped", SYNCALL_SKIPPED},
    {"missing-barrier", MISSING_BARRIER}, {"cross-core", CROSS_CORE}, {"deadlock", DEADLOCK},
    {"unpaired-set", UNPAIRED_SET}, {"aiv-only-flag", AIV_ONLY_FLAG}, {"missing-dcci", MISSING_DCCI},
    {"dcci", DCCI}, {"ub-to-l1", UB_TO_L1}, {"ub-to-l1-no-flag", UB_TO_L1_NO_FLAG},
    {"ub-to-l1-wait-pipe", UB_TO_L1_WAIT_PIPE}, {"ub-to-l1-set-pipe", UB_TO_L1_SET_PIPE},
    {"ub-to-l1-never-set", UB_TO_L1_NEVER_SET}, {"ub-to-l1-odd", UB_TO_L1_ODD}, {"l0c-to-ub", L0C_TO_UB},
    {"l0c-to-ub-no-wait", L0C_TO_UB_NO_WAIT}, {"muls-no-flag", MULS_NO_FLAG}, {"muls-flag", MULS_FLAG},
    {"axpy-no-flag", AXPY_NO_FLAG}, {"copy-out-no-flag", COPY_OUT_NO_FLAG}, {"copy-in-over-muls", COPY_IN_OVER_MULS},
    {"duplicate-before-copy-out", DUP_BEFORE_COPY_OUT}, {"duplicate-after-copy-out", DUP_AFTER_COPY_OUT},
    {"queue", QUEUE}, {"queue-no-enque", QUEUE_NO_ENQUE}, {"queue-no-free", QUEUE_NO_FREE},
    {"l0c-to-ub-muls", L0C_TO_UB_MULS}, {"l0c-to-ub-muls-no-wait", L0C_TO_UB_MULS_NO_WAIT},
    {"l0c-to-ub-muls-wait-pipe", L0C_TO_UB_MULS_WAIT_PIPE}, {"l0c-to-ub-copy", L0C_TO_UB_COPY},
    {"l0c-to-ub-copy-no-wait", L0C_TO_UB_COPY_NO_WAIT}, {"unit-flag-ub", UNIT_FLAG_UB},
    {"unit-flag-ub-off", UNIT_FLAG_UB_OFF}, {"unit-flag-gm", UNIT_FLAG_GM}, {"unit-flag-gm-off", UNIT_FLAG_GM_OFF},
    {"unit-flag-no-final", UNIT_FLAG_NO_FINAL},
};

}  // namespace

/* Runs scenario `name` on a fresh zeroed GM buffer; returns 0 when the launch passed, 1 with the fault's message
 * in msg (cap bytes), -1 for an unknown name. */
extern "C" int aclblasAscendCpuSelfTest(const char* name, char* msg, int cap)
{
    const Named* found = nullptr;
    for (const Named& n : kScenarios) {
        if (std::strcmp(n.name, name) == 0) {
            found = &n;
        }
    }
    if (found == nullptr || cap <= 0) {
        return -1;
    }
    ascend_cpu::TakeFault();
    void* gm = nullptr;
    aclrtMalloc(&gm, 2 * kBytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemsetAsync(gm, 2 * kBytes, 0, 2 * kBytes, nullptr);
    const uint32_t s = found->scenario;
    auto* p = static_cast<uint8_t*>(gm);
    if (s <= SYNCALL_SKIPPED) {
        emu_selftest_vector<<<4, nullptr, nullptr>>>(p, s);
    } else if (s >= MULS_NO_FLAG && s <= QUEUE_NO_FREE) {
        emu_selftest_ub<<<1, nullptr, nullptr>>>(p, s);
    } else if (s == AIV_ONLY_FLAG) {
        emu_selftest_aiv_only<<<2, nullptr, nullptr>>>(p, s);
    } else {
        emu_selftest_mix<<<1, nullptr, nullptr>>>(p, s);
    }
    aclrtFree(gm);
    const std::string fault = ascend_cpu::TakeFault();
    std::snprintf(msg, static_cast<size_t>(cap), "%s", fault.c_str());
    return fault.empty() ? 0 : 1;
}
