// GPU side of the shape family: data movement kernels over PHWC4 tensors (FLOAT32, rank <= 4).
//
// Two kernel shapes, both one work item per output (x, y, slice*batch):
//  * slice kernels move whole float4 slices (the channel axis maps onto the input's channel
//    axis at a multiple of 4): every layout op takes this path when the channels line up;
//  * lane kernels compute the 4 lanes one by one (each lane finds its input element and loads
//    one scalar), for channel offsets that are not a multiple of 4 and for ops that move data
//    across the channel axis.
// Index arithmetic is done on compile-time shapes, so divisions are by constants.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>

#include "gpu/gpu_op.h"
#include "ops/shape/shape_common.h"
#include "runtime/subgraph.h"

namespace tflite_gpu {
namespace {

using gpu::BHWC;
using gpu::GpuBuildContext;
using gpu::GpuCheckContext;
using gpu::KernelBuilder;

std::string Str(int64_t v) { return std::to_string(v); }

std::string FloatLit(float v) { return gpu::FloatLiteral(v); }

BHWC Shape(const Tensor& t) {
  BHWC s;
  gpu::ToBHWC(t.shape, &s);
  return s;
}

int Dim(const BHWC& s, int a) { return a == 0 ? s.b : a == 1 ? s.h : a == 2 ? s.w : s.c; }

// Values of a constant integer tensor; false when not constant or not an integer type.
bool ConstInts(const Tensor& t, std::vector<int64_t>* v) {
  if (!t.is_const || !t.data) return false;
  const int64_t n = t.num_elements();
  if (n < 0) return false;
  v->resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (t.type) {
      case DType::kInt32: (*v)[i] = t.as<int32_t>()[i]; break;
      case DType::kInt64: (*v)[i] = t.as<int64_t>()[i]; break;
      case DType::kInt16: (*v)[i] = t.as<int16_t>()[i]; break;
      case DType::kInt8: (*v)[i] = t.as<int8_t>()[i]; break;
      default: return false;
    }
  }
  return true;
}

// ------------------------------------------------------------------------------ checks
Status DataTensor(const GpuCheckContext& c, const Tensor& t, const std::string& what) {
  TFG_RETURN_IF_ERROR(c.RealTensor(t, what));  // FLOAT32, or quantized with ENABLE_QUANT
  TFG_RETURN_IF_ERROR(c.Rank4OrLess(t, what.c_str()));
  if (t.num_elements() <= 0) return Unimplemented(what + " has no elements (zero-sized tensors stay on the CPU)");
  return OkStatus();
}

// The data inputs `which` and every output: FLOAT32, rank <= 4, not empty.
Status CheckData(const GpuCheckContext& c, std::initializer_list<int> which) {
  for (int i : which) {
    if (!c.has_input(i)) return Unimplemented("input " + Str(i) + " is missing");
    TFG_RETURN_IF_ERROR(DataTensor(c, c.input(i), "input " + Str(i)));
  }
  for (int i = 0; i < c.num_outputs(); ++i) TFG_RETURN_IF_ERROR(DataTensor(c, c.output(i), "output " + Str(i)));
  return OkStatus();
}

// ------------------------------------------------------------------------------ kernel shapes
// Launch over (x, y, slice*batch) of the output "dst"; declares b, y, x, s.
std::string Prologue(KernelBuilder& kb, const BHWC& o) {
  kb.grid = {size_t(o.w), size_t(o.h), size_t(o.slices()) * size_t(o.b)};
  return "int x = get_global_id(0), y = get_global_id(1), bs = get_global_id(2);\n"
         "if (x >= dst_W || y >= dst_H || bs >= dst_S * dst_B) return;\n"
         "int s = bs % dst_S, b = bs / dst_S;\n";
}

// `code` sets float4 v from the output coordinates b, y, x, s.
void SliceKernel(KernelBuilder& kb, const BHWC& o, const std::string& code) {
  kb.body = Prologue(kb, o) + "float4 v = (float4)(0.0f);\n" + code + "\nWRITE_dst(v, b, y, x, s);\n";
}

// `code` sets float e from the output coordinates b, y, x, c (one lane).
void LaneKernel(KernelBuilder& kb, const BHWC& o, const std::string& code) {
  kb.body = Prologue(kb, o) +
            "float r_[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n"
            "for (int l_ = 0; l_ < 4; ++l_) {\n"
            "int c = s * 4 + l_;\n"
            "if (c >= dst_C) break;\n"
            "float e = 0.0f;\n" +
            code +
            "\nr_[l_] = e;\n"
            "}\n"
            "WRITE_dst((float4)(r_[0], r_[1], r_[2], r_[3]), b, y, x, s);\n";
}

// Input coordinate along one BHWC axis: off + mul * (output coordinate of axis src); src -1: off.
struct Affine {
  int src = -1;
  int64_t off = 0, mul = 1;
};
using AxisMap = std::array<Affine, 4>;

AxisMap Identity() {
  AxisMap m;
  for (int a = 0; a < 4; ++a) m[a].src = a;
  return m;
}

// Whole slices can be moved: the input channel is the output channel plus a multiple of 4.
bool Aligned(const AxisMap& m) {
  if (m[3].src != 3 || m[3].mul != 1 || m[3].off % 4 != 0) return false;
  for (int a = 0; a < 3; ++a)
    if (m[a].src == 3) return false;
  return true;
}

std::string Coord(const Affine& f, bool slices) {
  if (f.src < 0) return Str(f.off);
  static const char* kVar[4] = {"b", "y", "x", "c"};
  std::string v = (slices && f.src == 3) ? "s" : kVar[f.src];
  int64_t off = (slices && f.src == 3) ? f.off / 4 : f.off;
  std::string e = f.mul == 1 ? v : "(" + Str(f.mul) + " * " + v + ")";
  if (off == 0) return e;
  return "(" + e + (off > 0 ? " + " : " - ") + Str(off > 0 ? off : -off) + ")";
}

// READ_ (slices) or LD_ (lanes) of input `name` through map m.
std::string Read(const std::string& name, const AxisMap& m, bool slices) {
  std::string r = (slices ? "READ_" : "LD_") + name + "(";
  for (int a = 0; a < 4; ++a) r += Coord(m[a], slices) + (a < 3 ? ", " : ")");
  return r;
}

// A single-input gather through an affine map (slice kernel when aligned).
void AffineKernel(GpuBuildContext& ctx, KernelBuilder& kb, const BHWC& o, const AxisMap& m) {
  if (Aligned(m)) {
    SliceKernel(kb, o, "v = " + Read("src", m, true) + ";");
  } else {
    LaneKernel(kb, o, "e = " + Read("src", m, false) + ";");
  }
}

// Output linear index L (row-major over the output) -> input linear index IL (`map` sets IL
// from L), then IL -> input coordinates. vec: 4 consecutive output lanes map to one input slice.
std::string LinearRead(const std::string& name, bool vec) {
  const std::string& n = name;
  return "int ic_ = IL % " + n + "_C, ip_ = IL / " + n + "_C;\n"
         "int ix_ = ip_ % " + n + "_W, iy_ = (ip_ / " + n + "_W) % " + n + "_H, ib_ = ip_ / (" + n + "_W * " + n +
         "_H);\n" + (vec ? "v = READ_" + n + "(ib_, iy_, ix_, ic_ >> 2);" : "e = LD_" + n + "(ib_, iy_, ix_, ic_);");
}

void LinearKernel(GpuBuildContext& ctx, KernelBuilder& kb, const BHWC& o, const std::string& map, bool vec) {
  if (vec) {
    SliceKernel(kb, o, "int L = ((b * dst_H + y) * dst_W + x) * dst_C + s * 4;\nint IL;\n" + map + "\n" +
                           LinearRead("src", true));
  } else {
    LaneKernel(kb, o, "int L = ((b * dst_H + y) * dst_W + x) * dst_C + c;\nint IL;\n" + map + "\n" +
                          LinearRead("src", false));
  }
}

// ------------------------------------------------------------------------------ CONCATENATION
int ConcatAxis(const Node& n, int rank) {
  int a = shape_ops::ConcatAxisOf(n);
  return a < 0 ? a + rank : a;
}

Status CheckConcat(const GpuCheckContext& c) {
  for (int i = 0; i < c.num_inputs(); ++i) TFG_RETURN_IF_ERROR(CheckData(c, {i}));
  TFG_RETURN_IF_ERROR(CheckData(c, {}));
  const int rank = int(c.input(0).shape.size());
  if (rank == 0) return Unimplemented("scalar inputs (constant folded on the CPU)");
  if (gpu::AxisToBHWC(ConcatAxis(c.node(), rank), rank) < 0) return Unimplemented("axis out of range");
  for (int i = 0; i < c.num_inputs(); ++i)
    if (int(c.input(i).shape.size()) != rank) return Unimplemented("inputs of different ranks");
  return OkStatus();
}

// Each input written at its offset along the axis by its producer; channel offsets whole slices.
bool ConcatPlace(GpuBuildContext& ctx, std::vector<gpu::GpuReadView>* at) {
  if (shape_ops::ConcatActivationOf(ctx.node()) != 0) return false;
  const int n = int(ctx.node().inputs.size());
  const int rank = int(ctx.cpu_input(0).shape.size());
  const int a = gpu::AxisToBHWC(ConcatAxis(ctx.node(), rank), rank);
  if (a < 0) return false;
  int64_t off = 0;
  at->assign(size_t(n), gpu::GpuReadView());
  for (int i = 0; i < n; ++i) {
    const int64_t size = Dim(Shape(ctx.cpu_input(i)), a);
    if (a == 3 && i + 1 < n && size % 4 != 0) return false;
    (*at)[i].before[a] = off;
    off += size;
  }
  return true;
}

Status BuildConcat(GpuBuildContext& ctx) {
  const int n = int(ctx.node().inputs.size());
  const int rank = int(ctx.cpu_input(0).shape.size());
  const int a = gpu::AxisToBHWC(ConcatAxis(ctx.node(), rank), rank);
  const BHWC o = Shape(ctx.cpu_output(0));
  KernelBuilder& kb = ctx.NewKernel("concatenation");
  std::vector<BHWC> in;
  for (int i = 0; i < n; ++i) {
    kb.AddInput("src" + Str(i), ctx.input(i));
    in.push_back(Shape(ctx.cpu_input(i)));
  }
  kb.AddOutput("dst", ctx.output(0));
  bool slices = true;
  if (a == 3)
    for (int i = 0; i + 1 < n; ++i) slices = slices && in[i].c % 4 == 0;
  static const char* kVar[4] = {"b", "y", "x", "c"};
  std::string var = (slices && a == 3) ? "s" : kVar[a];
  std::string code;
  int64_t off = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t size = Dim(in[i], a);
    AxisMap m = Identity();
    m[a].off = -off;
    std::string read = (slices ? "v = " : "e = ") + Read("src" + Str(i), m, slices) + ";";
    const int64_t end = (slices && a == 3) ? (off + size) / 4 : off + size;
    if (i + 1 < n) code += (i ? "else if (" : "if (") + var + " < " + Str(end) + ") { " + read + " }\n";
    else code += (i ? "else { " : "{ ") + read + " }\n";
    off += size;
  }
  if (slices) SliceKernel(kb, o, code);
  else LaneKernel(kb, o, code);
  return OkStatus();
}

