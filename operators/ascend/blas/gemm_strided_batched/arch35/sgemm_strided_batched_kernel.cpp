/*
 * aclblasSgemmStridedBatched kernels for arch35 (Ascend 950PR, dav-3510), after
 * seeds/sgemm_strided_batched_design.txt:
 *   1. gemm    (AIC only, tensor_api): the shared cube pipeline (common/arch35_cube_gemm.h) over serpentine tiles,
 *              K-chunk accumulation in L0C; column-major swap, so the row-major engine computes C^T. One launch
 *              can run several batches: its task grid is batch x tile (batch = task / tileCount, as ops-blas's
 *              arch35 gemm_batched folds batches), so every cube core works whatever the batch size.
 *   2. combine (AIV only, SIMD basic API): C = alpha * temp + beta * C after a general-path GEMM.
 *   2b. fused (MIX_AIC_1_2): the general path of every batch in one launch when no two C_i overlap: each cube
 *      writes its tasks' tiles into two workspace slots, its two vector cores combine each into C_batch
 *      (CrossCoreSetFlag/WaitFlag mode 2: tile ready -> AIVs, slot free -> AIC).
 *   3. scale   (AIV only, SIMD basic API): C = beta * C when k == 0 or alpha == 0, every disjoint C_i in one launch.
 *   4. nan_guard (MIX_AIV_1_0, SIMT), the call's first launch: NaN never enters Mmad (common/arch35_nan_guard.h):
 *      the scan stores the call's epoch in the flag on NaN in any A_i or B_i (no memset before it); SyncAll<true>;
 *      then every vector core reads the flag and, when it holds the epoch, computes its columns of every C_i in
 *      plain fp32 (the fallback folded into the guard's launch); gemm, fused and combine then do nothing.
 * The host (sgemm_strided_batched_host.cpp) launches the guard, then one gemm or fused launch for every batch
 * (disjoint C_i): two launches per call.
 */
#include <cstdint>
#include <type_traits>

#include "kernel_operator.h"
#include "simt_api/asc_simt.h"
#include "tensor_api/tensor.h"
#include "arch35_cube_gemm.h"
#include "arch35_nan_guard.h"
#include "sgemm_strided_batched_kernel.h"

namespace te = AscendC::Te;

