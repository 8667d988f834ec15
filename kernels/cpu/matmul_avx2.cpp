// AVX2 matmul kernels (compiled with AVX2 flags; selected after a CPU check).
#include <immintrin.h>

#include "kernels/cpu/matmul_kernels.h"

namespace llmwb::kernels::detail {

const MatmulKernel* avx2_matmul_kernel(DType t) {
    (void)t;
    return nullptr;
}

}  // namespace llmwb::kernels::detail
