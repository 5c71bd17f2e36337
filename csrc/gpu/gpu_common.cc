#include <cmath>
#include <cstdio>
#include <cstring>

#include "gpu/gpu_op.h"
#include "runtime/subgraph.h"

namespace tflite_gpu::gpu {

std::string FloatLiteral(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "as_float(0x%08xu)", u);
  return buf;
}

size_t NextPow2(size_t v) {
  size_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

bool ToBHWC(const Dims& d, BHWC* out) {
  switch (d.size()) {
    case 0: *out = {1, 1, 1, 1}; return true;
    case 1: *out = {1, 1, 1, d[0]}; return true;
    case 2: *out = {d[0], 1, 1, d[1]}; return true;
    case 3: *out = {d[0], 1, d[1], d[2]}; return true;
    case 4: *out = {d[0], d[1], d[2], d[3]}; return true;
    default: return false;
  }
}

int AxisToBHWC(int axis, int rank) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return -1;
  static const int k1[] = {3}, k2[] = {0, 3}, k3[] = {0, 2, 3}, k4[] = {0, 1, 2, 3};
  switch (rank) {
    case 1: return k1[axis];
    case 2: return k2[axis];
    case 3: return k3[axis];
    case 4: return k4[axis];
    default: return -1;
  }
}

// An absent (-1) or out-of-range position reads as an empty placeholder (shape [0]), which no GPU
// check accepts: the node stays on the CPU, whose prepare already vetted its optional inputs.
static const Tensor& AbsentTensor() {
  static const Tensor t = [] {
    Tensor x;
    x.name = "<absent>";
    x.shape = {0};
    return x;
  }();
  return t;
}
const Tensor& GpuCheckContext::input(int i) const {
  if (i < 0 || i >= int(node_.inputs.size()) || node_.inputs[i] < 0 || size_t(node_.inputs[i]) >= sg_.tensors_size())
    return AbsentTensor();
  return sg_.tensor(node_.inputs[i]);
}
const Tensor& GpuCheckContext::output(int i) const {
  if (i < 0 || i >= int(node_.outputs.size()) || node_.outputs[i] < 0 || size_t(node_.outputs[i]) >= sg_.tensors_size())
    return AbsentTensor();
  return sg_.tensor(node_.outputs[i]);
}

namespace {

bool QuantType(DType t) { return t == DType::kInt8 || t == DType::kUInt8 || t == DType::kInt16; }

void QRange(DType t, float* lo, float* hi) {
  switch (t) {
    case DType::kInt8: *lo = -128.f; *hi = 127.f; return;
    case DType::kUInt8: *lo = 0.f; *hi = 255.f; return;
    default: *lo = -32768.f; *hi = 32767.f; return;
  }
}

// Why the quantization parameters of `t` cannot be used (empty when they can).
std::string QuantProblem(const Tensor& t) {
  const QuantParams& q = t.quant;
  if (q.scale.empty()) return "has no scale";
  for (float s : q.scale)
    if (!(s > 0.f) || !std::isfinite(s)) return "has a scale that is not a positive finite number";
  if (!q.zero_point.empty() && q.zero_point.size() != q.scale.size()) return "has scale and zero_point vectors of different lengths";
  if (q.scale.size() > 1) {
    const int r = int(t.shape.size());
    if (q.quantized_dimension < 0 || q.quantized_dimension >= r) return "has a per-channel axis outside its rank";
    if (int64_t(q.scale.size()) != t.shape[q.quantized_dimension]) return "has a per-channel scale count that differs from its axis size";
  }
  if (QuantType(t.type)) {
    float lo, hi;
    QRange(t.type, &lo, &hi);
    for (int64_t z : q.zero_point)
      if (float(z) < lo || float(z) > hi) return "has a zero point outside its type's range";
  }
  return std::string();
}

}  // namespace

bool IsQuantizedActivation(const Tensor& t) { return QuantType(t.type) && t.quant.scale.size() == 1; }