namespace {

using arch35::Min;

/* GM view of an engine operand of `rows` x `cols`, leading dimension ld. NDExt reads it row-major, DNExt
 * column-major: the layout that makes op(X)^T out of column-major X. */
template <typename Ptn>
__aicore__ inline auto SbOperandLayout(uint32_t rows, uint32_t cols, uint32_t ld)
{
    if constexpr (std::is_same_v<Ptn, te::DNExtLayoutPtn>) {
        return arch35::ColumnMajorLayout(cols, ld);
    } else {
        return arch35::RowMajorLayout(rows, ld);
    }
}

/* Task `task` of the batchCount x tileCount grid: its batch and its tile of the serpentine divM x divN walk (the
 * plan's SerpentineTile + TileOfCore). */
struct SbTask {
    int64_t batch;
    uint32_t row0;
    uint32_t col0;
    uint32_t rows;
    uint32_t cols;
};

__aicore__ inline SbTask TaskOf(const SgemmStridedBatchedGemmTilingData& t, uint32_t task)
{
    const uint32_t tile = task % t.tileCount;
    const uint32_t r = tile / t.divN;
    const uint32_t c = (r % 2 == 0) ? tile % t.divN : t.divN - 1 - tile % t.divN;
    SbTask k{task / t.tileCount, r * t.tileM, c * t.tileN, 0, 0};
    k.rows = Min(t.tileM, t.mEff - k.row0);
    k.cols = Min(t.tileN, t.nEff - k.col0);
    return k;
}

constexpr int64_t kFloatBytes = sizeof(float);  // signed: strides may be negative

/* L0C = the task's engine tile over every K chunk (op(B_batch)^T * op(A_batch)^T). */
template <typename LeftPtn, typename RightPtn>
__aicore__ inline void SbAccumulate(GM_ADDR gmA, GM_ADDR gmB, const SgemmStridedBatchedGemmTilingData& t,
                                    const SbTask& k, arch35::PingPong& pp)
{
    decltype(arch35::GmTensor(gmB, SbOperandLayout<LeftPtn>(0, 0, 0))) left[1] = {arch35::GmTensor(
        gmB + k.batch * t.strideLeft * kFloatBytes, SbOperandLayout<LeftPtn>(t.mEff, t.kEff, t.ldLeft))};
    decltype(arch35::GmTensor(gmA, SbOperandLayout<RightPtn>(0, 0, 0))) right[1] = {arch35::GmTensor(
        gmA + k.batch * t.strideRight * kFloatBytes, SbOperandLayout<RightPtn>(t.kEff, t.nEff, t.ldRight))};
    arch35::AcquireL0C(pp);
    arch35::Accumulate(left, right, t.kEff, t.tileK, k.row0, k.col0, k.rows, k.cols, true, true, pp);
}

/* The engine on one core: tasks core, core + blockNum, ... of the batch x tile grid, each written by Fixpipe. */
template <typename LeftPtn, typename RightPtn>
__aicore__ inline void SbGemm(GM_ADDR gmA, GM_ADDR gmB, GM_ADDR gmOut, GM_ADDR nanFlag,
                              const SgemmStridedBatchedGemmTilingData& t)
{
    if (arch35::NanSeen(nanFlag, t.nanEpoch)) {
        return;  // sgemm_strided_batched_nan_fallback computes C instead
    }
    arch35::CubeBegin();
    arch35::PingPong pp;
    const uint32_t tasks = t.tileCount * t.batchCount;
    for (uint32_t task = AscendC::GetBlockIdx(); task < tasks; task += AscendC::GetBlockNum()) {
        const SbTask k = TaskOf(t, task);
        SbAccumulate<LeftPtn, RightPtn>(gmA, gmB, t, k, pp);
        auto out = arch35::GmTensor(gmOut + k.batch * t.strideOut * kFloatBytes,
                                    arch35::RowMajorLayout(t.mEff, t.ldOut));
        arch35::Fixpipe(out, k.row0, k.col0, k.rows, k.cols, pp);
    }
    arch35::CubeEnd();
}

/* Vector epilogue over columns of C: per column, UB tiles of SGEMM_SB_VEC_TILE rows through double-buffered queues. */
class SbEpilogue {
public:
    __aicore__ inline void Init(GM_ADDR temp, GM_ADDR c, const SgemmStridedBatchedEpilogueTilingData& t,
                                AscendC::TPipe* pipe)
    {
        t_ = t;
        Bind(temp, static_cast<uint64_t>(t.tempRowStride) * t.n, c);
        pipe->InitBuffer(tempQue_, 2, SGEMM_SB_VEC_TILE * sizeof(float));
        pipe->InitBuffer(cQue_, 2, SGEMM_SB_VEC_TILE * sizeof(float));
        pipe->InitBuffer(outQue_, 2, SGEMM_SB_VEC_TILE * sizeof(float));
    }

