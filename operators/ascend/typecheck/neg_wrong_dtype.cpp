/* Negative control for `harness check-kernels`: Mmad into an int32 L0C accumulator from half L0A/L0B. The
 * tensor_api data-type checks reject the combination, so this file must FAIL the check. Never built.
 * expect-error: The data type is not supported for L0C position.
 */
#include "kernel_operator.h"
#include "tensor_api/tensor.h"

namespace te = AscendC::Te;

extern "C" __global__ __aicore__ void neg_wrong_dtype(GM_ADDR unused)
{
    (void)unused;
    auto tensorA = te::MakeTensor(te::MakeMemPtr<te::Location::L0A, half>(0),
                                  te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<16>>(16, 16));
    auto tensorB = te::MakeTensor(te::MakeMemPtr<te::Location::L0B, half>(0),
                                  te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<16>>(16, 16));
    auto tensorC = te::MakeTensor(te::MakeMemPtr<te::Location::L0C, int32_t>(0),
                                  te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<16>>(16, 16));
    te::MmadParams params{16, 16, 16, 3, true};
    te::Mmad(te::MmadAtom<te::MmadTraits<te::MmadOperation>>{}.with(params), tensorC, tensorA, tensorB);
}