Status GpuCheckContext::RealTensor(const Tensor& t, const std::string& what) const {
  if (t.type == DType::kFloat32) return OkStatus();
  const bool constant_int = t.is_const && (t.type == DType::kInt32 || t.type == DType::kInt64);
  if (!QuantType(t.type) && !constant_int)
    return Unimplemented(what + " has type " + DTypeName(t.type) + "; the GPU kernel takes FLOAT32 or quantized tensors");
  if (t.quant.scale.empty())
    return Unimplemented(what + " has type " + DTypeName(t.type) + " without quantization parameters; the GPU kernel takes "
                         "FLOAT32 or quantized tensors");
  if (!caps_.enable_quant)
    return Unimplemented(what + " is quantized (" + DTypeName(t.type) +
                         "); quantized tensors need ENABLE_QUANT (enable_quantization) in the delegate options");
  std::string bad = QuantProblem(t);
  if (!bad.empty()) return Unimplemented(what + " " + bad);
  if (t.is_const) return OkStatus();
  if (t.quant.scale.size() != 1)
    return Unimplemented(what + " is a non-constant per-channel quantized tensor (the GPU takes per-channel "
                         "quantization for constant weights only)");
  if (t.type == DType::kInt16 && caps_.fp16_storage)
    return Unimplemented(what + " is int16-quantized: its 65536 levels need F32 precision (fp16 storage keeps 11 "
                         "significant bits)");
  return OkStatus();
}

Status GpuCheckContext::InputsFloat32(std::initializer_list<int> which) const {
  for (int i : which) {
    if (!has_input(i)) continue;
    TFG_RETURN_IF_ERROR(RealTensor(input(i), "input " + std::to_string(i)));
  }
  return OkStatus();
}

Status GpuCheckContext::OutputsFloat32() const {
  for (int i = 0; i < num_outputs(); ++i) TFG_RETURN_IF_ERROR(RealTensor(output(i), "output " + std::to_string(i)));
  return OkStatus();
}

Status DequantizeConst(const Tensor& t, std::vector<float>* out) {
  const int64_t n = t.num_elements();
  if (n < 0 || !t.data) return InvalidArgument("constant tensor '" + t.name + "' has no data");
  out->assign(size_t(n), 0.f);
  auto raw = [&](int64_t i) -> double {
    switch (t.type) {
      case DType::kInt8: return t.as<int8_t>()[i];
      case DType::kUInt8: return t.as<uint8_t>()[i];
      case DType::kInt16: return t.as<int16_t>()[i];
      case DType::kInt32: return t.as<int32_t>()[i];
      case DType::kInt64: return double(t.as<int64_t>()[i]);
      default: return 0.0;
    }
  };
  if (t.type == DType::kFloat32) {
    std::memcpy(out->data(), t.data, size_t(n) * 4);
    return OkStatus();
  }
  if (t.type == DType::kFloat16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h = t.as<uint16_t>()[i];
      uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu, f;
      if (e == 0) {
        float v = std::ldexp(float(m), -24);
        (*out)[i] = (h & 0x8000u) ? -v : v;
        continue;
      }
      f = sign | (e == 31 ? (0xffu << 23) | (m << 13) : ((e + 112) << 23) | (m << 13));
      std::memcpy(&(*out)[i], &f, 4);
    }
    return OkStatus();
  }
  if (!QuantType(t.type) && t.type != DType::kInt32 && t.type != DType::kInt64)
    return Unimplemented("constant tensor '" + t.name + "' has type " + DTypeName(t.type));
  std::string bad = QuantProblem(t);
  if (!bad.empty()) return Unimplemented("constant tensor '" + t.name + "' " + bad);
  const QuantParams& q = t.quant;
  if (q.scale.size() == 1) {
    const double s = q.scale[0], z = q.zero_point.empty() ? 0.0 : double(q.zero_point[0]);
    for (int64_t i = 0; i < n; ++i) (*out)[i] = float((raw(i) - z) * s);
    return OkStatus();
  }
  // Per channel along quantized_dimension: index = (outer * C + c) * inner + k.
  const int axis = q.quantized_dimension;
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < t.shape.size(); ++d) inner *= t.shape[d];
  const int64_t C = t.shape[axis];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = (i / inner) % C;
    const double z = q.zero_point.empty() ? 0.0 : double(q.zero_point[size_t(c)]);
    (*out)[i] = float((raw(i) - z) * double(q.scale[size_t(c)]));
  }
  return OkStatus();
}