    /* The temp (tempFloats of it) and the C_i (ldc * n floats) the next calls read and write. */
    __aicore__ inline void Bind(GM_ADDR temp, uint64_t tempFloats, GM_ADDR c)
    {
        tempGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(temp), tempFloats);
        cGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), static_cast<uint64_t>(t_.ldc) * t_.n);
    }

    /* combine: C = alpha * temp (+ beta * C when readC). */
    __aicore__ inline void Combine()
    {
        ForEachTile([this](uint64_t tempOff, uint64_t cOff, uint32_t cnt) { CombineRange(tempOff, cOff, cnt); });
    }

    /* C[cOff, cOff + cnt) = alpha * temp[tempOff, ...) (+ beta * C), in UB tiles. */
    __aicore__ inline void CombineRange(uint64_t tempOff, uint64_t cOff, uint32_t cnt)
    {
        for (uint32_t done = 0; done < cnt; done += SGEMM_SB_VEC_TILE) {
            const uint32_t part = Min(SGEMM_SB_VEC_TILE, cnt - done);
            AscendC::LocalTensor<float> temp = Load(tempQue_, tempGm_, tempOff + done, part);
            AscendC::LocalTensor<float> out = outQue_.AllocTensor<float>();
            AscendC::Muls(out, temp, t_.alpha, static_cast<int32_t>(part));
            tempQue_.FreeTensor(temp);
            if (t_.readC != 0) {
                AscendC::LocalTensor<float> cOld = Load(cQue_, cGm_, cOff + done, part);
                AscendC::Axpy(out, cOld, t_.beta, static_cast<int32_t>(part));
                cQue_.FreeTensor(cOld);
            }
            Store(out, cOff + done, part);
        }
    }

    /* scale: C = beta * C; beta == 0 writes zeros without reading C (NaN/Inf already in C must not survive). */
    __aicore__ inline void Scale()
    {
        ForEachTile([this](uint64_t, uint64_t cOff, uint32_t cnt) {
            AscendC::LocalTensor<float> out = outQue_.AllocTensor<float>();
            if (t_.readC != 0) {
                AscendC::LocalTensor<float> cOld = Load(cQue_, cGm_, cOff, cnt);
                AscendC::Muls(out, cOld, t_.beta, static_cast<int32_t>(cnt));
                cQue_.FreeTensor(cOld);
            } else {
                AscendC::Duplicate(out, 0.0f, static_cast<int32_t>(cnt));
            }
            Store(out, cOff, cnt);
        });
    }