// ------------------------------------------------------------------------------ RESHAPE
Status CheckReshape(const GpuCheckContext& c) { return CheckData(c, {0}); }

Status BuildReshape(GpuBuildContext& ctx) {
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  KernelBuilder& kb = ctx.NewKernel("reshape");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  if (in == o) {
    SliceKernel(kb, o, "v = READ_src(b, y, x, s);");
  } else if (in.c == o.c) {
    // Only batch / height / width regroup: whole pixels move.
    SliceKernel(kb, o,
                "int p_ = (b * dst_H + y) * dst_W + x;\n"
                "int ix_ = p_ % src_W, iy_ = (p_ / src_W) % src_H, ib_ = p_ / (src_W * src_H);\n"
                "v = READ_src(ib_, iy_, ix_, s);");
  } else {
    LinearKernel(ctx, kb, o, "IL = L;", in.c % 4 == 0 && o.c % 4 == 0);
  }
  return OkStatus();
}

// Same BHWC shape: the output is the input under another name (no kernel).
bool ReshapeView(GpuBuildContext& ctx, gpu::GpuReadView*) {
  return Shape(ctx.cpu_input(0)) == Shape(ctx.cpu_output(0));
}

// ------------------------------------------------------------------------------ PAD / PADV2
struct PadSpec {
  int64_t l[4] = {0, 0, 0, 0}, r[4] = {0, 0, 0, 0};
};

