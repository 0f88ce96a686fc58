/*
 * Small kernels that prove the concurrent emulator's cross-core checks (emu/emu_launch.h) bite and stay quiet:
 * each scenario is a correct kernel or the same kernel with one synchronisation bug, run by
 * aclblasAscendCpuSelfTest(name) and judged by the fault it reports (tests/test_ascend_cpu_concurrency.py).
 * The operators' own kernels are the sample rows; these isolate one rule each, on a few bytes of GM.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "acl/acl.h"
#include "kernel_operator.h"
#include "tensor_api/tensor.h"

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
};

/* Fills `count` floats of UB with `value` and copies them to gm (UB -> GM, MTE3). */
__aicore__ inline void WriteTile(AscendC::TPipe& pipe, __gm__ float* gm, float value)
{
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> que;
    pipe.InitBuffer(que, 1, kBytes);
    AscendC::LocalTensor<float> t = que.AllocTensor<float>();
    AscendC::Duplicate(t, value, static_cast<int32_t>(kFloats));
    AscendC::GlobalTensor<float> g;
    g.SetGlobalBuffer(gm, kFloats);
    AscendC::DataCopyPad(g, t, AscendC::DataCopyExtParams{1, kBytes, 0, 0, 0});
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
    {"dcci", DCCI},
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