private:
    template <typename Body>
    __aicore__ inline void ForEachTile(Body body)
    {
        const uint32_t col0 = AscendC::GetBlockIdx() * t_.colsPerCore;
        const uint32_t col1 = Min(col0 + t_.colsPerCore, t_.n);
        for (uint32_t col = col0; col < col1; ++col) {
            for (uint32_t row = 0; row < t_.m; row += SGEMM_SB_VEC_TILE) {
                body(static_cast<uint64_t>(col) * t_.tempRowStride + row, static_cast<uint64_t>(col) * t_.ldc + row,
                     Min(SGEMM_SB_VEC_TILE, t_.m - row));
            }
        }
    }

    template <typename Que>
    __aicore__ inline AscendC::LocalTensor<float> Load(Que& que, AscendC::GlobalTensor<float>& gm, uint64_t off,
                                                       uint32_t cnt)
    {
        AscendC::LocalTensor<float> local = que.template AllocTensor<float>();
        AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(cnt * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
        AscendC::DataCopyPad(local, gm[off], copy, pad);
        que.EnQue(local);
        return que.template DeQue<float>();
    }

    __aicore__ inline void Store(AscendC::LocalTensor<float>& out, uint64_t off, uint32_t cnt)
    {
        outQue_.EnQue(out);
        AscendC::LocalTensor<float> ready = outQue_.DeQue<float>();
        AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(cnt * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPad(cGm_[off], ready, copy);
        outQue_.FreeTensor(ready);
    }

    SgemmStridedBatchedEpilogueTilingData t_{};
    AscendC::GlobalTensor<float> tempGm_;
    AscendC::GlobalTensor<float> cGm_;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> tempQue_;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> cQue_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outQue_;
};

/* Workspace slot flags of the fused launch (mode 2, AIC <-> both AIVs of its AI core): slot i's tile ready, and
 * slot i free again. */
constexpr uint16_t SB_SLOT_READY = 0;
constexpr uint16_t SB_SLOT_FREE = 2;

/* The general path in one mixed launch. The cube of AI core g runs tasks g, g + blockNum, ... into its slots,
 * round-robin; before reusing a slot it waits until both vector cores finished with it. Each vector core waits for
 * the tile, combines its half of the tile's engine rows (columns of C_batch) into C and hands the slot back. */
template <typename LeftPtn, typename RightPtn>
__aicore__ inline void SbFused(GM_ADDR gmA, GM_ADDR gmB, GM_ADDR gmC, GM_ADDR ws, GM_ADDR nanFlag,
                               const SgemmStridedBatchedFusedTilingData& f)
{
    if (arch35::NanSeen(nanFlag, f.gemm.nanEpoch)) {
        return;  // every core of the launch reads the flag: none waits for another
    }
    const SgemmStridedBatchedGemmTilingData& t = f.gemm;
    const uint32_t tasks = t.tileCount * t.batchCount;
    const uint32_t blocks = static_cast<uint32_t>(AscendC::GetBlockNum());
    const uint32_t group = static_cast<uint32_t>(AscendC::GetBlockIdx() / AscendC::GetTaskRatio());
    GM_ADDR slots = ws + static_cast<int64_t>(group) * f.slots * f.slotFloats * kFloatBytes;
    if ASCEND_IS_AIC {
        arch35::CubeBegin();
        arch35::PingPong pp;
        uint32_t n = 0;
        for (uint32_t task = group; task < tasks; task += blocks, ++n) {
            const uint16_t slot = static_cast<uint16_t>(n % f.slots);
            if (n >= f.slots) {
                AscendC::CrossCoreWaitFlag(SB_SLOT_FREE + slot);
            }
            const SbTask k = TaskOf(t, task);
            SbAccumulate<LeftPtn, RightPtn>(gmA, gmB, t, k, pp);
            auto out = arch35::GmTensor(slots + static_cast<int64_t>(slot) * f.slotFloats * kFloatBytes,
                                        arch35::RowMajorLayout(k.rows, f.slotLd));
            arch35::Fixpipe(out, 0, 0, k.rows, k.cols, pp);
            AscendC::CrossCoreSetFlag<2, PIPE_FIX>(SB_SLOT_READY + slot);
        }
        for (uint32_t done = n > f.slots ? n - f.slots : 0; done < n; ++done) {
            AscendC::CrossCoreWaitFlag(SB_SLOT_FREE + done % f.slots);
        }
        arch35::CubeEnd();
        return;
    }
    AscendC::TPipe pipe;
    SbEpilogue op;
    op.Init(slots, gmC, f.epilogue, &pipe);
    const uint32_t sub = static_cast<uint32_t>(AscendC::GetSubBlockIdx());
    uint32_t n = 0;
    for (uint32_t task = group; task < tasks; task += blocks, ++n) {
        const uint16_t slot = static_cast<uint16_t>(n % f.slots);
        AscendC::CrossCoreWaitFlag(SB_SLOT_READY + slot);
        const SbTask k = TaskOf(t, task);
        op.Bind(slots, static_cast<uint64_t>(f.slots) * f.slotFloats, gmC + k.batch * f.strideC * kFloatBytes);
        const uint32_t half = (k.rows + 1) / 2;
        for (uint32_t r = sub * half; r < Min(k.rows, (sub + 1) * half); ++r) {
            op.CombineRange(static_cast<uint64_t>(slot) * f.slotFloats + static_cast<uint64_t>(r) * f.slotLd,
                            static_cast<uint64_t>(k.row0 + r) * f.epilogue.ldc + k.col0, k.cols);
        }
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(SB_SLOT_FREE + slot);
    }
}

/* Stored element (r, c) of column-major X with leading dimension ld. */
__aicore__ inline float SbAt(__gm__ float* x, uint32_t r, uint32_t c, uint32_t ld)
{
    return x[r + static_cast<uint64_t>(c) * ld];
}

/* Items: batch-major columns of the stored A_i (aCols each) then of the stored B_i (bCols each); item0.. on this
 * core, threads over the rows of a column. */
__simt_vf__ __aicore__ LAUNCH_BOUND(SGEMM_SB_SIMT_THREADS) inline void SbNanScanItems(
    __gm__ float* a, __gm__ float* b, __gm__ uint32_t* nanFlag, SgemmStridedBatchedNanTilingData t, uint64_t item0,
    uint64_t item1)
{
    const uint32_t aRows = t.transA != 0 ? t.k : t.m;
    const uint32_t aCols = t.transA != 0 ? t.m : t.k;
    const uint32_t bRows = t.transB != 0 ? t.n : t.k;
    const uint32_t bCols = t.transB != 0 ? t.k : t.n;
    const uint64_t aItems = static_cast<uint64_t>(t.batchCount) * aCols;
    bool nan = false;
    for (uint64_t w = item0; w < item1; ++w) {
        const bool inA = w < aItems;
        const uint64_t local = inA ? w : w - aItems;
        const uint32_t cols = inA ? aCols : bCols;
        const uint64_t batch = local / cols;
        __gm__ float* x = inA ? a + batch * t.strideA : b + batch * t.strideB;
        const uint32_t col = static_cast<uint32_t>(local % cols);
        for (uint32_t row = threadIdx.x; row < (inA ? aRows : bRows); row += blockDim.x) {
            const float v = SbAt(x, row, col, inA ? t.lda : t.ldb);
            nan = nan || v != v;
        }
    }
    if (nan) {
        arch35::MarkNan(nanFlag, t.nanEpoch);
    }
}

/* Items: batch-major columns of C_i; item0.. on this core, threads over the rows of a column. */
__simt_vf__ __aicore__ LAUNCH_BOUND(SGEMM_SB_SIMT_THREADS) inline void SbNanFallbackItems(
    __gm__ float* a, __gm__ float* b, __gm__ float* c, SgemmStridedBatchedNanTilingData t, uint64_t item0,
    uint64_t item1)
{
    for (uint64_t w = item0; w < item1; ++w) {
        const uint64_t batch = w / t.n;
        const uint32_t col = static_cast<uint32_t>(w % t.n);
        __gm__ float* ai = a + batch * t.strideA;
        __gm__ float* bi = b + batch * t.strideB;
        __gm__ float* ci = c + batch * t.strideC;
        for (uint32_t row = threadIdx.x; row < t.m; row += blockDim.x) {
            float acc = 0.0f;
            for (uint32_t p = 0; p < t.k; ++p) {
                const float x = t.transA != 0 ? SbAt(ai, p, row, t.lda) : SbAt(ai, row, p, t.lda);
                const float y = t.transB != 0 ? SbAt(bi, col, p, t.ldb) : SbAt(bi, p, col, t.ldb);
                acc += x * y;
            }
            const uint64_t at = row + static_cast<uint64_t>(col) * t.ldc;
            ci[at] = t.readC != 0 ? t.alpha * acc + t.beta * ci[at] : t.alpha * acc;
        }
    }
}

/* This core's share [item0, item1) of `items`. */
__aicore__ inline void SbCoreItems(uint64_t items, uint64_t* item0, uint64_t* item1)
{
    const uint64_t per = (items + AscendC::GetBlockNum() - 1) / AscendC::GetBlockNum();
    *item0 = AscendC::GetBlockIdx() * per;
    *item1 = *item0 + per < items ? *item0 + per : items;
}

}  // namespace