Status ReadPads(const Tensor& in, const Tensor& paddings, PadSpec* p) {
  std::vector<int64_t> v;
  if (!ConstInts(paddings, &v)) return Unimplemented("paddings must be a constant integer tensor on the GPU");
  const int rank = int(in.shape.size());
  if (int(v.size()) != 2 * rank) return Unimplemented("paddings do not match the input rank");
  for (int i = 0; i < rank; ++i) {
    const int a = gpu::AxisToBHWC(i, rank);
    if (v[2 * i] < 0 || v[2 * i + 1] < 0) return Unimplemented("negative paddings");
    p->l[a] = v[2 * i];
    p->r[a] = v[2 * i + 1];
  }
  return OkStatus();
}

Status CheckPad(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "paddings"));
  PadSpec p;
  TFG_RETURN_IF_ERROR(ReadPads(c.input(0), c.input(1), &p));
  if (c.num_inputs() >= 3 && c.has_input(2)) {
    const Tensor& cv = c.input(2);
    TFG_RETURN_IF_ERROR(c.Constant(2, "constant_values"));
    if (cv.num_elements() != 1 || !cv.data) return Unimplemented("constant_values must be one value");
    TFG_RETURN_IF_ERROR(c.RealTensor(cv, "constant_values"));
  }
  return OkStatus();
}

