/*
 * aclblasCsymm kernels for arch35 (Ascend 950PR, dav-3510), after seeds/csymm_design.md.txt §3.4. The complex
 * product is ONE real GEMM on a real-embedded operand (csymm_tiling_data.h): with a -> E(a) = [[ar, ai], [-ai, ar]],
 * [pr, pi] = [lr, li] * E(r), so the real and imaginary products of each element pair are neighbours along the real
 * K and share every K fractal of a single L0C accumulation (no difference of two finished plane sums).
 *
 * One mixed launch, csymm_fused (KERNEL_TYPE_MIX_AIC_1_2), on-chip: no GM workspace.
 *   1. scan     (AIV, SIMT): every stored element of A (times alpha) and of B checked for what must not enter the
 *               cube (NaN; with split HF32 a value whose HF32 part is not finite): the NaN flag
 *               (common/arch35_nan_guard.h: the call's epoch, stored on NaN; no memset before the launch); SyncAll<false>,
 *               then every core reads the flag (dcci first) and compares it with the epoch;
 *   2. panels   (AIV -> AIC, on chip): for each tile and K chunk of the cube, the two AIVs of the AI core build the
 *               engine panels (L = B or alpha*A, R = E(alpha*A) or E(B); with split also lo(L) and lo(R),
 *               common/arch35_split_hf32.h, each panel once) in the cube's L1 fractal layouts, piece by piece in
 *               UB: the piece's block of A or B comes GM -> UB by DataCopyPad (stored columns; A's other triangle as
 *               the stored columns it mirrors), SIMT builds the piece from UB, and each piece is copied UB -> L1 of their AIC (DataCopy, asc-devkit
 *               DataCopy（UBToL1连续数据搬运）.md, ENABLE_CV_COMM_VIA_SSBUF=true). Handshake per L1 half (double
 *               buffered): AIVs CrossCoreSetFlag<2, PIPE_MTE3>(READY + half), the AIC waits on PIPE_MTE1, runs the
 *               chunk's Mmads (common/arch35_cube_gemm.h MmadChunk) and hands the half back with
 *               CrossCoreSetFlag<2, PIPE_MTE1>(FREE + half), which the AIVs wait for on PIPE_MTE3;
 *   3. epilogue (beta != 0): the AIC's Fixpipe L0C -> UB (asc-devkit Fixpipe（L0C到UB数据搬运）.md,
 *               FixpipeParamsArch3510, NZ2ND, dualDstCtl = 1: each AIV gets half of the tile's rows),
 *               CrossCoreSetFlag<2, PIPE_FIX>(RESULT); the AIVs wait on PIPE_V, compute P + beta * C with C read
 *               once (DataCopyPad), write C once and hand the UB back (CrossCoreSetFlag<2, PIPE_V>(UB_FREE)). With
 *               beta == 0 Fixpipe writes C itself (L0C -> GM);
 *   2b. fallback (AIV, SIMT): when the flag holds the epoch, C = alpha * op(A, B) + beta * C in plain fp32 from A and
 *               B (NaN never enters Mmad); the AIC does nothing.
 * csymm_vector (AIV only): the same plain fp32 computation as the whole call, for shapes where the cube path's work
 *               (scan, panels, L0 loads, Mmad, Fixpipe) costs more than the vector cores' (csymm_host.cpp).
 * csymm_scale (AIV only): C = beta*C for alpha == 0. The host (csymm_host.cpp) launches one of them.
 */
#include <cstdint>

#include "kernel_operator.h"
#include "simt_api/asc_simt.h"
#include "tensor_api/tensor.h"
#include "arch35_cube_gemm.h"
#include "arch35_nan_guard.h"
#include "arch35_split_hf32.h"
#include "csymm_kernel.h"