#define SGEMM_SB_GEMM_ENTRY(NAME, LEFT, RIGHT)                                                                     \
    extern "C" __global__ __aicore__ __cube__ void NAME(GM_ADDR a, GM_ADDR b, GM_ADDR out, GM_ADDR nanFlag,        \
                                                        SgemmStridedBatchedGemmTilingData tiling)                 \
    {                                                                                                              \
        KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);                                                            \
        SbGemm<LEFT, RIGHT>(a, b, out, nanFlag, tiling);                                                           \
    }

#define SGEMM_SB_FUSED_ENTRY(NAME, LEFT, RIGHT)                                                                    \
    extern "C" __global__ __aicore__ void NAME(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR ws, GM_ADDR nanFlag,      \
                                               SgemmStridedBatchedFusedTilingData tiling)                         \
    {                                                                                                              \
        KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);                                                         \
        SbFused<LEFT, RIGHT>(a, b, c, ws, nanFlag, tiling);                                                        \
    }

/* Left engine operand op(B)^T: NDExt when transB == N, DNExt otherwise; right op(A)^T: NDExt when transA == N. */
SGEMM_SB_GEMM_ENTRY(sgemm_strided_batched_gemm_nn, te::NDExtLayoutPtn, te::NDExtLayoutPtn)
SGEMM_SB_GEMM_ENTRY(sgemm_strided_batched_gemm_nt, te::DNExtLayoutPtn, te::NDExtLayoutPtn)
SGEMM_SB_GEMM_ENTRY(sgemm_strided_batched_gemm_tn, te::NDExtLayoutPtn, te::DNExtLayoutPtn)
SGEMM_SB_GEMM_ENTRY(sgemm_strided_batched_gemm_tt, te::DNExtLayoutPtn, te::DNExtLayoutPtn)
SGEMM_SB_FUSED_ENTRY(sgemm_strided_batched_fused_nn, te::NDExtLayoutPtn, te::NDExtLayoutPtn)
SGEMM_SB_FUSED_ENTRY(sgemm_strided_batched_fused_nt, te::DNExtLayoutPtn, te::NDExtLayoutPtn)
SGEMM_SB_FUSED_ENTRY(sgemm_strided_batched_fused_tn, te::NDExtLayoutPtn, te::DNExtLayoutPtn)
SGEMM_SB_FUSED_ENTRY(sgemm_strided_batched_fused_tt, te::DNExtLayoutPtn, te::DNExtLayoutPtn)
#undef SGEMM_SB_GEMM_ENTRY
#undef SGEMM_SB_FUSED_ENTRY