Status BuildPad(GpuBuildContext& ctx) {
  const BHWC o = Shape(ctx.cpu_output(0));
  PadSpec p;
  TFG_RETURN_IF_ERROR(ReadPads(ctx.cpu_input(0), ctx.cpu_input(1), &p));
  float value = 0.f;
  if (ctx.node().inputs.size() >= 3 && ctx.has_input(2)) value = ctx.const_input(2)[0];
  KernelBuilder& kb = ctx.NewKernel("pad");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  const bool slices = p.l[3] == 0 && (p.r[3] == 0 || value == 0.f);
  static const char* kVar[4] = {"b", "y", "x", "c"};
  static const char* kIn[4] = {"ib", "iy", "ix", "ic"};
  static const char* kDim[4] = {"src_B", "src_H", "src_W", "src_C"};
  std::string decl = "int ", cond;
  for (int a = 0; a < (slices ? 3 : 4); ++a) {
    decl += std::string(a ? ", " : "") + kIn[a] + " = " + kVar[a] + " - " + Str(p.l[a]);
    if (p.l[a] || p.r[a])
      cond += std::string(cond.empty() ? "" : " && ") + "(" + kIn[a] + " >= 0 && " + kIn[a] + " < " + kDim[a] + ")";
  }
  decl += ";\n";
  if (slices && p.r[3]) cond += std::string(cond.empty() ? "" : " && ") + "s < src_S";
  if (cond.empty()) cond = "1";
  const std::string val = FloatLit(value);
  if (slices) {
    SliceKernel(kb, o, decl + "if (" + cond + ") v = READ_src(ib, iy, ix, s); else v = (float4)(" + val + ");");
  } else {
    LaneKernel(kb, o, decl + "if (" + cond + ") e = LD_src(ib, iy, ix, ic); else e = " + val + ";");
  }
  return OkStatus();
}

// Zero padding with whole slices before the channels: consumers read the input in place.
bool PadView(GpuBuildContext& ctx, gpu::GpuReadView* v) {
  PadSpec p;
  if (!ReadPads(ctx.cpu_input(0), ctx.cpu_input(1), &p).ok()) return false;
  if (ctx.node().inputs.size() >= 3 && ctx.has_input(2) && ctx.const_input(2)[0] != 0.f) return false;
  if (p.l[3] % 4 != 0) return false;
  for (int a = 0; a < 4; ++a) v->before[a] = p.l[a];
  return true;
}

// ------------------------------------------------------------------------------ MIRROR_PAD
Status CheckMirrorPad(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "paddings"));
  PadSpec p;
  return ReadPads(c.input(0), c.input(1), &p);
}

Status BuildMirrorPad(GpuBuildContext& ctx) {
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  PadSpec p;
  TFG_RETURN_IF_ERROR(ReadPads(ctx.cpu_input(0), ctx.cpu_input(1), &p));
  const int64_t off = shape_ops::MirrorPadModeOf(ctx.node()) == 0 ? 1 : 0;  // REFLECT skips the border
  KernelBuilder& kb = ctx.NewKernel("mirror_pad");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  const bool slices = p.l[3] == 0 && p.r[3] == 0;
  static const char* kVar[4] = {"b", "y", "x", "c"};
  std::string e[4];
  for (int a = 0; a < 4; ++a) {
    std::string v = (a == 3 && slices) ? "s" : kVar[a];
    if (!p.l[a] && !p.r[a]) { e[a] = v; continue; }
    const int64_t l = p.l[a], d = Dim(in, a);
    // c < l: l - c - 1 + off; inside: c - l; after: d - 1 - off - (c - l - d)
    e[a] = "(" + v + " < " + Str(l) + " ? " + Str(l - 1 + off) + " - " + v + " : (" + v + " < " + Str(l + d) + " ? " + v +
           " - " + Str(l) + " : " + Str(2 * d - 1 - off + l) + " - " + v + "))";
  }
  if (slices) {
    SliceKernel(kb, o, "v = READ_src(" + e[0] + ", " + e[1] + ", " + e[2] + ", s);");
  } else {
    LaneKernel(kb, o, "e = LD_src(" + e[0] + ", " + e[1] + ", " + e[2] + ", " + e[3] + ");");
  }
  return OkStatus();
}

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
  KernelBuilder& kb = ctx.NewKernel("slice");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  AffineKernel(ctx, kb, Shape(ctx.cpu_output(0)), m);
  return OkStatus();
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
  KernelBuilder& kb = ctx.NewKernel("strided_slice");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  AffineKernel(ctx, kb, Shape(ctx.cpu_output(0)), m);
  return OkStatus();
}

