/*
 * Build-time switches of the CPU twin, for proving that the harness catches real operator bugs.
 *
 * TWIN_MUTANT=<id> injects exactly ONE kernel bug (0 or undefined: none). Each bug is a small `#if` block at the exact
 * spot where a real implementation could get it wrong. harness.backends.build.MUTANTS reads the table below (the
 * `#define TWIN_MUTANT_<NAME> <id>  // description` lines), so this list is the single source of truth.
 *
 * TWIN_SLOWDOWN_PCT=<p> makes every operator call busy-wait p% of its own measured duration after it finishes, so a
 * build with p = 5 is ~5% slower: a known regression for `harness compare` / `harness ab` to find.
 */
#ifndef TWIN_MUTANTS_H
#define TWIN_MUTANTS_H

#ifndef TWIN_MUTANT
#define TWIN_MUTANT 0
#endif

#ifndef TWIN_SLOWDOWN_PCT
#define TWIN_SLOWDOWN_PCT 0
#endif

#define TWIN_MUTANT_CONJUGATED_A 1       // csymm: reflected A elements conjugated (Hermitian instead of symmetric)
#define TWIN_MUTANT_WRONG_TRIANGLE 2     // csymm: A read from the triangle opposite to uplo
#define TWIN_MUTANT_LDA_IGNORED 3        // lda treated as the compact leading dimension (csymm: dim A, sgemm: rows)
#define TWIN_MUTANT_BETA0_READS_C 4      // beta == 0 still computes beta * oldC, so 0 * NaN leaks NaN into C
#define TWIN_MUTANT_ALPHA_BETA_SWAPPED 5 // epilogue uses beta for the product and alpha for old C
#define TWIN_MUTANT_TAIL_ROW_DROPPED 6   // last row of C not written when the row count leaves a tail tile
#define TWIN_MUTANT_WRITES_LD_PADDING 7  // writes 0 into C's ld padding (row m of each column) when ldc > m
#define TWIN_MUTANT_WRITES_PAST_END 8    // writes one element just past the last element of each C / C_i
#define TWIN_MUTANT_STRIDE0_COMPACT 9    // sgemm: strideA/strideB == 0 treated as the compact stride (no broadcast)
#define TWIN_MUTANT_TRANS_IGNORED 10     // sgemm: transA and transB read as N (may read out of bounds if k > m, n)
#define TWIN_MUTANT_FP16_ACCUM 11        // accumulator rounded to 11 significant bits after every K chunk
#define TWIN_MUTANT_ENUM_STATUS 12       // csymm: invalid side returns INVALID_VALUE instead of INVALID_ENUM
#define TWIN_MUTANT_ALPHA0_NO_SCALE 13   // alpha == 0 (or k == 0) returns without scaling C by beta
#define TWIN_MUTANT_FAST_PATH_ODD_LDC 14 // sgemm: fast path also when ldc % 8 != 0, writing with ldc rounded up to 8
#define TWIN_MUTANT_WORKSPACE_PER_BATCH 15  // sgemm: one workspace temp per batch (grows with batchCount)

#endif  // TWIN_MUTANTS_H
