/* Generator input for `harness check-kernels`: the asc-devkit entry headers the project's kernels include. The
 * stand-in is grown until this translation unit type-checks; kernels that include more need it listed here. */
#include "kernel_operator.h"
#include "tensor_api/tensor.h"
#include "simt_api/asc_simt.h"