// ------------------------------------------------------------------------------ TRANSPOSE
Status TransposeMap(const Tensor& in, const Tensor& perm, AxisMap* m) {
  std::vector<int64_t> p;
  if (!ConstInts(perm, &p)) return Unimplemented("perm must be a constant integer tensor on the GPU");
  const int rank = int(in.shape.size());
  if (int(p.size()) != rank) return Unimplemented("perm does not match the input rank");
  for (int a = 0; a < 4; ++a) (*m)[a] = Affine{-1, 0, 0};
  for (int i = 0; i < rank; ++i) {
    int64_t q = p[i] < 0 ? p[i] + rank : p[i];
    if (q < 0 || q >= rank) return Unimplemented("perm out of range");
    (*m)[gpu::AxisToBHWC(int(q), rank)] = Affine{gpu::AxisToBHWC(i, rank), 0, 1};
  }
  return OkStatus();
}

Status CheckTranspose(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "perm"));
  AxisMap m;
  return TransposeMap(c.input(0), c.input(1), &m);
}

Status BuildTranspose(GpuBuildContext& ctx) {
  AxisMap m;
  TFG_RETURN_IF_ERROR(TransposeMap(ctx.cpu_input(0), ctx.cpu_input(1), &m));
  KernelBuilder& kb = ctx.NewKernel("transpose");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  AffineKernel(ctx, kb, Shape(ctx.cpu_output(0)), m);
  return OkStatus();
}

// ------------------------------------------------------------------------------ DEPTH_TO_SPACE / SPACE_TO_DEPTH
Status CheckBlock(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  if (c.input(0).shape.size() != 4) return Unimplemented("input must be 4-D");
  return OkStatus();
}

Status BuildDepthToSpace(GpuBuildContext& ctx) {
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  const int bs = o.h / in.h;
  KernelBuilder& kb = ctx.NewKernel("depth_to_space");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  const std::string B = Str(bs);
  const std::string head = "int iy = y / " + B + ", ix = x / " + B + ";\nint blk = (y % " + B + ") * " + B + " + x % " + B + ";\n";
  if (o.c % 4 == 0) {
    SliceKernel(kb, o, head + "v = READ_src(b, iy, ix, blk * " + Str(o.c / 4) + " + s);");
  } else {
    LaneKernel(kb, o, head + "e = LD_src(b, iy, ix, blk * " + Str(o.c) + " + c);");
  }
  return OkStatus();
}

Status BuildSpaceToDepth(GpuBuildContext& ctx) {
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  const int bs = in.h / o.h;
  KernelBuilder& kb = ctx.NewKernel("space_to_depth");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  const std::string B = Str(bs), C = Str(in.c);
  if (in.c % 4 == 0) {
    SliceKernel(kb, o,
                "int q = (s * 4) / " + C + ", is = ((s * 4) % " + C + ") / 4;\n"
                "v = READ_src(b, y * " + B + " + q / " + B + ", x * " + B + " + q % " + B + ", is);");
  } else {
    LaneKernel(kb, o,
               "int q = c / " + C + ";\n"
               "e = LD_src(b, y * " + B + " + q / " + B + ", x * " + B + " + q % " + B + ", c % " + C + ");");
  }
  return OkStatus();
}

// ------------------------------------------------------------------------------ SPLIT
Status SplitAxis(const Tensor& axis, const Tensor& in, int* a) {
  std::vector<int64_t> v;
  if (!ConstInts(axis, &v) || v.empty()) return Unimplemented("axis must be a constant integer tensor on the GPU");
  const int rank = int(in.shape.size());
  *a = gpu::AxisToBHWC(int(v[0]), rank);
  if (*a < 0) return Unimplemented("axis out of range");
  return OkStatus();
}

Status CheckSplit(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {1}));
  TFG_RETURN_IF_ERROR(c.Constant(0, "axis"));
  int a;
  return SplitAxis(c.input(0), c.input(1), &a);
}

Status BuildSplit(GpuBuildContext& ctx) {
  int a;
  TFG_RETURN_IF_ERROR(SplitAxis(ctx.cpu_input(0), ctx.cpu_input(1), &a));
  const int n = int(ctx.node().outputs.size());
  for (int k = 0; k < n; ++k) {
    const BHWC o = Shape(ctx.cpu_output(k));
    KernelBuilder& kb = ctx.NewKernel("split");
    kb.AddInput("src", ctx.input(1));
    kb.AddOutput("dst", ctx.output(k));
    AxisMap m = Identity();
    m[a].off = int64_t(k) * Dim(o, a);
    AffineKernel(ctx, kb, o, m);
  }
  return OkStatus();
}

// ------------------------------------------------------------------------------ PACK / UNPACK
Status CheckPack(const GpuCheckContext& c) {
  for (int i = 0; i < c.num_inputs(); ++i) TFG_RETURN_IF_ERROR(CheckData(c, {i}));
  return CheckData(c, {});
}

