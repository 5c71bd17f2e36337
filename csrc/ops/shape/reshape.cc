// RESHAPE, SHAPE, DEPTH_TO_SPACE, SPACE_TO_DEPTH.
#include <climits>

#include "ops/quant_common.h"
#include "ops/shape/shape_common.h"

namespace tflite_gpu {
namespace {

using namespace shape_ops;

// ---------------------------------------------------------------------------------------------
// RESHAPE
// Source of the new shape, as TFLite decides: the 2nd input when it is a 1-D INT32 tensor (its
// values; the output is dynamic if it is not constant), otherwise ReshapeOptions.new_shape
// ([0] is the legacy spelling of a scalar; an absent new_shape means a scalar). One -1 is
// inferred; the element counts must agree.
// ---------------------------------------------------------------------------------------------
struct ReshapeParams {
  std::vector<int32_t> new_shape;
};

Status ReshapeParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<ReshapeParams>();
  p->new_shape = opts.GetInts(0);
  if (p->new_shape.size() > 8)
    return InvalidArgument("RESHAPE: new_shape has " + std::to_string(p->new_shape.size()) + " dimensions (at most 8)");
  node.params = p;
  return OkStatus();
}

bool ReshapeUsesShapeTensor(OpContext& ctx) {
  if (ctx.num_inputs() != 2 || !ctx.has_input(1)) return false;
  const Tensor& s = ctx.input(1);
  return s.shape.size() == 1 && s.type == DType::kInt32;
}

Status ReshapeResolve(OpContext& ctx, Dims* os) {
  const auto& p = ctx.node().P<ReshapeParams>();
  std::vector<int64_t> shape;
  if (ReshapeUsesShapeTensor(ctx)) {
    TFG_RETURN_IF_ERROR(ReadInts(ctx, ctx.input(1), "shape", &shape));
  } else {
    shape.assign(p.new_shape.begin(), p.new_shape.end());
    if (shape.size() == 1 && shape[0] == 0) shape.clear();  // legacy scalar
  }
  const Tensor& in = ctx.input(0);
  int64_t num_in = 1, nz_in = 1;
  for (int32_t d : in.shape) {
    num_in *= d;
    if (d != 0) nz_in *= d;
  }
  constexpr int64_t kLimit = int64_t(1) << 40;
  int64_t num_out = 1, nz_out = 1;
  int stretch = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t v = shape[i];
    if (v == -1) {
      if (stretch != -1) return ctx.Error("new shape has more than one -1 dimension");
      stretch = int(i);
      continue;
    }
    if (v < 0 || v > INT32_MAX) return ctx.Error("invalid dimension " + std::to_string(v) + " in the new shape");
    if (v != 0) nz_out *= v;
    num_out *= v;
    if (nz_out > kLimit) return ctx.Error("new shape is too large");
  }
  if (stretch != -1) {
    shape[stretch] = (num_in == 0 && num_out != 0) ? 0 : nz_in / nz_out;
    num_out *= shape[stretch];
  }
  os->clear();
  for (int64_t v : shape) os->push_back(int32_t(v));
  if (num_in != num_out)
    return ctx.Error("cannot reshape " + DimsToString(in.shape) + " (" + std::to_string(num_in) + " elements) to " +
                     DimsToString(*os) + " (" + std::to_string(num_out) + " elements)");
  return OkStatus();
}

Status ReshapePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 2, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("input is missing");
  const Tensor& in = ctx.input(0);
  if (DTypeSize(in.type) == 0) return ctx.Error(std::string("unsupported input type ") + DTypeName(in.type));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  if (ReshapeUsesShapeTensor(ctx) && !ctx.IsConstantOrPersistent(ctx.input(1))) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  Dims os;
  TFG_RETURN_IF_ERROR(ReshapeResolve(ctx, &os));
  return ctx.SetOutputShape(0, os);
}

Status ReshapeEval(OpContext& ctx) {
  Dims os;
  TFG_RETURN_IF_ERROR(ReshapeResolve(ctx, &os));
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, os));
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckHasData(ctx, in, "input"));
  Tensor& out = ctx.output(0);
  const size_t bytes = size_t(in.num_elements()) * DTypeSize(in.type);
  if (out.data != in.data) Copy(out.data, in.data, bytes);
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// SHAPE
// ---------------------------------------------------------------------------------------------
struct ShapeParams {
  int out_type = 0;
};