std::string SnapCode(const Tensor& t, const std::string& v) {
  float lo, hi;
  QRange(t.type, &lo, &hi);
  const float scale = t.quant.scale[0];
  const float zp = t.quant.zero_point.empty() ? 0.f : float(t.quant.zero_point[0]);
  // TFLite's QUANTIZE rounding (half to even of x * (1 / scale)), then back to the real value.
  return v + " = (clamp(rint(" + v + " * " + FloatLiteral(1.0f / scale) + ") + " + FloatLiteral(zp) + ", " +
         FloatLiteral(lo) + ", " + FloatLiteral(hi) + ") - " + FloatLiteral(zp) + ") * " + FloatLiteral(scale) + ";";
}

Status GpuCheckContext::Rank4OrLess(const Tensor& t, const char* what) const {
  if (t.shape.size() > 4)
    return Unimplemented(std::string(what) + " has rank " + std::to_string(t.shape.size()) + "; the GPU takes rank <= 4");
  return OkStatus();
}

Status GpuCheckContext::Constant(int i, const char* what) const {
  if (!has_input(i) || !input(i).is_const) return Unimplemented(std::string(what) + " must be a constant tensor on the GPU");
  return OkStatus();
}

void KernelBuilder::AddInput(const std::string& arg, const GpuTensorRef& t) {
  args_.push_back({Arg::kIn, arg, t.id, -1, t.shape, false, ""});
}
void KernelBuilder::AddOutput(const std::string& arg, const GpuTensorRef& t) {
  args_.push_back({Arg::kOut, arg, t.id, -1, t.shape, false, ""});
}
void KernelBuilder::AddConstBuffer(const std::string& arg, std::vector<float> data, bool exact) {
  consts_.push_back(std::move(data));
  args_.push_back({Arg::kConst, arg, -1, int(consts_.size()) - 1, BHWC{}, exact, ""});
}

std::string KernelBuilder::ReadBroadcast(const std::string& arg, const BHWC& out, const char* b, const char* y,
                                         const char* x, const char* s) const {
  const Arg* a = nullptr;
  for (const Arg& it : args_)
    if (it.name == arg) a = &it;
  if (!a) return "(float4)(0)";
  const BHWC& in = a->shape;
  std::string bb = in.b == 1 ? "0" : b, yy = in.h == 1 ? "0" : y, xx = in.w == 1 ? "0" : x;
  if (in.c == 1 && out.c != 1)
    return "((float4)(READ_" + arg + "(" + bb + ", " + yy + ", " + xx + ", 0).x))";
  std::string ss = in.slices() == 1 ? "0" : s;
  return "READ_" + arg + "(" + bb + ", " + yy + ", " + xx + ", " + ss + ")";
}

std::string KernelBuilder::ReadBroadcastDims(const std::string& arg, const Dims& in, const Dims& out,
                                             const char* b, const char* y, const char* x, const char* s) const {
  const int R = int(out.size()), r = int(in.size());
  if (r == R) {
    BHWC o;
    ToBHWC(out, &o);
    return ReadBroadcast(arg, o, b, y, x, s);
  }
  const char* out_coord[4] = {b, y, x, s};
  std::string coord[4] = {"0", "0", "0", "0"};
  for (int j = 0; j < r; ++j) {
    int ain = AxisToBHWC(j, r);
    int i = j + (R - r);
    int aout = AxisToBHWC(i, R);
    if (ain < 0 || aout < 0) continue;
    if (in[j] != 1) coord[ain] = out_coord[aout];
  }
  BHWC ib, ob;
  ToBHWC(in, &ib);
  ToBHWC(out, &ob);
  if (ib.c == 1 && ob.c != 1)
    return "((float4)(READ_" + arg + "(" + coord[0] + ", " + coord[1] + ", " + coord[2] + ", 0).x))";
  return "READ_" + arg + "(" + coord[0] + ", " + coord[1] + ", " + coord[2] + ", " + (ib.slices() == 1 ? std::string("0") : coord[3]) + ")";
}

}  // namespace tflite_gpu::gpu