Status BuildPack(GpuBuildContext& ctx) {
  const int n = int(ctx.node().inputs.size());
  const int rank = int(ctx.cpu_input(0).shape.size()), orank = rank + 1;
  int ax = shape_ops::PackAxisOf(ctx.node());
  if (ax < 0) ax += orank;
  const BHWC o = Shape(ctx.cpu_output(0));
  KernelBuilder& kb = ctx.NewKernel("pack");
  for (int i = 0; i < n; ++i) kb.AddInput("src" + Str(i), ctx.input(i));
  kb.AddOutput("dst", ctx.output(0));
  AxisMap m;
  for (int a = 0; a < 4; ++a) m[a] = Affine{-1, 0, 0};
  for (int j = 0, d = 0; d < orank; ++d) {
    if (d == ax) continue;
    m[gpu::AxisToBHWC(j++, rank)] = Affine{gpu::AxisToBHWC(d, orank), 0, 1};
  }
  const int sel = gpu::AxisToBHWC(ax, orank);
  const bool slices = Aligned(m) && sel != 3;
  static const char* kVar[4] = {"b", "y", "x", "c"};
  std::string code;
  for (int i = 0; i < n; ++i) {
    code += std::string(i ? "else " : "") + "if (" + kVar[sel] + " == " + Str(i) + ") " + (slices ? "v = " : "e = ") +
            Read("src" + Str(i), m, slices) + ";\n";
  }
  if (slices) SliceKernel(kb, o, code);
  else LaneKernel(kb, o, code);
  return OkStatus();
}

Status CheckUnpack(const GpuCheckContext& c) { return CheckData(c, {0}); }

Status BuildUnpack(GpuBuildContext& ctx) {
  const int rank = int(ctx.cpu_input(0).shape.size()), orank = rank - 1;
  int ax = shape_ops::PackAxisOf(ctx.node());
  if (ax < 0) ax += rank;
  const int n = int(ctx.node().outputs.size());
  for (int k = 0; k < n; ++k) {
    const BHWC o = Shape(ctx.cpu_output(k));
    KernelBuilder& kb = ctx.NewKernel("unpack");
    kb.AddInput("src", ctx.input(0));
    kb.AddOutput("dst", ctx.output(k));
    AxisMap m;
    for (int a = 0; a < 4; ++a) m[a] = Affine{-1, 0, 0};
    for (int j = 0, d = 0; d < rank; ++d) {
      if (d == ax) m[gpu::AxisToBHWC(d, rank)] = Affine{-1, k, 0};
      else m[gpu::AxisToBHWC(d, rank)] = Affine{gpu::AxisToBHWC(j++, orank), 0, 1};
    }
    AffineKernel(ctx, kb, o, m);
  }
  return OkStatus();
}

// ------------------------------------------------------------------------------ GATHER
struct GatherGeo {
  int64_t outer = 1, axis_size = 0, inner = 1, coords = 1;
  std::vector<int64_t> idx;
};

Status GatherGeometry(const Node& node, const Tensor& in, const Tensor& pos, GatherGeo* g) {
  if (!ConstInts(pos, &g->idx)) return Unimplemented("indices must be a constant integer tensor on the GPU");
  int axis, bd;
  shape_ops::GatherParamsOf(node, &axis, &bd);
  const int rank = int(in.shape.size()), prank = int(pos.shape.size());
  if (axis < 0) axis += rank;
  if (bd < 0) bd += prank;
  if (axis < 0 || axis >= rank || bd < 0 || bd > axis || bd > prank) return Unimplemented("invalid axis / batch_dims");
  g->outer = shape_ops::Prod(in.shape, bd, axis);  // per batch
  g->axis_size = in.shape[axis];
  g->inner = shape_ops::Prod(in.shape, axis + 1, rank);
  g->coords = shape_ops::Prod(pos.shape, bd, prank);
  // Out-of-range indices (an invoke error on the CPU) are clamped so the kernel never reads
  // outside the input; the check does not refuse them because a later resize may make them valid.
  for (int64_t& v : g->idx) v = std::max<int64_t>(0, std::min<int64_t>(v, g->axis_size - 1));
  return OkStatus();
}

Status CheckGather(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "indices"));
  GatherGeo g;
  return GatherGeometry(c.node(), c.input(0), c.input(1), &g);
}