extern "C" __global__ __aicore__ void sgemm_strided_batched_combine(GM_ADDR temp, GM_ADDR c, GM_ADDR nanFlag,
                                                                   SgemmStridedBatchedEpilogueTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    if (arch35::NanSeen(nanFlag, tiling.nanEpoch)) {
        return;
    }
    AscendC::TPipe pipe;
    SbEpilogue op;
    op.Init(temp, c, tiling, &pipe);
    op.Combine();
}

extern "C" __global__ __aicore__ void sgemm_strided_batched_scale(GM_ADDR c, SgemmStridedBatchedEpilogueTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    SbEpilogue op;
    op.Init(c, c, tiling, &pipe);
    for (uint32_t batch = 0; batch < tiling.batchCount; ++batch) {  // this core's columns of every C_i
        GM_ADDR ci = c + batch * tiling.strideC * kFloatBytes;
        op.Bind(ci, static_cast<uint64_t>(tiling.ldc) * tiling.n, ci);
        op.Scale();
    }
}

/* The scan, then (SyncAll: every core's scan stores are in GM) the fallback where the flag holds this call's
 * epoch. Every vector core reaches the SyncAll, those without items too. */
extern "C" __global__ __aicore__ void sgemm_strided_batched_nan_guard(GM_ADDR a, GM_ADDR b, GM_ADDR c,
                                                                     GM_ADDR nanFlag,
                                                                     SgemmStridedBatchedNanTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIV_1_0);  // SyncAll needs the cross-core scheduler
    auto* ga = reinterpret_cast<__gm__ float*>(a);
    auto* gb = reinterpret_cast<__gm__ float*>(b);
    const uint64_t items = static_cast<uint64_t>(tiling.batchCount) *
                           ((tiling.transA != 0 ? tiling.m : tiling.k) + (tiling.transB != 0 ? tiling.k : tiling.n));
    uint64_t item0 = 0;
    uint64_t item1 = 0;
    SbCoreItems(items, &item0, &item1);
    if (item0 < item1) {
        asc_vf_call<SbNanScanItems>(dim3{SGEMM_SB_SIMT_THREADS, 1, 1}, ga, gb,
                                    reinterpret_cast<__gm__ uint32_t*>(nanFlag), tiling, item0, item1);
    }
    AscendC::SyncAll<true>();
    if (!arch35::NanSeen(nanFlag, tiling.nanEpoch)) {
        return;
    }
    SbCoreItems(static_cast<uint64_t>(tiling.batchCount) * tiling.n, &item0, &item1);
    if (item0 < item1) {
        asc_vf_call<SbNanFallbackItems>(dim3{SGEMM_SB_SIMT_THREADS, 1, 1}, ga, gb, reinterpret_cast<__gm__ float*>(c),
                                        tiling, item0, item1);
    }
}

