/*
 * aclblasCsymm for arch35 (Ascend 950PR): host launch code.
 *
 * Validation, quick returns, path choice (QUICK_RETURN / SCALE_ONLY / GEMM), the epilogue mode and the tile plan come
 * from blas_host (operators/host/csymm_host.h, the functions the CPU twin runs and the project tests). This file adds
 * what needs the device: the plan narrowed into kernel arguments and launches on the handle's stream. The GEMM
 * launch keeps its operands on chip (csymm_kernel.cpp) and asks the handle for no workspace. It never
 * synchronises.
 */
#include <algorithm>
#include <cstdint>

#include "ascend_host_env.h"
#include "csymm_host.h"
#include "csymm_kernel.h"

namespace {

using blas_host::CsymmPath;
using blas_host::CsymmTiling;

/* Floats between columns of C seen as the engine's real rows (re/im interleaved). */
uint32_t RealLd(int64_t ld) { return static_cast<uint32_t>(2 * ld); }

/* Real K per L1 chunk: one panel pair (L: <= 128 engine rows, R: <= 256 columns) takes 1.5 KiB per K in an L1
 * half of 256 KiB; split HF32 holds two pairs (L, R and lo L, lo R: 144 KiB at 48; three pairs, one per product,
 * before issue 38). */
constexpr uint32_t kRealChunkK = 128;
constexpr uint32_t kSplitChunkK = 48;
/* Split HF32 from this real K on: the cost model (harness/kernels/cost_model.py) prices an fp32 Mmad K step at 8
 * HF32 ones (Cube指令理论性能汇总.md table 2), so three HF32 products take 3/8 of the fp32 cube time; below two L0
 * K steps (64) the call is launch-bound either way. */
constexpr int64_t kSplitMinRealK = 64;

bool SplitHf32(const CsymmTiling& plan) { return 2 * plan.k >= kSplitMinRealK; }

/* The path choice on documented rates (the same arithmetic as harness/kernels/cost_model.csymm_path), in
 * cycles of one core: asc-devkit Cube指令理论性能汇总.md table 2 (Mmad fp32 16x16x1, HF32 16x16x8 MACs per cycle),
 * table 5 (L1 -> L0A / L0B 256 bytes per cycle each), table 8 (L0C -> UB 128 bytes per cycle); vector cores: 64 fp32
 * lanes per cycle (Vector指令理论性能汇总.md table 8, FusedMulAdd float; the 950's own table gives no arithmetic
 * rates, and SIMT's is not published). */
constexpr int64_t kVectorLanes = 64;
constexpr double kL0LoadBytes = 256.0;
constexpr double kFixpipeBytes = 128.0;
constexpr int64_t kFractal = 16;
constexpr int64_t kK0 = 8;

/* The vector path: one SIMT thread per element of C, ceil(m n / cores) consecutive elements per vector core, at least
 * 64 (one round of lanes), each thread 4k multiply-adds (2k real K positions, real and imaginary part). */
uint32_t VectorPathCores(const CsymmTiling& plan, int32_t vectorCores)
{
    return static_cast<uint32_t>(blas_host::UsedCores(blas_host::CeilDiv(plan.m * plan.n, kVectorLanes), vectorCores));
}

double VectorPathCycles(const CsymmTiling& plan, int32_t vectorCores)
{
    const int64_t cores = VectorPathCores(plan, vectorCores);
    const int64_t rounds = blas_host::CeilDiv(blas_host::CeilDiv(plan.m * plan.n, cores), kVectorLanes);
    return static_cast<double>(rounds) * 4.0 * static_cast<double>(plan.k);
}

/* The cube path's busiest AI core: the NaN scan (before the SyncAll), the first K chunk's panels built by its two
 * vector cores and loaded into L0, then the larger of the panel building, the L0A and L0B loads and the Mmads over
 * all its chunks (they overlap), and its last tile's Fixpipe. Launch costs are the same one launch for both paths
 * and left out; so are the costs no document gives (SyncAll, cross-core flags, each instruction's head overhead),
 * which only add to the cube path. */
double CubePathCycles(const CsymmTiling& plan, int32_t vectorCores, bool split)
{
    const double terms = split ? 3.0 : 1.0;  // products: L0 loads and Mmads
    const double pairs = split ? 2.0 : 1.0;  // panel pairs the vector cores build (csymm_kernel.cpp Pairs)
    const double macsPerCycle = split ? 2048.0 : 256.0;
    const int64_t chunkK = split ? kSplitChunkK : kRealChunkK;
    const int64_t realK = 2 * plan.k;
    /* every chunk is chunkK deep (a multiple of K0) but the last; their padded depths summed, and the first's */
    const double kSum = static_cast<double>((blas_host::CeilDiv(realK, chunkK) - 1) * chunkK +
                                            blas_host::CeilAlign(blas_host::TailOf(realK, chunkK), kK0));
    const double kFirst = static_cast<double>(blas_host::CeilAlign(std::min(chunkK, realK), kK0));
    double busiest = 0.0;
    for (int32_t core = 0; core < plan.usedCores; ++core) {
        double build = 0.0, loadA = 0.0, loadB = 0.0, mmad = 0.0, fill = -1.0, fixpipe = 0.0;
        for (int64_t tile = core; tile < plan.tileCount; tile += plan.usedCores) {
            int64_t row0, col0, rows, cols;
            blas_host::CsymmTileRegion(plan, tile, &row0, &col0, &rows, &cols);
            const double engineRows = static_cast<double>(blas_host::CeilAlign(cols, kFractal));      // C columns
            const double engineCols = static_cast<double>(blas_host::CeilAlign(2 * rows, kFractal));  // 2 x C rows
            if (fill < 0.0) {
                const double a = engineRows * kFirst;
                const double b = kFirst * engineCols;
                fill = pairs * (a + b) / (2.0 * kVectorLanes) + terms * std::max(a, b) * 4.0 / kL0LoadBytes;
            }
            build += pairs * (engineRows + engineCols) * kSum / (2.0 * kVectorLanes);
            loadA += terms * engineRows * kSum * 4.0 / kL0LoadBytes;
            loadB += terms * engineCols * kSum * 4.0 / kL0LoadBytes;
            mmad += terms * engineRows * engineCols * kSum / macsPerCycle;
            fixpipe = engineRows * engineCols * 4.0 / kFixpipeBytes;
        }
        busiest = std::max(busiest, fill + std::max(std::max(build, mmad), std::max(loadA, loadB)) + fixpipe);
    }
    const int64_t aivs = std::min<int64_t>(vectorCores, 2 * static_cast<int64_t>(plan.usedCores));
    const double scan = static_cast<double>(blas_host::CeilDiv(plan.k * plan.k + plan.m * plan.n, aivs * kVectorLanes));
    return scan + busiest;
}

bool VectorPath(const CsymmTiling& plan, int32_t vectorCores)
{
    return VectorPathCycles(plan, vectorCores) <= CubePathCycles(plan, vectorCores, SplitHf32(plan));
}

CsymmEpilogueTilingData EpilogueArgs(const CsymmTiling& plan, int32_t vectorCores, uint32_t* usedCores)
{
    CsymmEpilogueTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.ldc = static_cast<uint32_t>(plan.ldc);
    *usedCores = static_cast<uint32_t>(blas_host::UsedCores(plan.n, vectorCores));
    t.colsPerCore = static_cast<uint32_t>(blas_host::CeilDiv(plan.n, *usedCores));
    t.epilogue = static_cast<uint32_t>(plan.epilogue);
    t.betaReal = plan.betaReal;
    t.betaImag = plan.betaImag;
    return t;
}

CsymmPrepareTilingData PrepareArgs(const CsymmTiling& plan, bool split, int32_t vectorCores, uint32_t nanEpoch)
{
    CsymmPrepareTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.k = static_cast<uint32_t>(plan.k);
    t.side = static_cast<uint32_t>(plan.side);
    t.uplo = static_cast<uint32_t>(plan.uplo);
    t.lda = static_cast<uint32_t>(plan.lda);
    t.ldb = static_cast<uint32_t>(plan.ldb);
    t.split = split ? 1u : 0u;
    t.alphaReal = plan.alphaReal;
    t.alphaImag = plan.alphaImag;
    const int64_t items = plan.k * plan.k + plan.m * plan.n;  // complex elements: every vector lane gets work
    const auto used = blas_host::UsedCores(items, vectorCores);
    t.itemsPerCore = static_cast<uint32_t>(blas_host::CeilDiv(items, used));
    t.nanEpoch = nanEpoch;
    return t;
}

CsymmGemmTilingData GemmArgs(const CsymmTiling& plan, bool split)
{
    CsymmGemmTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.k = static_cast<uint32_t>(plan.k);
    t.blockM = static_cast<uint32_t>(plan.blockM);
    t.blockN = static_cast<uint32_t>(plan.blockN);
    t.chunkK = split ? kSplitChunkK : kRealChunkK;
    t.tilesM = static_cast<uint32_t>(plan.tilesM);
    t.tileCount = static_cast<uint32_t>(plan.tileCount);
    t.ldOut = RealLd(plan.ldc);
    t.split = split ? 1u : 0u;
    return t;
}

}  // namespace