Status BuildGather(GpuBuildContext& ctx) {
  GatherGeo g;
  TFG_RETURN_IF_ERROR(GatherGeometry(ctx.node(), ctx.cpu_input(0), ctx.cpu_input(1), &g));
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  KernelBuilder& kb = ctx.NewKernel("gather");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  std::vector<float> idx(g.idx.begin(), g.idx.end());
  kb.AddConstBuffer("idx", idx, /*exact=*/true);
  // L = ((batch * outer + o) * coords + i) * inner + j
  const std::string map = "int j_ = L % " + Str(g.inner) + ", t_ = L / " + Str(g.inner) + ";\n"
                          "int i_ = t_ % " + Str(g.coords) + ", bo_ = t_ / " + Str(g.coords) + ";\n"
                          "int k_ = (int)LOADW_idx((bo_ / " + Str(g.outer) + ") * " + Str(g.coords) + " + i_);\n"
                          "IL = (bo_ * " + Str(g.axis_size) + " + k_) * " + Str(g.inner) + " + j_;";
  LinearKernel(ctx, kb, o, map, g.inner % 4 == 0 && in.c % 4 == 0 && o.c % 4 == 0);
  return OkStatus();
}

// ------------------------------------------------------------------------------ refused
Status CheckShape(const GpuCheckContext&) {
  return Unimplemented("int output: SHAPE produces INT32/INT64 (and is constant folded when shapes are static)");
}
Status CheckDensify(const GpuCheckContext&) {
  return Unimplemented("constant folded: DENSIFY expands constant weights once at allocation on the CPU");
}
Status NoBuild(GpuBuildContext&) { return Unimplemented("no GPU kernel"); }

// ------------------------------------------------------------------------------ SPLIT_V
// Constant size_splits and axis: each output is an offset copy along the axis.
Status SplitVSpec(const Tensor& in, const Tensor& sizes, const Tensor& axis, int n_out, int* a,
                  std::vector<int64_t>* sz) {
  std::vector<int64_t> av;
  if (!ConstInts(axis, &av) || av.size() != 1) return Unimplemented("axis must be a constant integer on the GPU");
  if (!ConstInts(sizes, sz) || int(sz->size()) != n_out)
    return Unimplemented("size_splits must be a constant integer tensor on the GPU");
  const int rank = int(in.shape.size());
  const int64_t ax = av[0] < 0 ? av[0] + rank : av[0];
  *a = gpu::AxisToBHWC(int(ax), rank);
  if (*a < 0) return Unimplemented("axis out of range");
  int64_t known = 0, minus = -1;
  for (size_t i = 0; i < sz->size(); ++i) {
    if ((*sz)[i] == -1) minus = int64_t(i);
    else known += (*sz)[i];
  }
  if (minus >= 0) (*sz)[size_t(minus)] = in.shape[size_t(ax)] - known;
  return OkStatus();
}

Status CheckSplitV(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "size_splits"));
  TFG_RETURN_IF_ERROR(c.Constant(2, "axis"));
  int a;
  std::vector<int64_t> sz;
  return SplitVSpec(c.input(0), c.input(1), c.input(2), c.num_outputs(), &a, &sz);
}

Status BuildSplitV(GpuBuildContext& ctx) {
  int a;
  std::vector<int64_t> sz;
  const int n = int(ctx.node().outputs.size());
  TFG_RETURN_IF_ERROR(SplitVSpec(ctx.cpu_input(0), ctx.cpu_input(1), ctx.cpu_input(2), n, &a, &sz));
  int64_t off = 0;
  for (int k = 0; k < n; ++k) {
    const BHWC o = Shape(ctx.cpu_output(k));
    KernelBuilder& kb = ctx.NewKernel("split_v");
    kb.AddInput("src", ctx.input(0));
    kb.AddOutput("dst", ctx.output(k));
    AxisMap m = Identity();
    m[a].off = off;
    AffineKernel(ctx, kb, o, m);
    off += sz[size_t(k)];
  }
  return OkStatus();
}

// ------------------------------------------------------------------------------ TILE
// Constant multiples: output (b, y, x, c) reads input (b % B, y % H, x % W, c % C); whole slices
// when the input channels are a multiple of 4 (or the channel axis is not tiled).
Status CheckTile(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {0}));
  TFG_RETURN_IF_ERROR(c.Constant(1, "multiples"));
  std::vector<int64_t> m;
  if (!ConstInts(c.input(1), &m)) return Unimplemented("multiples must be a constant integer tensor on the GPU");
  if (c.input(0).shape.empty()) return Unimplemented("scalar input");
  return OkStatus();
}

Status BuildTile(GpuBuildContext& ctx) {
  const BHWC in = Shape(ctx.cpu_input(0)), o = Shape(ctx.cpu_output(0));
  KernelBuilder& kb = ctx.NewKernel("tile");
  kb.AddInput("src", ctx.input(0));
  kb.AddOutput("dst", ctx.output(0));
  const std::string bhw = "b % src_B, y % src_H, x % src_W, ";
  if (in.c == o.c || in.c % 4 == 0) {
    SliceKernel(kb, o, "v = READ_src(" + bhw + "s % src_S);");
  } else {
    LaneKernel(kb, o, "e = LD_src(" + bhw + "c % src_C);");
  }
  return OkStatus();
}

