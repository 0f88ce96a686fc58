/* Negative control for `harness check-kernels`: Mmad with the L0C accumulator and the L0A operand swapped. The
 * tensor_api Mmad checks operand locations, so this file must FAIL the check. Never built.
 * expect-error: When Mmad, dst tensor must be from L0C.
 * expect-error: When Mmad, fm tensor must be from L0A.
 */
#include "kernel_operator.h"
#include "tensor_api/tensor.h"

namespace te = AscendC::Te;

extern "C" __global__ __aicore__ void neg_mmad_operand_order(GM_ADDR unused)
{
    (void)unused;
    auto tensorA = te::MakeTensor(te::MakeMemPtr<te::Location::L0A, float>(0),
                                  te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<8>>(16, 8));
    auto tensorB = te::MakeTensor(te::MakeMemPtr<te::Location::L0B, float>(0),
                                  te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<8>>(8, 16));
    auto tensorC = te::MakeTensor(te::MakeMemPtr<te::Location::L0C, float>(0),
                                  te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<16>>(16, 16));
    te::MmadParams params{16, 16, 8, 3, true};
    te::Mmad(te::MmadAtom<te::MmadTraits<te::MmadOperation>>{}.with(params), tensorA, tensorC, tensorB);
}
