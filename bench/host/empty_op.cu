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

// The same, with mate's `.out` schema: the dispatcher's argument handling for mate's argument list
// (an int[], optional tensors, optional ints) is part of the floor, not of mate's cost.
void empty_mate_cuda(const at::Tensor& x, const at::Tensor&, c10::IntArrayRef, const at::Tensor&,
                     const std::optional<at::Tensor>&, const std::optional<at::Tensor>&, const std::optional<at::Tensor>&,
                     int64_t, std::optional<int64_t>, const std::optional<at::Tensor>&, const at::Tensor& out) {
  empty_cuda(x, out);
}
void empty_mate_nothing(const at::Tensor&, const at::Tensor&, c10::IntArrayRef, const at::Tensor&,
                        const std::optional<at::Tensor>&, const std::optional<at::Tensor>&,
                        const std::optional<at::Tensor>&, int64_t, std::optional<int64_t>,
                        const std::optional<at::Tensor>&, const at::Tensor&) {}

// CPU and Meta: nothing to do (lets bench/host_cost.py's --device cpu smoke run use the same op).
void empty_nothing(const at::Tensor&, const at::Tensor&) {}

}  // namespace

TORCH_LIBRARY(mate_bench, m) {
  m.def("empty(Tensor x, *, Tensor(a!) out) -> ()");
  m.def("empty_mate(Tensor x, Tensor qweight, int[] frame_meta, Tensor scales, Tensor? zeros=None, Tensor? perm=None, "
        "Tensor? bias=None, int group_size=-1, int? num_sms=None, Tensor? workspace=None, *, Tensor(a!) out) -> ()");
}
TORCH_LIBRARY_IMPL(mate_bench, CUDA, m) {
  m.impl("empty", &empty_cuda);
  m.impl("empty_mate", &empty_mate_cuda);
}
TORCH_LIBRARY_IMPL(mate_bench, CPU, m) {
  m.impl("empty", &empty_nothing);
  m.impl("empty_mate", &empty_mate_nothing);
}
TORCH_LIBRARY_IMPL(mate_bench, Meta, m) {
  m.impl("empty", &empty_nothing);
  m.impl("empty_mate", &empty_mate_nothing);
}
