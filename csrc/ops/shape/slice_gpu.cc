// GPU side of SLICE, STRIDED_SLICE:
// generators of the data movement kernels (CPU kernels: slice.cc;
// shared kernel shapes: shape_common_gpu.h).
#include "ops/shape/shape_common_gpu.h"

namespace tflite_gpu {
namespace {

using namespace shape_gpu;  // NOLINT

// ------------------------------------------------------------------------------ SLICE
Status SliceMap(const Tensor& in, const Tensor& begin, AxisMap* m) {
  std::vector<int64_t> b;
  if (!ConstInts(begin, &b)) return Unimplemented("begin must be a constant integer tensor on the GPU");
  const int rank = int(in.shape.size());
  if (int(b.size()) != rank) return Unimplemented("begin does not match the input rank");
  *m = Identity();
  for (int i = 0; i < rank; ++i) (*m)[gpu::AxisToBHWC(i, rank)].off = b[i];
  return OkStatus();
}

Status CheckSlice(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "begin"));
  TFG_RETURN_IF_ERROR(c.Constant(2, "size"));
  AxisMap m;
  return SliceMap(c.input(0), c.input(1), &m);
}

Status BuildSlice(GpuBuildContext& ctx) {
  AxisMap m;
  TFG_RETURN_IF_ERROR(SliceMap(ctx.cpu_input(0), ctx.cpu_input(1), &m));
  return BuildAffine(ctx, "slice", m);
}

// ------------------------------------------------------------------------------ STRIDED_SLICE
// The CPU op's resolution of begin / end / strides / masks, run on copies of the inputs.
Status StridedSliceMap(const Node& node, const std::function<const Tensor&(int)>& input, const Tensor& out,
                       AxisMap* m) {
  Subgraph sg;
  Node n = node;
  n.outputs.clear();
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] < 0) continue;
    const Tensor& s = input(int(i));
    Tensor t;
    t.type = s.type;
    t.shape = s.shape;
    t.is_const = s.is_const;
    t.alloc = s.alloc;
    t.data = s.data;
    t.bytes = s.bytes;
    n.inputs[i] = int(sg.tensors().size());
    sg.tensors().push_back(std::move(t));
  }
  OpContext oc(&sg, &n, nullptr);
  std::vector<int64_t> d;
  Status st = shape_ops::StridedSliceDimsOf(oc, &d);
  if (!st.ok()) return Unimplemented(st.message());
  const Dims& ishape = sg.tensor(n.inputs[0]).shape;
  const int rank = int(ishape.size()), orank = int(out.shape.size());
  AxisMap r;
  for (int a = 0; a < 4; ++a) r[a] = Affine{-1, 0, 0};
  int j = 0, k = 0;  // next input dim, next output dim
  for (size_t e = 0; e + 5 <= d.size(); e += 5) {
    const int64_t size = d[e], start = d[e + 1], stride = d[e + 2], count = d[e + 3];
    const bool shrink = d[e + 4] != 0;
    const int od = shrink ? -1 : k++;
    if (!shrink && (od >= orank || out.shape[od] != count)) return Unimplemented("unexpected strided slice geometry");
    if (size <= 1) continue;  // a new axis or a size-1 input dim: coordinate 0
    while (j < rank && ishape[j] <= 1) ++j;
    if (j >= rank || ishape[j] != size) return Unimplemented("unexpected strided slice geometry");
    const int a = gpu::AxisToBHWC(j++, rank);
    if (shrink) r[a] = Affine{-1, start, 0};
    else r[a] = Affine{gpu::AxisToBHWC(od, orank), start, stride};
  }
  if (k != orank) return Unimplemented("unexpected strided slice geometry");
  *m = r;
  return OkStatus();
}

Status CheckStridedSlice(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  for (int i = 1; i < 4; ++i) TFG_RETURN_IF_ERROR(c.Constant(i, i == 1 ? "begin" : i == 2 ? "end" : "strides"));
  AxisMap m;
  return StridedSliceMap(c.node(), [&](int i) -> const Tensor& { return c.input(i); }, c.output(0), &m);
}

Status BuildStridedSlice(GpuBuildContext& ctx) {
  AxisMap m;
  TFG_RETURN_IF_ERROR(StridedSliceMap(ctx.node(), [&](int i) -> const Tensor& { return ctx.cpu_input(i); },
                                      ctx.cpu_output(0), &m));
  return BuildAffine(ctx, "strided_slice", m);
}

}  // namespace

const GpuOpSupport kGpu_SLICE = {CheckSlice, BuildSlice, nullptr, false};
const GpuOpSupport kGpu_STRIDED_SLICE = {CheckStridedSlice, BuildStridedSlice, nullptr, false};

}  // namespace tflite_gpu