void sgemm_strided_batched_gemm_kernel_do(uint32_t numBlocks, void* stream, bool transA, bool transB,
                                          const float* a, const float* b, float* out, void* nanFlag,
                                          const SgemmStridedBatchedGemmTilingData& tiling)
{
    auto* gf = static_cast<uint8_t*>(nanFlag);
    auto* ga = reinterpret_cast<uint8_t*>(const_cast<float*>(a));
    auto* gb = reinterpret_cast<uint8_t*>(const_cast<float*>(b));
    auto* go = reinterpret_cast<uint8_t*>(out);
    if (!transA && !transB) {
        sgemm_strided_batched_gemm_nn<<<numBlocks, nullptr, stream>>>(ga, gb, go, gf, tiling);
    } else if (!transA) {
        sgemm_strided_batched_gemm_nt<<<numBlocks, nullptr, stream>>>(ga, gb, go, gf, tiling);
    } else if (!transB) {
        sgemm_strided_batched_gemm_tn<<<numBlocks, nullptr, stream>>>(ga, gb, go, gf, tiling);
    } else {
        sgemm_strided_batched_gemm_tt<<<numBlocks, nullptr, stream>>>(ga, gb, go, gf, tiling);
    }
}

void sgemm_strided_batched_fused_kernel_do(uint32_t numBlocks, void* stream, bool transA, bool transB,
                                           const float* a, const float* b, float* c, void* workspace, void* nanFlag,
                                           const SgemmStridedBatchedFusedTilingData& tiling)
{
    auto* ga = reinterpret_cast<uint8_t*>(const_cast<float*>(a));
    auto* gb = reinterpret_cast<uint8_t*>(const_cast<float*>(b));
    auto* gc = reinterpret_cast<uint8_t*>(c);
    auto* gw = static_cast<uint8_t*>(workspace);
    auto* gf = static_cast<uint8_t*>(nanFlag);
    if (!transA && !transB) {
        sgemm_strided_batched_fused_nn<<<numBlocks, nullptr, stream>>>(ga, gb, gc, gw, gf, tiling);
    } else if (!transA) {
        sgemm_strided_batched_fused_nt<<<numBlocks, nullptr, stream>>>(ga, gb, gc, gw, gf, tiling);
    } else if (!transB) {
        sgemm_strided_batched_fused_tn<<<numBlocks, nullptr, stream>>>(ga, gb, gc, gw, gf, tiling);
    } else {
        sgemm_strided_batched_fused_tt<<<numBlocks, nullptr, stream>>>(ga, gb, gc, gw, gf, tiling);
    }
}

void sgemm_strided_batched_combine_kernel_do(uint32_t numBlocks, void* stream, const float* temp, float* c,
                                             void* nanFlag, const SgemmStridedBatchedEpilogueTilingData& tiling)
{
    sgemm_strided_batched_combine<<<numBlocks, nullptr, stream>>>(
        reinterpret_cast<uint8_t*>(const_cast<float*>(temp)), reinterpret_cast<uint8_t*>(c),
        static_cast<uint8_t*>(nanFlag), tiling);
}

void sgemm_strided_batched_nan_guard_kernel_do(uint32_t numBlocks, void* stream, const float* a, const float* b,
                                               float* c, void* nanFlag, const SgemmStridedBatchedNanTilingData& tiling)
{
    sgemm_strided_batched_nan_guard<<<numBlocks, nullptr, stream>>>(
        reinterpret_cast<uint8_t*>(const_cast<float*>(a)), reinterpret_cast<uint8_t*>(const_cast<float*>(b)),
        reinterpret_cast<uint8_t*>(c), static_cast<uint8_t*>(nanFlag), tiling);
}

void sgemm_strided_batched_scale_kernel_do(uint32_t numBlocks, void* stream, float* c,
                                           const SgemmStridedBatchedEpilogueTilingData& tiling)
{
    sgemm_strided_batched_scale<<<numBlocks, nullptr, stream>>>(reinterpret_cast<uint8_t*>(c), tiling);
}