Status ShapeParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<ShapeParams>();
  // TFLite leaves out_type unset (an error at prepare) when the options table is absent.
  p->out_type = opts.table.valid() ? opts.Get<int8_t>(0, 0) : -1;
  node.params = p;
  return OkStatus();
}

Status ShapePrepare(OpContext& ctx) {
  const auto& p = ctx.node().P<ShapeParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("input is missing");
  DType t = static_cast<DType>(p.out_type);
  if (t != DType::kInt32 && t != DType::kInt64)
    return ctx.Error(p.out_type < 0 ? std::string("ShapeOptions are missing (out_type must be INT32 or INT64)")
                                    : "out_type " + std::string(DTypeKnown(p.out_type) ? DTypeName(t) : "?") +
                                          " is not supported (INT32 or INT64)");
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, t));
  return ctx.SetOutputShape(0, Dims{int32_t(ctx.input(0).shape.size())});
}

Status ShapeEval(OpContext& ctx) {
  const Dims& s = ctx.input(0).shape;
  TFG_RETURN_IF_ERROR(SetOrCheckShape(ctx, 0, Dims{int32_t(s.size())}));
  Tensor& out = ctx.output(0);
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.type == DType::kInt32) out.as<int32_t>()[i] = s[i];
    else out.as<int64_t>()[i] = s[i];
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// DEPTH_TO_SPACE / SPACE_TO_DEPTH (NHWC, DCR order as TensorFlow)
// ---------------------------------------------------------------------------------------------
struct BlockParams {
  int block_size = 0;
};

Status BlockParse(const OptionsView& opts, Node& node) {
  auto p = std::make_shared<BlockParams>();
  p->block_size = opts.Get<int32_t>(0, 0);
  node.params = p;
  return OkStatus();
}

Status BlockCheck(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("input is missing");
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(CheckMovable(ctx, in, "input"));
  TFG_RETURN_IF_ERROR(CheckSameType(ctx, ctx.output(0), in, "output", "input"));
  if (in.shape.size() != 4) return ctx.Error("input must be 4-D (NHWC), got " + DimsToString(in.shape));
  if (ctx.node().P<BlockParams>().block_size <= 0)
    return ctx.Error("block_size must be positive, got " + std::to_string(ctx.node().P<BlockParams>().block_size));
  return OkStatus();
}

Status DepthToSpacePrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  TFG_RETURN_IF_ERROR(BlockCheck(ctx));
  const int64_t bs = ctx.node().P<BlockParams>().block_size;
  const Dims& s = ctx.input(0).shape;
  if (s[3] % (bs * bs) != 0)
    return ctx.Error("input depth " + std::to_string(s[3]) + " is not divisible by block_size^2 = " + std::to_string(bs * bs));
  int64_t oh = s[1] * bs, ow = s[2] * bs;
  if (oh > INT32_MAX || ow > INT32_MAX) return ctx.Error("output size overflows int32");
  return ctx.SetOutputShape(0, Dims{s[0], int32_t(oh), int32_t(ow), int32_t(s[3] / (bs * bs))});
}

Status SpaceToDepthPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(quant::ValidateNodeQuant(ctx));
  TFG_RETURN_IF_ERROR(BlockCheck(ctx));
  const int64_t bs = ctx.node().P<BlockParams>().block_size;
  const Dims& s = ctx.input(0).shape;
  if (s[1] % bs != 0 || s[2] % bs != 0)
    return ctx.Error("input height " + std::to_string(s[1]) + " and width " + std::to_string(s[2]) +
                     " must be divisible by block_size " + std::to_string(bs));
  int64_t oc = s[3] * bs * bs;
  if (oc > INT32_MAX) return ctx.Error("output depth overflows int32");
  return ctx.SetOutputShape(0, Dims{s[0], int32_t(s[1] / bs), int32_t(s[2] / bs), int32_t(oc)});
}

