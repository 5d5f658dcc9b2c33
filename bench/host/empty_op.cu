// The dispatcher's floor for bench/host_cost.py: an op on the same path as mate's `.out` overload
// (TORCH_LIBRARY schema with a mutable `out`, CUDA kernel registered from C++, launch on torch's
// current stream) whose kernel does nothing. mate's eager cost minus this op's is what mate adds.
#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

__global__ void mate_bench_empty_kernel() {}

namespace {

void empty_cuda(const at::Tensor& x, const at::Tensor& out) {
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(x.device().index()).stream();
  mate_bench_empty_kernel<<<1, 1, 0, stream>>>();
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// CPU and Meta: nothing to do (lets bench/host_cost.py's --device cpu smoke run use the same op).
void empty_nothing(const at::Tensor&, const at::Tensor&) {}

}  // namespace

TORCH_LIBRARY(mate_bench, m) { m.def("empty(Tensor x, *, Tensor(a!) out) -> ()"); }
TORCH_LIBRARY_IMPL(mate_bench, CUDA, m) { m.impl("empty", &empty_cuda); }
TORCH_LIBRARY_IMPL(mate_bench, CPU, m) { m.impl("empty", &empty_nothing); }
TORCH_LIBRARY_IMPL(mate_bench, Meta, m) { m.impl("empty", &empty_nothing); }