namespace {

using arch35::Min;

constexpr uint32_t CS_LEFT = 141;
constexpr uint32_t CS_UPPER = 121;
constexpr uint32_t CS_EPILOGUE_BETA_ZERO = 1;
constexpr uint32_t CS_EPILOGUE_BETA_ONE = 2;

/* Cross-core flag ids (mode 2, 0-15; SyncAll takes 11-14): L1 half h ready / free, the tile result in UB, UB free. */
constexpr uint16_t CS_PANEL_READY = 0;
constexpr uint16_t CS_PANEL_FREE = 2;
constexpr uint16_t CS_RESULT_READY = 4;
constexpr uint16_t CS_RESULT_FREE = 5;

/* AIV UB map: two panel-piece slots (16 KiB each), then the tile result P and the C values of this AIV's half of a
 * tile (<= 64 rows of <= 256 floats each: 64 KiB each), then a piece's source block of A or B as the DMA loads it,
 * in the stored orientation (S) and the mirrored one (M), 32 KiB each (a piece needs <= 24.5 KiB of either);
 * 224 KiB of the 248. */
constexpr uint32_t CS_PIECE_FLOATS = 4096;
constexpr uint32_t CS_UB_PIECE = 0;
constexpr uint32_t CS_UB_RESULT = 2 * CS_PIECE_FLOATS * sizeof(float);
constexpr uint32_t CS_UB_HALF_TILE = 64 * 256 * sizeof(float);
constexpr uint32_t CS_UB_C = CS_UB_RESULT + CS_UB_HALF_TILE;
constexpr uint32_t CS_UB_SRC_BYTES = 32 * 1024;
constexpr uint32_t CS_UB_SRC_S = CS_UB_C + CS_UB_HALF_TILE;
constexpr uint32_t CS_UB_SRC_M = CS_UB_SRC_S + CS_UB_SRC_BYTES;
/* Intra-core event id of the source block: MTE2 (its DMA load) -> V (the SIMT build) and back. */
constexpr int32_t CS_EV_SRC = 3;

constexpr AscendC::FixpipeConfig CS_CFG_ROW_MAJOR_UB = {AscendC::CO2Layout::ROW_MAJOR, true};

__aicore__ inline __gm__ float* Floats(GM_ADDR p) { return reinterpret_cast<__gm__ float*>(p); }

// ---- the engine operands, element by element --------------------------------------------------------------------

/* Element and part (0 real, 1 imaginary) at real K position q: q = 2 p + d, the parts of each element neighbours
 * along K. */
__aicore__ inline uint64_t KElem(uint64_t q, uint32_t k) { return k == 0 ? 0 : q / 2; }
__aicore__ inline uint64_t KPart(uint64_t q, uint32_t k) { return k == 0 ? 0 : q % 2; }

/* alpha * A(row, col) of the symmetric A from its stored triangle (A = A^T: index swap only). */
__aicore__ inline void AlphaA(__gm__ float* a, const CsymmPrepareTilingData& t, uint64_t row, uint64_t col, float& re,
                              float& im)
{
    const bool stored = (t.uplo == CS_UPPER) ? (row <= col) : (row >= col);
    const uint64_t src = stored ? row + col * t.lda : col + row * t.lda;
    const float re0 = a[2 * src];
    const float im0 = a[2 * src + 1];
    re = t.alphaReal * re0 - t.alphaImag * im0;
    im = t.alphaReal * im0 + t.alphaImag * re0;
}

/* Entry (d, e) of E(re, im) = [[re, im], [-im, re]]. */
__aicore__ inline float Embedded(float re, float im, uint64_t d, uint64_t e) { return d == e ? re : (d == 0 ? im : -im); }

/* L (n x 2k): row j, real K q. LEFT: B(p, j) part d (row j of L is column j of B); RIGHT: alpha * A(j, p) part d. */
__aicore__ inline float EngineL(__gm__ float* a, __gm__ float* b, const CsymmPrepareTilingData& t, uint64_t j,
                                uint64_t q)
{
    const uint64_t p = KElem(q, t.k);
    const uint64_t d = KPart(q, t.k);
    if (t.side == CS_LEFT) {
        return b[2 * (p + j * t.ldb) + d];
    }
    float re;
    float im;
    AlphaA(a, t, j, p, re, im);
    return d == 0 ? re : im;
}

/* R (2k x 2m): real K q, column c = 2 i + e. LEFT: E(alpha * A(p, i)); RIGHT: E(B(i, p)). */
__aicore__ inline float EngineR(__gm__ float* a, __gm__ float* b, const CsymmPrepareTilingData& t, uint64_t q,
                                uint64_t c)
{
    const uint64_t p = KElem(q, t.k);
    const uint64_t d = KPart(q, t.k);
    const uint64_t i = c / 2;
    float re;
    float im;
    if (t.side == CS_LEFT) {
        AlphaA(a, t, p, i, re, im);
    } else {
        re = b[2 * (i + p * t.ldb)];
        im = b[2 * (i + p * t.ldb) + 1];
    }
    return Embedded(re, im, d, c % 2);
}

// ---- 1. scan ----------------------------------------------------------------------------------------------------

/* SIMT element indices (and their division and modulo by k or m) in 32 bits where the call's range allows, else 64
 * (k*k + m*n reaches 2^32 at a 32768^2 Csymm; the loop's last step past the end must not wrap either): 32-bit integer division is the shorter instruction sequence on the
 * vector cores (no document gives SIMT division rates; the choice costs nothing where the range allows it). The
 * addresses the indices feed stay 64-bit: ld * column can pass 2^32 where the index does not. */
__aicore__ inline bool Fits32(uint64_t end) { return end <= UINT32_MAX - CSYMM_SIMT_THREADS; }  // e += blockDim: no wrap

/* One SIMT thread per complex element, elements e0..e1-1 of this core: e < k*k is A(e / k, e % k) (times alpha),
 * the rest B (column-major, f = e - k*k at row f % m, column f / m). Only the flag is written (this call's epoch, on
 * NaN: common/arch35_nan_guard.h). Index: uint32_t where Fits32(e1), else uint64_t. */
template <typename Index>
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmScanItems(
    __gm__ float* a, __gm__ float* b, __gm__ uint32_t* nanFlag, CsymmPrepareTilingData t, Index e0, Index e1)
{
    /* What keeps an element off the cube: NaN (fp32), or a part whose HF32 split is not finite (split). */
    auto offCube = [&t](float re, float im) {
        return re != re || im != im || (t.split != 0 && !(arch35::Hf32Splittable(re) && arch35::Hf32Splittable(im)));
    };
    const uint64_t aItems = static_cast<uint64_t>(t.k) * t.k;
    const Index k = t.k;
    const Index m = t.m;
    bool nan = false;
    for (Index e = e0 + static_cast<Index>(threadIdx.x); e < e1; e += static_cast<Index>(blockDim.x)) {
        float re;
        float im;
        if (e < aItems) {
            AlphaA(a, t, e / k, e % k, re, im);  // NaN in A, or made by alpha (0 * Inf)
        } else {
            const Index f = static_cast<Index>(e - aItems);
            const uint64_t at = 2 * (static_cast<uint64_t>(f % m) + static_cast<uint64_t>(f / m) * t.ldb);
            re = b[at];
            im = b[at + 1];
        }
        nan = nan || offCube(re, im);
    }
    if (nan) {
        arch35::MarkNan(nanFlag, t.nanEpoch);
    }
}

__aicore__ inline void CsymmScanCore(GM_ADDR a, GM_ADDR b, GM_ADDR nanFlag, const CsymmPrepareTilingData& t)
{
    const uint64_t items = static_cast<uint64_t>(t.k) * t.k + static_cast<uint64_t>(t.m) * t.n;
    const uint64_t item0 = AscendC::GetBlockIdx() * static_cast<uint64_t>(t.itemsPerCore);
    const uint64_t item1 = item0 + t.itemsPerCore < items ? item0 + t.itemsPerCore : items;
    if (item0 >= item1) {
        return;
    }
    auto* flag = reinterpret_cast<__gm__ uint32_t*>(nanFlag);
    if (Fits32(item1)) {
        asc_vf_call<CsymmScanItems<uint32_t>>(dim3{CSYMM_SIMT_THREADS, 1, 1}, Floats(a), Floats(b), flag, t,
                                              static_cast<uint32_t>(item0), static_cast<uint32_t>(item1));
    } else {
        asc_vf_call<CsymmScanItems<uint64_t>>(dim3{CSYMM_SIMT_THREADS, 1, 1}, Floats(a), Floats(b), flag, t, item0,
                                              item1);
    }
}

// ---- the tiles every core of an AI core walks -------------------------------------------------------------------

/* The AI core of this AIC or AIV, and its tiles: first, first + step, ... (the AIC and its AIVs walk the same). */
__aicore__ inline uint32_t AiCore()
{
    return static_cast<uint32_t>(ASCEND_IS_AIV ? AscendC::GetBlockIdx() / AscendC::GetTaskRatio()
                                               : AscendC::GetBlockIdx());
}
__aicore__ inline uint32_t FirstTile() { return AiCore(); }
__aicore__ inline uint32_t TileStep() { return static_cast<uint32_t>(AscendC::GetBlockNum()); }

/* PlanCsymm's tile of C -> engine region: engine rows are columns of C, engine columns re/im of its rows. */
struct TileRegion {
    uint32_t cRow0;
    uint32_t cCol0;
    uint32_t rows;  // engine rows (C columns)
    uint32_t cols;  // engine columns (2 x C rows)
};

__aicore__ inline TileRegion RegionOf(uint32_t tile, const CsymmGemmTilingData& t)
{
    TileRegion r;
    r.cRow0 = (tile % t.tilesM) * t.blockM;
    r.cCol0 = (tile / t.tilesM) * t.blockN;
    r.rows = Min(t.blockN, t.n - r.cCol0);
    r.cols = 2 * Min(t.blockM, t.m - r.cRow0);
    return r;
}

/* Panel pairs per K chunk: 2 for split HF32 ((L, R) and (lo L, lo R), each built once; the three products
 * hi*hi + hi*lo + lo*hi read them as arch35::PairA / PairB say), else 1. */
__aicore__ inline uint32_t Pairs(const CsymmGemmTilingData& t) { return t.split != 0 ? 2 : 1; }

// ---- 2. panels: AIV side ----------------------------------------------------------------------------------------

/* What one piece of an L1 panel holds: floats [first, first + count) of panel pair `lo`'s panel, side A (L, NZ
 * rows x curK) or B (R, ZN curK x cols), in the fractal order of arch35_cube_gemm.h's L1PanelA/B. */
struct PieceArgs {
    uint32_t sideB;
    uint32_t lo;  // the lo part (split HF32)
    uint32_t row0;
    uint32_t col0;
    uint32_t kOff;
    uint32_t rows;
    uint32_t cols;
    uint32_t curK;
    uint32_t first;
    uint32_t count;
};

/* The complex block a piece reads, element (x, y) of A or B for x in [x0, x0 + nx), y in [y0, y0 + ny), as the DMA
 * puts it in UB: S holds GM columns y (S[y - y0] = X(x0.., y), stored element X(x, y) at x + y ld), M holds GM
 * columns x (M[x - x0] = X(y0.., x)): A's element (x, y) outside its stored triangle is the stored (y, x), in M. B
 * needs S only; A needs S where the block meets the stored triangle and M where it meets the other one. */
struct SourceBlock {
    uint32_t fromA;
    uint32_t x0;
    uint32_t nx;
    uint32_t y0;
    uint32_t ny;
    uint32_t loadS;
    uint32_t loadM;
    uint32_t pitchS;  // floats between the blocks (GM columns) of S in UB: nx complex rounded up to 32 bytes
    uint32_t pitchM;
};

/* Whether A's element (x, y) is in its stored triangle (A = A^T: the other triangle is read mirrored). */
__aicore__ inline bool StoredA(uint32_t uplo, uint32_t x, uint32_t y) { return uplo == CS_UPPER ? x <= y : x >= y; }

/* The real K range [kLo, kHi) of the chunk a piece covers (its other dimension: all of the panel's rows / cols):
 * NZ and ZN both run C0-wide K groups of pad (rowsPad / colsPad) positions. kLo >= kHi: padding only. */
__aicore__ inline void PieceK(const PieceArgs& p, uint32_t& kLo, uint32_t& kHi)
{
    const uint32_t group = CUBE_FP32_C0 * arch35::RoundUp(p.sideB == 0 ? p.rows : p.cols, CUBE_FRACTAL);
    kLo = (p.first / group) * CUBE_FP32_C0;
    kHi = Min(((p.first + p.count - 1) / group + 1) * CUBE_FP32_C0, p.curK);
}

/* The piece's source block: L = B (LEFT: B(p, j)) or alpha*A (RIGHT: A(j, p)); R = E(alpha*A) (LEFT: A(p, i)) or
 * E(B) (RIGHT: B(i, p)); j over the panel's rows, i over its columns / 2, p over the piece's K range / 2. */
__aicore__ inline SourceBlock PieceSource(const CsymmPrepareTilingData& t, const PieceArgs& p)
{
    uint32_t kLo;
    uint32_t kHi;
    PieceK(p, kLo, kHi);
    SourceBlock s{};
    if (kLo >= kHi || t.k == 0) {
        return s;  // padding: nothing to load
    }
    /* the elements at the range's ends (KElem: consecutive real K positions hold the parts of one element) */
    const uint32_t e0 = static_cast<uint32_t>(KElem(p.kOff + kLo, t.k));
    const uint32_t e1 = static_cast<uint32_t>(KElem(p.kOff + kHi - 1, t.k));
    const uint32_t p0 = Min(e0, e1);
    const uint32_t np = (e0 < e1 ? e1 : e0) + 1 - p0;
    const bool left = t.side == CS_LEFT;
    const uint32_t o0 = p.sideB == 0 ? p.row0 : p.col0 / 2;  // j or i
    const uint32_t no = p.sideB == 0 ? p.rows : (p.cols + 1) / 2;
    s.fromA = (p.sideB == 0) != left ? 1u : 0u;  // L from A on RIGHT, R from A on LEFT
    /* (x, y): L LEFT B(p, j); R RIGHT B(i, p); A = A^T, so L RIGHT A(j, p) = A(p, j) and R LEFT A(p, i) = A(i, p)
     * take the same orientation (SourceAt picks S or M per element) */
    const bool xIsK = p.sideB == 0;
    s.x0 = xIsK ? p0 : o0;
    s.nx = xIsK ? np : no;
    s.y0 = xIsK ? o0 : p0;
    s.ny = xIsK ? no : np;
    s.loadS = s.fromA == 0 || StoredA(t.uplo, s.x0, s.y0 + s.ny - 1) || StoredA(t.uplo, s.x0 + s.nx - 1, s.y0) ? 1u : 0u;
    s.loadM = s.fromA != 0 && (!StoredA(t.uplo, s.x0, s.y0 + s.ny - 1) || !StoredA(t.uplo, s.x0 + s.nx - 1, s.y0)) ? 1u : 0u;
    s.pitchS = arch35::RoundUp(2 * s.nx * sizeof(float), 32) / sizeof(float);
    s.pitchM = arch35::RoundUp(2 * s.ny * sizeof(float), 32) / sizeof(float);
    return s;
}

/* DMA GM -> UB (DataCopyPad, MTE2) of `blocks` GM columns of `len` complex from column `col0`, row `row0` of X
 * (leading dimension ld complex): one 2-D copy, each column a block padded to 32 bytes in UB. */
__aicore__ inline void LoadColumns(AscendC::LocalTensor<float>& ub, __gm__ float* x, uint32_t ld, uint32_t row0,
                                   uint32_t col0, uint32_t len, uint32_t blocks)
{
    AscendC::GlobalTensor<float> gm;
    gm.SetGlobalBuffer(x + 2 * (row0 + static_cast<uint64_t>(col0) * ld),
                       static_cast<uint64_t>(blocks - 1) * 2 * ld + 2 * len);
    const AscendC::DataCopyExtParams copy{static_cast<uint16_t>(blocks), static_cast<uint32_t>(2 * len * sizeof(float)),
                                          static_cast<uint32_t>(2 * (ld - len) * sizeof(float)), 0, 0};
    AscendC::DataCopyPad(ub, gm, copy, AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
}

/* Part `part` of element (x, y) of the source block from UB (S, or M for A's other triangle). */
__aicore__ inline float SourceAt(__ubuf__ float* ubS, __ubuf__ float* ubM, const SourceBlock& s, uint32_t uplo,
                                 uint32_t x, uint32_t y, uint32_t part)
{
    if (s.fromA == 0 || StoredA(uplo, x, y)) {
        return ubS[(y - s.y0) * s.pitchS + 2 * (x - s.x0) + part];
    }
    return ubM[(x - s.x0) * s.pitchM + 2 * (y - s.y0) + part];
}

/* The piece's source block GM -> UB by the DMA (MTE2): S as X's columns y0.., M as its columns x0.. (A's mirrored
 * elements, read as the stored ones they equal). Both are plain column copies (in a block across A's diagonal a
 * column also holds unstored elements, which SourceAt never picks); the mirror's transposition is the SIMT build's
 * UB index (SourceAt). */
__aicore__ inline void LoadSource(GM_ADDR a, GM_ADDR b, const CsymmPrepareTilingData& t, const SourceBlock& s)
{
    __gm__ float* x = s.fromA != 0 ? Floats(a) : Floats(b);
    const uint32_t ld = s.fromA != 0 ? t.lda : t.ldb;
    if (s.loadS != 0) {
        AscendC::LocalTensor<float> ub(AscendC::TPosition::VECCALC, CS_UB_SRC_S, s.ny * s.pitchS);
        LoadColumns(ub, x, ld, s.x0, s.y0, s.nx, s.ny);
    }
    if (s.loadM != 0) {
        AscendC::LocalTensor<float> ub(AscendC::TPosition::VECCALC, CS_UB_SRC_M, s.nx * s.pitchM);
        LoadColumns(ub, x, ld, s.y0, s.x0, s.ny, s.nx);
    }
}

/* One SIMT thread per float of the piece, from the source block in UB (no GM access); padding positions are zero. */
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmBuildPiece(
    __ubuf__ float* ub, __ubuf__ float* ubS, __ubuf__ float* ubM, CsymmPrepareTilingData t, PieceArgs p,
    SourceBlock s)
{
    constexpr uint32_t c0 = CUBE_FP32_C0;
    const uint32_t rowsPad = arch35::RoundUp(p.rows, CUBE_FRACTAL);
    const uint32_t colsPad = arch35::RoundUp(p.cols, CUBE_FRACTAL);
    for (uint32_t i = threadIdx.x; i < p.count; i += blockDim.x) {
        const uint32_t idx = p.first + i;
        uint32_t r;
        uint32_t c;
        if (p.sideB == 0) {  // NZ: ((c / C0) * rowsPad + r) * C0 + c % C0
            r = (idx / c0) % rowsPad;
            c = (idx / (c0 * rowsPad)) * c0 + idx % c0;
        } else {  // ZN: ((r / C0) * colsPad + c) * C0 + r % C0
            c = (idx / c0) % colsPad;
            r = (idx / (c0 * colsPad)) * c0 + idx % c0;
        }
        float v = 0.0f;
        const bool inside = p.sideB == 0 ? r < p.rows && c < p.curK : r < p.curK && c < p.cols;
        if (inside) {
            const uint32_t q = p.kOff + (p.sideB == 0 ? c : r);  // real K
            const uint32_t kp = static_cast<uint32_t>(KElem(q, t.k));
            const uint32_t d = static_cast<uint32_t>(KPart(q, t.k));
            const uint32_t o = p.sideB == 0 ? p.row0 + r : (p.col0 + c) / 2;  // j or i
            const bool xIsK = p.sideB == 0;  // as PieceSource
            const uint32_t x = xIsK ? kp : o;
            const uint32_t y = xIsK ? o : kp;
            float re = SourceAt(ubS, ubM, s, t.uplo, x, y, 0);
            float im = SourceAt(ubS, ubM, s, t.uplo, x, y, 1);
            if (s.fromA != 0) {
                const float re0 = re;
                re = t.alphaReal * re0 - t.alphaImag * im;
                im = t.alphaReal * im + t.alphaImag * re0;
            }
            v = p.sideB == 0 ? (d == 0 ? re : im) : Embedded(re, im, d, (p.col0 + c) % 2);
        }
        ub[i] = p.lo != 0 ? arch35::Hf32Lo(v) : v;
    }
}

/* This AIV's pieces of one K chunk into L1 half `half` of its AIC: every panel of every pair (L, R; with split also
 * lo L, lo R), cut in pieces of CS_PIECE_FLOATS, the two AIVs taking alternate pieces; each piece built in a UB slot (V), copied UB -> L1 (MTE3),
 * the slot handed back to V by MTE3_V. */
__aicore__ inline void CsymmHandChunk(GM_ADDR a, GM_ADDR b, const CsymmFusedTilingData& ft, const TileRegion& reg,
                                      uint32_t kOff, uint32_t curK, uint32_t half, uint32_t& slotCount)
{
    const CsymmGemmTilingData& t = ft.gemm;
    const uint32_t pairs = Pairs(t);
    const uint32_t l1Base = half * arch35::L1_HALF;
    const uint32_t sub = static_cast<uint32_t>(AscendC::GetSubBlockIdx());
    uint32_t piece = 0;
    for (uint32_t lo = 0; lo < pairs; ++lo) {  // pair 1: the lo parts (split)
        for (uint32_t sideB = 0; sideB < 2; ++sideB) {
            const uint32_t bytes = sideB == 0 ? arch35::PanelBytesA(reg.rows, curK)
                                              : arch35::PanelBytesB(curK, reg.cols);
            const uint32_t off = l1Base + lo * (arch35::PanelBytesA(reg.rows, curK) +
                                                arch35::PanelBytesB(curK, reg.cols)) +
                                 (sideB == 0 ? 0 : arch35::PanelBytesA(reg.rows, curK));
            const uint32_t floats = bytes / sizeof(float);
            for (uint32_t first = 0; first < floats; first += CS_PIECE_FLOATS, ++piece) {
                if (piece % 2 != sub) {
                    continue;
                }
                const uint32_t count = Min(CS_PIECE_FLOATS, floats - first);
                const uint32_t slot = slotCount++ & 1;
                AscendC::LocalTensor<float> ub(AscendC::TPosition::VECCALC,
                                               CS_UB_PIECE + slot * CS_PIECE_FLOATS * sizeof(float), count);
                AscendC::LocalTensor<float> l1(AscendC::TPosition::A1, off + first * sizeof(float), count);
                const PieceArgs args{sideB, lo, reg.cCol0, 2 * reg.cRow0, kOff, reg.rows, reg.cols, curK, first, count};
                const SourceBlock src = PieceSource(ft.prepare, args);
                AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(CS_EV_SRC);  // the last build has read the block
                LoadSource(a, b, ft.prepare, src);
                AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(CS_EV_SRC);
                AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(CS_EV_SRC);
                AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(slot);
                AscendC::LocalTensor<float> ubS(AscendC::TPosition::VECCALC, CS_UB_SRC_S, CS_UB_SRC_BYTES / sizeof(float));
                AscendC::LocalTensor<float> ubM(AscendC::TPosition::VECCALC, CS_UB_SRC_M, CS_UB_SRC_BYTES / sizeof(float));
                asc_vf_call<CsymmBuildPiece>(dim3{CSYMM_SIMT_THREADS, 1, 1}, ub.GetPhyAddr(), ubS.GetPhyAddr(),
                                             ubM.GetPhyAddr(), ft.prepare, args, src);
                AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(CS_EV_SRC);
                AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(slot);
                AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(slot);
                AscendC::DataCopy(l1, ub, count);
                AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(slot);
            }
        }
    }
}

// ---- 3. epilogue: AIV side --------------------------------------------------------------------------------------

/* This AIV's rows of the tile (C columns), P from the AIC's Fixpipe and C from GM, both `pitch` floats a row:
 * C = P + beta * C in place in the C buffer. */
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmEpilogueUb(
    __ubuf__ float* p, __ubuf__ float* c, CsymmEpilogueTilingData t, uint32_t rows, uint32_t cols, uint32_t pitch)
{
    for (uint32_t i = threadIdx.x; i < rows * (cols / 2); i += blockDim.x) {
        const uint32_t at = (i / (cols / 2)) * pitch + 2 * (i % (cols / 2));
        float re = p[at];
        float im = p[at + 1];
        if (t.epilogue == CS_EPILOGUE_BETA_ONE) {
            re += c[at];
            im += c[at + 1];
        } else {
            re += t.betaReal * c[at] - t.betaImag * c[at + 1];
            im += t.betaReal * c[at + 1] + t.betaImag * c[at];
        }
        c[at] = re;
        c[at + 1] = im;
    }
}

/* The tile's C part of this AIV: C columns cCol0 + first .. + rows, C rows cRow0 .. (cols / 2 of them); row r of
 * the UB buffers is C column cCol0 + first + r. */
__aicore__ inline AscendC::DataCopyExtParams CTileCopy(const CsymmEpilogueTilingData& t, uint32_t rows, uint32_t cols,
                                                       uint32_t pitch, bool toGm)
{
    const uint32_t len = cols * sizeof(float);
    const uint32_t gmGap = (2 * t.ldc - cols) * sizeof(float);
    const uint32_t ubGap = (pitch * sizeof(float) - arch35::RoundUp(len, 32)) / 32;
    return AscendC::DataCopyExtParams{static_cast<uint16_t>(rows), len, toGm ? ubGap : gmGap, toGm ? gmGap : ubGap, 0};
}

__aicore__ inline void CsymmEpilogueTile(GM_ADDR c, const CsymmFusedTilingData& ft, const TileRegion& reg)
{
    const CsymmEpilogueTilingData& t = ft.epilogue;
    const uint32_t mSize = arch35::RoundUp(reg.rows, 2);
    const uint32_t half = mSize / 2;
    const uint32_t first = static_cast<uint32_t>(AscendC::GetSubBlockIdx()) * half;
    const uint32_t rows = first < reg.rows ? Min(half, reg.rows - first) : 0;
    const uint32_t pitch = arch35::RoundUp(reg.cols, CUBE_FRACTAL);
    AscendC::GlobalTensor<float> cGm;
    cGm.SetGlobalBuffer(Floats(c) + 2 * (reg.cRow0 + static_cast<uint64_t>(reg.cCol0 + first) * t.ldc),
                        rows == 0 ? 0 : static_cast<uint64_t>(rows - 1) * 2 * t.ldc + reg.cols);
    AscendC::LocalTensor<float> pUb(AscendC::TPosition::VECCALC, CS_UB_RESULT, half * pitch);
    AscendC::LocalTensor<float> cUb(AscendC::TPosition::VECCALC, CS_UB_C, half * pitch);
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(2);  // the previous tile's C left UB
    if (rows != 0) {
        AscendC::DataCopyPad(cUb, cGm, CTileCopy(t, rows, reg.cols, pitch, false),
                             AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(2);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(2);
    AscendC::CrossCoreWaitFlag<2, PIPE_V>(CS_RESULT_READY);  // the AIC's Fixpipe wrote P into this UB
    if (rows != 0) {
        asc_vf_call<CsymmEpilogueUb>(dim3{CSYMM_SIMT_THREADS, 1, 1}, pUb.GetPhyAddr(), cUb.GetPhyAddr(), t, rows,
                                     reg.cols, pitch);
    }
    AscendC::CrossCoreSetFlag<2, PIPE_V>(CS_RESULT_FREE);  // V has read P: the AIC may write the next tile's
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(2);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(2);
    if (rows != 0) {
        AscendC::DataCopyPad(cGm, cUb, CTileCopy(t, rows, reg.cols, pitch, true));
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(2);
}

/* The vector cores' part of the GEMM path: panels for every K chunk of every tile of their AI core, and the
 * epilogue of each tile when beta != 0. */
__aicore__ inline void CsymmVectorSide(GM_ADDR a, GM_ADDR b, GM_ADDR c, const CsymmFusedTilingData& ft)
{
    const CsymmGemmTilingData& t = ft.gemm;
    const uint32_t realK = 2 * t.k;
    uint32_t chunks = 0;
    uint32_t slotCount = 0;
    AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(0);
    AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(1);
    AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(2);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(CS_EV_SRC);
    for (uint32_t tile = FirstTile(); tile < t.tileCount; tile += TileStep()) {
        const TileRegion reg = RegionOf(tile, t);
        for (uint32_t kOff = 0; kOff < realK; kOff += t.chunkK, ++chunks) {
            const uint32_t half = chunks & 1;
            if (chunks >= 2) {
                AscendC::CrossCoreWaitFlag<2, PIPE_MTE3>(CS_PANEL_FREE + half);  // the AIC's MTE1 has read it
            }
            CsymmHandChunk(a, b, ft, reg, kOff, Min(t.chunkK, realK - kOff), half, slotCount);
            AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(CS_PANEL_READY + half);
        }
        if (ft.withEpilogue != 0) {
            CsymmEpilogueTile(c, ft, reg);
        }
    }
    for (uint32_t u = chunks >= 2 ? chunks - 2 : 0; u < chunks; ++u) {  // the last two hand-backs
        AscendC::CrossCoreWaitFlag<2, PIPE_MTE3>(CS_PANEL_FREE + (u & 1));
    }
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(1);
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(2);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(CS_EV_SRC);
}

// ---- 2./3. the cube side ----------------------------------------------------------------------------------------

/* Every tile of this AI core: L0C = sum over the products of the panels the AIVs hand over, per K chunk; then C
 * (beta == 0, L0C -> GM) or the AIVs' UB (L0C -> UB, dual destination). */
__aicore__ inline void CsymmTiles(GM_ADDR c, const CsymmFusedTilingData& ft, uint32_t terms)
{
    const CsymmGemmTilingData& t = ft.gemm;
    const uint32_t realK = 2 * t.k;
    const auto o = arch35::GmTensor(c, arch35::RowMajorLayout(t.n, t.ldOut));
    arch35::PingPong pp;
    uint32_t results = 0;
    for (uint32_t tile = FirstTile(); tile < t.tileCount; tile += TileStep()) {
        const TileRegion reg = RegionOf(tile, t);
        arch35::AcquireL0C(pp);
        for (uint32_t kOff = 0; kOff < realK; kOff += t.chunkK) {
            const uint32_t curK = Min(t.chunkK, realK - kOff);
            const uint16_t half = static_cast<uint16_t>(pp.l1Count & 1);
            AscendC::CrossCoreWaitFlag<2, PIPE_MTE1>(CS_PANEL_READY + half);  // both AIVs' pieces are in L1
            arch35::MmadChunk(half * arch35::L1_HALF, terms, reg.rows, reg.cols, curK, kOff == 0,
                              kOff + curK >= realK, pp, terms == 3);
            AscendC::CrossCoreSetFlag<2, PIPE_MTE1>(CS_PANEL_FREE + half);  // MTE1 has read the half
            ++pp.l1Count;
        }
        if (ft.withEpilogue == 0) {
            arch35::Fixpipe(o, reg.cCol0, 2 * reg.cRow0, reg.rows, reg.cols, pp);
            continue;
        }
        if (results++ != 0) {
            AscendC::CrossCoreWaitFlag<2, PIPE_FIX>(CS_RESULT_FREE);  // both AIVs have read the previous result
        }
        const uint16_t buf = pp.L0CBuffer();
        AscendC::SetFlag<AscendC::HardEvent::M_FIX>(buf);
        AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(buf);
        AscendC::FixpipeParamsArch3510<AscendC::CO2Layout::ROW_MAJOR> fp;
        fp.nSize = static_cast<uint16_t>(arch35::RoundUp(reg.cols, CUBE_FRACTAL));
        fp.mSize = static_cast<uint16_t>(arch35::RoundUp(reg.rows, 2));
        fp.srcStride = static_cast<uint16_t>(arch35::RoundUp(reg.rows, CUBE_FRACTAL));
        fp.dstStride = fp.nSize;
        fp.dualDstCtl = 1;  // rows [0, mSize/2) to AIV0's UB, the rest to AIV1's
        /* The tile's last Mmad set the L0C blocks' unit flags (MmadChunk: unitFlag 3); this Fixpipe reads and resets
         * them, as the GM path's does (asc-devkit TensorAPI UnitFlag.md: Mmad and Fixpipe enable it together). */
        fp.unitFlag = arch35::FINAL_ACCUMULATION;
        AscendC::LocalTensor<float> l0c(AscendC::TPosition::CO1, buf * arch35::L0C_HALF,
                                        fp.srcStride * fp.nSize);
        AscendC::LocalTensor<float> ub(AscendC::TPosition::VECCALC, CS_UB_RESULT, fp.mSize / 2 * fp.nSize);
        AscendC::Fixpipe<float, float, CS_CFG_ROW_MAJOR_UB>(ub, l0c, fp);
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(CS_RESULT_READY);
        AscendC::SetFlag<AscendC::HardEvent::FIX_M>(buf);
        ++pp.l0cCount;
    }
    if (results != 0) {
        AscendC::CrossCoreWaitFlag<2, PIPE_FIX>(CS_RESULT_FREE);
    }
}

__aicore__ inline void CsymmGemm(GM_ADDR c, const CsymmFusedTilingData& ft)
{
    arch35::CubeBegin();
    if (ft.gemm.split != 0) {  // hi*hi + hi*lo + lo*hi: Mmad rounds L and R to their hi parts itself
        AscendC::SetHF32Mode(AscendC::HF32Mode::ENABLE);
        AscendC::SetHF32TransMode(AscendC::HF32TransMode::NEAREST_EVEN);
        CsymmTiles(c, ft, 3);
        AscendC::SetHF32Mode(AscendC::HF32Mode::DISABLE);
    } else {
        CsymmTiles(c, ft, 1);
    }
    arch35::CubeEnd();
}

// ---- 2b. plain fp32 on the vector cores: the NaN fallback and the vector path ------------------------------------

/* C = alpha * op(A, B) + beta * C in plain fp32 straight from A and B, one SIMT thread per complex element of C,
 * elements [e0, e1) of C's m x n (element e: row e % m, column e / m, so consecutive threads write consecutive
 * elements): the NaN fallback (NaN never enters Mmad) and, for small shapes, the whole call (csymm_vector). Index:
 * uint32_t where Fits32(e1), else uint64_t. */
template <typename Index>
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmPlainElements(
    __gm__ float* a, __gm__ float* b, __gm__ float* c, CsymmPrepareTilingData t, CsymmEpilogueTilingData e,
    Index e0, Index e1)
{
    const uint64_t realK = 2 * static_cast<uint64_t>(t.k);
    const Index m = t.m;
    for (Index el = e0 + static_cast<Index>(threadIdx.x); el < e1; el += static_cast<Index>(blockDim.x)) {
        const uint64_t i = el % m;
        const uint64_t row = el / m;  // engine row = column of C
        float re = 0.0f;
        float im = 0.0f;
        for (uint64_t q = 0; q < realK; ++q) {
            const float l = EngineL(a, b, t, row, q);
            re += l * EngineR(a, b, t, q, 2 * i);
            im += l * EngineR(a, b, t, q, 2 * i + 1);
        }
        const uint64_t ci = 2 * (i + row * e.ldc);
        if (e.epilogue == CS_EPILOGUE_BETA_ONE) {
            re += c[ci];
            im += c[ci + 1];
        } else if (e.epilogue != CS_EPILOGUE_BETA_ZERO) {
            const float oldRe = c[ci];
            const float oldIm = c[ci + 1];
            re += e.betaReal * oldRe - e.betaImag * oldIm;
            im += e.betaReal * oldIm + e.betaImag * oldRe;
        }
        c[ci] = re;
        c[ci + 1] = im;
    }
}

/* This vector core's share of CsymmPlainElements: ceil(m n / cores) consecutive elements of C. */
__aicore__ inline void CsymmPlainCore(GM_ADDR a, GM_ADDR b, GM_ADDR c, const CsymmPrepareTilingData& t,
                                      const CsymmEpilogueTilingData& e, uint64_t core, uint64_t cores)
{
    const uint64_t elements = static_cast<uint64_t>(t.m) * t.n;
    const uint64_t each = (elements + cores - 1) / cores;
    const uint64_t e0 = core * each;
    const uint64_t e1 = e0 + each < elements ? e0 + each : elements;
    if (e0 < e1 && Fits32(e1)) {
        asc_vf_call<CsymmPlainElements<uint32_t>>(dim3{CSYMM_SIMT_THREADS, 1, 1}, Floats(a), Floats(b), Floats(c), t,
                                                  e, static_cast<uint32_t>(e0), static_cast<uint32_t>(e1));
    } else if (e0 < e1) {
        asc_vf_call<CsymmPlainElements<uint64_t>>(dim3{CSYMM_SIMT_THREADS, 1, 1}, Floats(a), Floats(b), Floats(c), t,
                                                  e, e0, e1);
    }
}

// ---- 4. scale ---------------------------------------------------------------------------------------------------

/* C = beta * C over columns col0..col1-1 of C (alpha == 0; BETA_ZERO: C = 0, unread). */
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmScaleColumns(
    __gm__ float* c, CsymmEpilogueTilingData t, uint32_t col0, uint32_t col1)
{
    for (uint32_t col = col0; col < col1; ++col) {
        for (uint32_t row = threadIdx.x; row < t.m; row += blockDim.x) {
            const uint64_t ci = 2 * (row + static_cast<uint64_t>(col) * t.ldc);
            float re = 0.0f;
            float im = 0.0f;
            if (t.epilogue != CS_EPILOGUE_BETA_ZERO) {
                re = t.betaReal * c[ci] - t.betaImag * c[ci + 1];
                im = t.betaReal * c[ci + 1] + t.betaImag * c[ci];
            }
            c[ci] = re;
            c[ci + 1] = im;
        }
    }
}

}  // namespace

extern "C" __global__ __aicore__ void csymm_fused(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR nanFlag,
                                                 CsymmFusedTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        CsymmScanCore(a, b, nanFlag, tiling.prepare);
    }
    AscendC::SyncAll<false>();  // the NaN flag is in GM for every core
    const bool nan = arch35::NanSeen(nanFlag, tiling.prepare.nanEpoch);
    if ASCEND_IS_AIC {
        if (!nan) {
            CsymmGemm(c, tiling);  // nothing when the flag is set
        }
    } else if (nan) {
        CsymmPlainCore(a, b, c, tiling.prepare, tiling.epilogue, AscendC::GetBlockIdx(),
                       AscendC::GetBlockNum() * AscendC::GetTaskRatio());
    } else {
        CsymmVectorSide(a, b, c, tiling);
    }
}

extern "C" __global__ __aicore__ void csymm_vector(GM_ADDR a, GM_ADDR b, GM_ADDR c, CsymmPrepareTilingData prepare,
                                                  CsymmEpilogueTilingData epilogue)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    CsymmPlainCore(a, b, c, prepare, epilogue, AscendC::GetBlockIdx(), AscendC::GetBlockNum());
}

extern "C" __global__ __aicore__ void csymm_scale(GM_ADDR c, CsymmEpilogueTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    const uint32_t col0 = AscendC::GetBlockIdx() * tiling.colsPerCore;
    const uint32_t col1 = Min(col0 + tiling.colsPerCore, tiling.n);
    if (col0 < col1) {
        asc_vf_call<CsymmScaleColumns>(dim3{CSYMM_SIMT_THREADS, 1, 1}, Floats(c), tiling, col0, col1);
    }
}

namespace {
uint8_t* Gm(const void* p) { return static_cast<uint8_t*>(const_cast<void*>(p)); }
}  // namespace

void csymm_fused_kernel_do(uint32_t numBlocks, void* stream, const void* a, const void* b, void* c, void* nanFlag,
                           const CsymmFusedTilingData& tiling)
{
    csymm_fused<<<numBlocks, nullptr, stream>>>(Gm(a), Gm(b), Gm(c), Gm(nanFlag), tiling);
}

void csymm_vector_kernel_do(uint32_t numBlocks, void* stream, const void* a, const void* b, void* c,
                            const CsymmPrepareTilingData& prepare, const CsymmEpilogueTilingData& epilogue)
{
    csymm_vector<<<numBlocks, nullptr, stream>>>(Gm(a), Gm(b), Gm(c), prepare, epilogue);
}

void csymm_scale_kernel_do(uint32_t numBlocks, void* stream, void* c, const CsymmEpilogueTilingData& tiling)
{
    csymm_scale<<<numBlocks, nullptr, stream>>>(Gm(c), tiling);
}