Status DepthToSpaceEval(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int64_t bs = ctx.node().P<BlockParams>().block_size;
  const int64_t es = int64_t(DTypeSize(in.type));
  const int64_t N = in.shape[0], H = in.shape[1], W = in.shape[2], C = in.shape[3];
  const int64_t OC = C / (bs * bs), OH = H * bs, OW = W * bs;
  const int64_t run = bs * OC * es;  // one input pixel's slice for one output row
  const uint8_t* src = in.as<uint8_t>();
  uint8_t* dst = out.as<uint8_t>();
  ParallelFor(ctx.pool(), N * H * W, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      int64_t w = it % W, h = (it / W) % H, n = it / W / H;
      for (int64_t dy = 0; dy < bs; ++dy)
        Copy(dst + (((n * OH + h * bs + dy) * OW + w * bs) * OC) * es, src + (it * C + dy * bs * OC) * es, size_t(run));
    }
  }, MinChunk(C * es));
  return OkStatus();
}

Status DepthToSpaceEvalRef(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int64_t bs = ctx.node().P<BlockParams>().block_size;
  const size_t es = DTypeSize(in.type);
  const int64_t H = in.shape[1], W = in.shape[2], C = in.shape[3];
  const int64_t OH = out.shape[1], OW = out.shape[2], OC = out.shape[3];
  const int64_t total = out.num_elements();
  for (int64_t o = 0; o < total; ++o) {
    int64_t c = o % OC, ow = (o / OC) % OW, oh = (o / OC / OW) % OH, n = o / OC / OW / OH;
    int64_t ic = ((oh % bs) * bs + ow % bs) * OC + c;
    int64_t s = ((n * H + oh / bs) * W + ow / bs) * C + ic;
    std::memcpy(out.data + o * es, in.data + s * es, es);
  }
  return OkStatus();
}

Status SpaceToDepthEval(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int64_t bs = ctx.node().P<BlockParams>().block_size;
  const int64_t es = int64_t(DTypeSize(in.type));
  const int64_t N = in.shape[0], H = in.shape[1], W = in.shape[2], C = in.shape[3];
  const int64_t OH = H / bs, OW = W / bs, OC = C * bs * bs;
  const int64_t run = bs * C * es;
  const uint8_t* src = in.as<uint8_t>();
  uint8_t* dst = out.as<uint8_t>();
  ParallelFor(ctx.pool(), N * OH * OW, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      int64_t ow = it % OW, oh = (it / OW) % OH, n = it / OW / OH;
      for (int64_t dy = 0; dy < bs; ++dy)
        Copy(dst + (it * OC + dy * bs * C) * es, src + (((n * H + oh * bs + dy) * W + ow * bs) * C) * es, size_t(run));
    }
  }, MinChunk(OC * es));
  return OkStatus();
}

Status SpaceToDepthEvalRef(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int64_t bs = ctx.node().P<BlockParams>().block_size;
  const size_t es = DTypeSize(in.type);
  const int64_t H = in.shape[1], W = in.shape[2], C = in.shape[3];
  const int64_t OH = out.shape[1], OW = out.shape[2], OC = out.shape[3];
  const int64_t total = out.num_elements();
  for (int64_t o = 0; o < total; ++o) {
    int64_t d = o % OC, ow = (o / OC) % OW, oh = (o / OC / OW) % OH, n = o / OC / OW / OH;
    int64_t c = d % C, dx = (d / C) % bs, dy = d / C / bs;
    int64_t s = ((n * H + oh * bs + dy) * W + ow * bs + dx) * C + c;
    std::memcpy(out.data + o * es, in.data + s * es, es);
  }
  return OkStatus();
}

}  // namespace

// Like TFLite, a reshape of a constant is computed once at allocation.
const OpImpl kOp_RESHAPE = {ReshapeParse, ReshapePrepare, ReshapeEval, nullptr, true};
const OpImpl kOp_SHAPE = {ShapeParse, ShapePrepare, ShapeEval, nullptr, false};
const OpImpl kOp_DEPTH_TO_SPACE = {BlockParse, DepthToSpacePrepare, DepthToSpaceEval, DepthToSpaceEvalRef, false};
const OpImpl kOp_SPACE_TO_DEPTH = {BlockParse, SpaceToDepthPrepare, SpaceToDepthEval, SpaceToDepthEvalRef, false};

}  // namespace tflite_gpu
