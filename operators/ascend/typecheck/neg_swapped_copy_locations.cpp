/* Negative control for `harness check-kernels`: a GM -> L1 copy called with destination and source swapped. The
 * tensor_api copy checks where each tensor lives, so this file must FAIL the check. Never built.
 * expect-error: CopyGM2L1 requires destination on L1
 * expect-error: CopyGM2L1 requires source on GM
 */
#include "kernel_operator.h"
#include "tensor_api/tensor.h"

namespace te = AscendC::Te;

extern "C" __global__ __aicore__ void neg_swapped_copy_locations(GM_ADDR src)
{
    auto gm = te::MakeTensor(te::MakeMemPtr<te::Location::GM>(reinterpret_cast<__gm__ float*>(src)),
                             te::MakeFrameLayout<te::NDExtLayoutPtn>(16, 16));
    auto l1 = te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(0),
                             te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<8>>(16, 16));
    te::Copy(te::MakeCopy(te::CopyGM2L1{}), gm.Slice(te::MakeCoord(0, 0), te::MakeShape(16, 16)), l1);
}
