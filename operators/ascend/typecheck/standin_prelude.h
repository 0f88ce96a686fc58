/*
 * Hand-written part of the permissive intrinsic stand-in used by `harness check-kernels` (not shipped, not built).
 *
 * In an ASCENDC_CPU_DEBUG build the closed `stub_fun.h` declares every CCE builtin. The check generates a
 * replacement from the identifiers g++ reports as undeclared; this prelude holds what a generator cannot guess:
 * the value type every stand-in intrinsic returns, the SIMT built-in variables, and the `<<<>>>` launch target.
 * Raw intrinsics therefore accept anything: the check is only as strong as the typed asc-devkit layers above them.
 */
#ifndef ASC_CHECK_STANDIN_PRELUDE_H
#define ASC_CHECK_STANDIN_PRELUDE_H

#include <cstdint>

namespace asc_check {

/* Result of a stand-in intrinsic: converts to anything and combines with anything. */
struct Any {
    constexpr Any() = default;
    template <typename T>
    constexpr Any(const T&) {}
    template <typename T>
    constexpr operator T() const { return T{}; }
    template <typename T>
    constexpr Any operator[](const T&) const { return {}; }
    constexpr Any operator-() const { return {}; }
    constexpr Any operator~() const { return {}; }
    constexpr Any operator!() const { return {}; }
};

#define ASC_CHECK_BINARY(op)                                                        \
    template <typename T>                                                           \
    constexpr Any operator op(const Any&, const T&) { return {}; }                  \
    template <typename T>                                                           \
    constexpr Any operator op(const T&, const Any&) { return {}; }                  \
    constexpr Any operator op(const Any&, const Any&) { return {}; }
ASC_CHECK_BINARY(+)
ASC_CHECK_BINARY(-)
ASC_CHECK_BINARY(*)
ASC_CHECK_BINARY(/)
ASC_CHECK_BINARY(%)
ASC_CHECK_BINARY(&)
ASC_CHECK_BINARY(|)
ASC_CHECK_BINARY(^)
ASC_CHECK_BINARY(<<)
ASC_CHECK_BINARY(>>)
ASC_CHECK_BINARY(==)
ASC_CHECK_BINARY(!=)
ASC_CHECK_BINARY(<)
ASC_CHECK_BINARY(>)
ASC_CHECK_BINARY(<=)
ASC_CHECK_BINARY(>=)
#undef ASC_CHECK_BINARY

}  // namespace asc_check

/* SIMT launch geometry (cpudebug's kernel_simt_cpu.h defines the index variables with it). */
struct dim3 {
    uint32_t x = 1;
    uint32_t y = 1;
    uint32_t z = 1;
    constexpr dim3(uint32_t vx = 1, uint32_t vy = 1, uint32_t vz = 1) : x(vx), y(vy), z(vz) {}
};

/* `kernel<<<numBlocks, l2ctrl, stream>>>(args)` is rewritten to `(asc_check_launch(numBlocks, l2ctrl, stream),
 * kernel)(args)`: the launch configuration is checked against the CCE signature, the arguments against the kernel. */
inline void asc_check_launch(uint32_t numBlocks, void* l2ctrl, void* stream)
{
    (void)numBlocks;
    (void)l2ctrl;
    (void)stream;
}

#endif  // ASC_CHECK_STANDIN_PRELUDE_H
