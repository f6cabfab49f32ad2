// The body shared by kernels/vector_kernels_scalar.cc, _avx2.cc and _avx512.cc: the V16 kernel
// templates and this ISA's VectorKernelTable. Included once per ISA inside namespace
// anchorage::kernels::isa_<name>, after kernels/simd/v16.h (which defines that namespace's V16)
// and kernels/vector_kernel_table.h. Includes only the *_impl.h bodies, which include nothing.

// Order matters (each body uses the ones before it), so the sorter is kept off.
// clang-format off
#include "kernels/blocks_impl.h"
#include "kernels/exp_impl.h"
#include "kernels/activation_impl.h"
#include "kernels/norm_impl.h"
#include "kernels/rope_impl.h"
#include "kernels/conv1d_impl.h"
#include "kernels/gdn_impl.h"
#include "kernels/argmax_impl.h"
#include "kernels/simd/v16_probe_impl.h"
// clang-format on

const VectorKernelTable kVectorKernels = {
    .rmsnorm = rmsnorm_any,
    .l2norm_heads = l2norm_heads_rows,
    .gated_rmsnorm = gated_rmsnorm_rows,
    .swiglu = swiglu_n,
    .mul_sigmoid = mul_sigmoid_rows,
    .add = add_n,
    .exp = exp_n,
    .rope_rotate = rope_rotate_token,
    .conv1d_silu = conv1d_silu_rows,
    .gdn_columns = gdn_columns,
    .argmax = argmax_n,
    .test_v16_op = v16_probe,
};
