// BITCAST: the input's bytes reinterpreted as the output tensor's type (TFLite semantics). Same
// element size: same shape; a larger input element: one more trailing dim of size in/out; a
// smaller input element: the last dim must equal out/in and is dropped.
#include <cstring>

#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

Status BitcastPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  const size_t si = DTypeSize(in.type), so = DTypeSize(out.type);
  if (si == 0) return ctx.Error(std::string("input has unsupported type ") + DTypeName(in.type));
  if (so == 0) return ctx.Error(std::string("output has unsupported type ") + DTypeName(out.type));
  Dims shape = in.shape;
  if (si > so) {
    if (si % so != 0) return ctx.Error("input element size is not a multiple of the output's");
    shape.push_back(int32_t(si / so));
  } else if (si < so) {
    if (so % si != 0) return ctx.Error("output element size is not a multiple of the input's");
    if (shape.empty() || size_t(shape.back()) != so / si)
      return ctx.Error(std::string("bitcast from ") + DTypeName(in.type) + " to " + DTypeName(out.type) +
                       " needs a last input dim of " + std::to_string(so / si) + ", got shape " +
                       DimsToString(in.shape));
    shape.pop_back();
  }
  return ctx.SetOutputShape(0, shape);
}

Status BitcastEval(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const size_t n = size_t(in.num_elements()) * DTypeSize(in.type);
  if (n > 0 && in.data != out.data) std::memmove(out.data, in.data, n);
  return OkStatus();
}

}  // namespace

const OpImpl kOp_BITCAST = {nullptr, BitcastPrepare, BitcastEval, nullptr, false};

}  // namespace tflite_gpu