// ------------------------------------------------------------------------------ ONE_HOT
// Constant indices, depth, on and off values, axis -1 (the depth is the channel axis): the
// indices are baked into the kernel as an exact float buffer (one per output pixel).
Status CheckOneHot(const GpuCheckContext& c) {
  TFG_RETURN_IF_ERROR(CheckData(c, {}));
  for (int i = 0; i < 4; ++i)
    TFG_RETURN_IF_ERROR(c.Constant(i, i == 0 ? "indices" : i == 1 ? "depth" : i == 2 ? "on_value" : "off_value"));
  const int rank = int(c.input(0).shape.size());
  const int axis = shape_ops::OneHotAxisOf(c.node());
  if (axis != -1 && axis != rank) return Unimplemented("only the last axis (the channel axis on the GPU)");
  std::vector<int64_t> v;
  if (!ConstInts(c.input(0), &v)) return Unimplemented("indices must be a constant integer tensor");
  for (int64_t x : v)
    if (x < -(int64_t(1) << 24) || x > (int64_t(1) << 24)) return Unimplemented("indices beyond 2^24 are not exact in float");
  if (c.input(2).type != DType::kFloat32 || c.input(3).type != DType::kFloat32)
    return Unimplemented("on/off values must be FLOAT32");
  return OkStatus();
}

Status BuildOneHot(GpuBuildContext& ctx) {
  const BHWC o = Shape(ctx.cpu_output(0));
  std::vector<int64_t> v;
  ConstInts(ctx.cpu_input(0), &v);
  std::vector<float> idx(v.begin(), v.end());
  const float on = ctx.cpu_input(2).as<float>()[0], off = ctx.cpu_input(3).as<float>()[0];
  KernelBuilder& kb = ctx.NewKernel("one_hot");
  kb.AddConstBuffer("ids", idx, /*exact=*/true);
  kb.AddOutput("dst", ctx.output(0));
  LaneKernel(kb, o, "int id_ = (int)ids[(b * dst_H + y) * dst_W + x];\ne = (id_ == c) ? " + FloatLit(on) + " : " +
                        FloatLit(off) + ";");
  return OkStatus();
}

}  // namespace

const GpuOpSupport kGpu_SPLIT_V = {CheckSplitV, BuildSplitV, nullptr, false};
const GpuOpSupport kGpu_TILE = {CheckTile, BuildTile, nullptr, false};
const GpuOpSupport kGpu_ONE_HOT = {CheckOneHot, BuildOneHot, nullptr, false};
const GpuOpSupport kGpu_CONCATENATION = {CheckConcat, BuildConcat, nullptr, false, nullptr, ConcatPlace};
const GpuOpSupport kGpu_RESHAPE = {CheckReshape, BuildReshape, nullptr, false, ReshapeView};
const GpuOpSupport kGpu_PAD = {CheckPad, BuildPad, nullptr, false, PadView};
const GpuOpSupport kGpu_PADV2 = {CheckPad, BuildPad, nullptr, false, PadView};
const GpuOpSupport kGpu_MIRROR_PAD = {CheckMirrorPad, BuildMirrorPad, nullptr, false};
const GpuOpSupport kGpu_SLICE = {CheckSlice, BuildSlice, nullptr, false};
const GpuOpSupport kGpu_STRIDED_SLICE = {CheckStridedSlice, BuildStridedSlice, nullptr, false};
const GpuOpSupport kGpu_TRANSPOSE = {CheckTranspose, BuildTranspose, nullptr, false};
const GpuOpSupport kGpu_DEPTH_TO_SPACE = {CheckBlock, BuildDepthToSpace, nullptr, false};
const GpuOpSupport kGpu_SPACE_TO_DEPTH = {CheckBlock, BuildSpaceToDepth, nullptr, false};
const GpuOpSupport kGpu_SPLIT = {CheckSplit, BuildSplit, nullptr, false};
const GpuOpSupport kGpu_PACK = {CheckPack, BuildPack, nullptr, false};
const GpuOpSupport kGpu_UNPACK = {CheckUnpack, BuildUnpack, nullptr, false};
const GpuOpSupport kGpu_GATHER = {CheckGather, BuildGather, nullptr, false};
const GpuOpSupport kGpu_SHAPE = {CheckShape, NoBuild, nullptr, false};
const GpuOpSupport kGpu_DENSIFY = {CheckDensify, NoBuild, nullptr, false};

}  // namespace tflite_gpu
