// Helpers shared by the sequence family (lstm.cc, rnn.cc, svdf.cc): TFLite's
// ApplyActivationToVector, the 8-partial-sum float dot product of the fast kernels, the hybrid
// (int8 weights x per-row quantized input) matrix-vector product, and the BIDIRECTIONAL_* output
// count check. The per-row input quantization itself is quant::QuantizeFloatRow (quant_common.h).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "ops/op_registry.h"
#include "ops/pooling/vec_math.h"  // exp / logistic / tanh arrays (~2 ulp)

namespace tflite_gpu {
namespace seq {

// TFLite's ApplyActivationToVector: out = act(in) (in place when out == in); NONE writes nothing.
// kFast: vectorisable tanh (vmath, ~2 ulp).
template <bool kFast = false>
inline void ApplyActivationToVector(int act, const float* in, int n, float* out) {
  switch (act) {
    case 0: return;
    case 1: for (int i = 0; i < n; ++i) out[i] = std::max(0.f, in[i]); return;
    case 2: for (int i = 0; i < n; ++i) out[i] = std::max(-1.f, std::min(1.f, in[i])); return;
    case 3: for (int i = 0; i < n; ++i) out[i] = std::max(0.f, std::min(6.f, in[i])); return;
    case 4:
      if (kFast) vmath::Tanh(in, out, n);
      else for (int i = 0; i < n; ++i) out[i] = std::tanh(in[i]);
      return;
    case 5: for (int i = 0; i < n; ++i) out[i] = std::signbit(in[i]) ? 1.f : 0.f; return;
    default: return;
  }
}

// Dot product with 8 partial sums (vectorises; the summation order differs from the plain loop
// by rounding only). The fast kernels' dot product.
inline float Dot8(const float* a, const float* b, int n) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) s[k] += a[i + k] * b[i + k];
  float r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; i < n; ++i) r += a[i] * b[i];
  return r;
}

// TFLite's hybrid MatrixBatchVectorMultiplyAccumulate for one quantized input row q (n wide, from
// quant::QuantizeFloatRow, with its zero point zp): for each of the `rows` int8 weight rows w_j,
// out[j * out_stride] += float(w_j . q - row_sums[j] * zp) * scale (scale = the row's input scale
// times the weight scale; row_sums null for symmetric inputs). Exact int32 dot products.
inline void HybridMatVecAccumulate(const int8_t* w, int rows, int n, const int8_t* q, float scale, int32_t zp,
                                   const int32_t* row_sums, float* out, int64_t out_stride) {
  for (int j = 0; j < rows; ++j) {
    const int8_t* wj = w + int64_t(j) * n;
    int32_t d = 0;
    for (int i = 0; i < n; ++i) d += int32_t(wj[i]) * int32_t(q[i]);
    if (row_sums) d -= row_sums[j] * zp;
    out[int64_t(j) * out_stride] += float(d) * scale;
  }
}

// BIDIRECTIONAL_SEQUENCE_RNN / _LSTM: one output with merge_outputs, two (fw, bw) otherwise.
inline Status CheckBidiOutputs(const OpContext& ctx, bool merge_outputs) {
  const int nout = merge_outputs ? 1 : 2;
  if (ctx.num_outputs() != nout)
    return ctx.Error("expects " + std::to_string(nout) + " output(s) with merge_outputs=" +
                     (merge_outputs ? "true" : "false") + ", got " + std::to_string(ctx.num_outputs()));
  return OkStatus();
}

}  // namespace seq
}  // namespace tflite_gpu