extern "C" aclblasStatus_t aclblasCsymm(aclblasHandle_t handle, aclblasSideMode_t side, aclblasFillMode_t uplo, int m,
                                        int n, const aclblasComplex* alpha, const aclblasComplex* A, int lda,
                                        const aclblasComplex* B, int ldb, const aclblasComplex* beta,
                                        aclblasComplex* C, int ldc)
{
    const aclblasStatus_t status =
        blas_host::ValidateCsymmParams(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
    if (status != ACLBLAS_STATUS_SUCCESS) {
        return status;
    }
    if (blas_host::ClassifyCsymm(m, n, *alpha, *beta, C != nullptr).path == CsymmPath::QUICK_RETURN) {
        return ACLBLAS_STATUS_SUCCESS;
    }
    const int32_t cubeCores = ascend_host::CubeCoreCount(handle);
    const int32_t vectorCores = ascend_host::VectorCoreCount(handle);
    if (cubeCores < 1 || vectorCores < 1) {
        return ACLBLAS_STATUS_INTERNAL_ERROR;
    }
    const CsymmTiling plan = blas_host::PlanCsymm(side, uplo, m, n, lda, ldb, ldc, *alpha, *beta, cubeCores);
    aclrtStream stream = ascend_host::HandleStream(handle);
    uint32_t epilogueCores = 1;
    const CsymmEpilogueTilingData epilogue = EpilogueArgs(plan, vectorCores, &epilogueCores);
    if (plan.path == CsymmPath::SCALE_ONLY) {
        csymm_scale_kernel_do(epilogueCores, stream, C, epilogue);
        return ACLBLAS_STATUS_SUCCESS;
    }
    if (VectorPath(plan, vectorCores)) {  // one AIV-only launch: plain fp32, NaN needs no scan off the cube
        const uint32_t cores = VectorPathCores(plan, vectorCores);
        csymm_vector_kernel_do(cores, stream, A, B, C, PrepareArgs(plan, false, static_cast<int32_t>(cores), 0),
                               epilogue);
        return ACLBLAS_STATUS_SUCCESS;
    }
    /* one mixed launch and no other stream task, no workspace: the panels go UB -> L1 and the result L0C -> UB on
     * chip; the NaN flag needs no memset (the scan stores this call's epoch, common/arch35_nan_guard.h) */
    const bool split = SplitHf32(plan);
    const auto blocks = static_cast<uint32_t>(plan.usedCores);
    CsymmFusedTilingData fused{};
    fused.prepare = PrepareArgs(plan, split, static_cast<int32_t>(2 * blocks), ascend_host::NextNanEpoch(handle));
    fused.gemm = GemmArgs(plan, split);
    fused.epilogue = epilogue;
    fused.withEpilogue = plan.epilogue == blas_host::CsymmEpilogue::BETA_ZERO ? 0u : 1u;
    csymm_fused_kernel_do(blocks, stream, A, B, C, ascend_host::HandleScratch(handle), fused);
    return ACLBLAS_STATUS_SUCCESS;
}
