// Signal family: RFFT2D (float32 -> complex64) and the complex accessors COMPLEX_ABS, REAL, IMAG.
//
// RFFT2D: input x [..., H, W] float32, fft_length [2] INT32 (fft_h, fft_w, powers of two). Each
// innermost [H, W] slice is cropped or zero-padded to [fft_h, fft_w] and transformed:
//   out[..., k, l] = sum_{m < fft_h, n < fft_w} x[m, n] * exp(-2 pi i (k m / fft_h + l n / fft_w))
// for k < fft_h, l <= fft_w / 2 (output [..., fft_h, fft_w / 2 + 1] COMPLEX64). Computed in double,
// as TFLite does, and rounded once to complex64. fft_length not constant: the output is dynamic.
// Fast kernel: radix-2 FFT along the rows, then along the columns of the kept half-spectrum.
// Reference kernel: the direct double sum.
//
// COMPLEX_ABS / REAL / IMAG: COMPLEX64 -> FLOAT32 or COMPLEX128 -> FLOAT64, same shape.
#include <cmath>
#include <complex>
#include <vector>

#include "ops/op_registry.h"

namespace tflite_gpu {
namespace {

using cd = std::complex<double>;
constexpr int64_t kMaxFftPoints = int64_t(1) << 26;

bool IsPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

Status ReadFftLength(const OpContext& ctx, const Tensor& t, int* fh, int* fw) {
  if (!t.data || t.bytes < 8) return ctx.Error("fft_length has no data");
  const int32_t h = t.as<int32_t>()[0], w = t.as<int32_t>()[1];
  if (!IsPow2(h) || !IsPow2(w))
    return ctx.Error("fft_length must be two powers of two, got [" + std::to_string(h) + ", " + std::to_string(w) +
                     "]");
  if (int64_t(h) * int64_t(w) > kMaxFftPoints)
    return ctx.Error("fft_length [" + std::to_string(h) + ", " + std::to_string(w) + "] is over the limit of " +
                     std::to_string(kMaxFftPoints) + " points");
  *fh = h;
  *fw = w;
  return OkStatus();
}

Dims RfftOutShape(const Dims& in, int fh, int fw) {
  Dims o = in;
  o[o.size() - 2] = fh;
  o[o.size() - 1] = fw / 2 + 1;
  return o;
}

Status RfftPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(2, 2, 1, 1));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& len = ctx.input(1);
  TFG_RETURN_IF_ERROR(ctx.CheckType(in, DType::kFloat32, "input"));
  if (in.shape.size() < 2) return ctx.Error("input must have rank >= 2, got shape " + DimsToString(in.shape));
  TFG_RETURN_IF_ERROR(ctx.CheckType(len, DType::kInt32, "fft_length"));
  if (len.shape.size() != 1 || len.shape[0] != 2)
    return ctx.Error("fft_length must have shape [2], got " + DimsToString(len.shape));
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kComplex64));
  if (!ctx.IsConstantOrPersistent(len)) {
    ctx.SetOutputDynamic(0);
    return OkStatus();
  }
  int fh = 0, fw = 0;
  TFG_RETURN_IF_ERROR(ReadFftLength(ctx, len, &fh, &fw));
  return ctx.SetOutputShape(0, RfftOutShape(in.shape, fh, fw));
}

// In-place iterative radix-2 FFT (forward), n a power of two; tw[k] = exp(-2 pi i k / n), k < n/2.
void Fft(cd* a, int n, const std::vector<cd>& tw) {
  for (int i = 1, j = 0; i < n; ++i) {
    int bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int len = 2; len <= n; len <<= 1) {
    const int half = len >> 1, step = n / len;
    for (int s = 0; s < n; s += len)
      for (int k = 0; k < half; ++k) {
        const cd u = a[s + k], v = a[s + k + half] * tw[size_t(k) * size_t(step)];
        a[s + k] = u + v;
        a[s + k + half] = u - v;
      }
  }
}

std::vector<cd> Twiddles(int n) {
  std::vector<cd> t(size_t(std::max(1, n / 2)));
  for (int k = 0; k < n / 2; ++k) {
    const double a = -2.0 * M_PI * double(k) / double(n);
    t[size_t(k)] = cd(std::cos(a), std::sin(a));
  }
  return t;
}

template <bool kRef>
Status RfftEval(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  int fh = 0, fw = 0;
  TFG_RETURN_IF_ERROR(ReadFftLength(ctx, ctx.input(1), &fh, &fw));
  const Dims oshape = RfftOutShape(in.shape, fh, fw);
  if (!ctx.IsConstantOrPersistent(ctx.input(1))) TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, oshape));
  Tensor& out = ctx.output(0);
  if (out.shape != oshape) return ctx.Error("output shape " + DimsToString(out.shape) + ", expected " + DimsToString(oshape));
  const int r = int(in.shape.size());
  const int H = in.shape[r - 2], W = in.shape[r - 1];
  const int64_t slices = NumElements(Dims(in.shape.begin(), in.shape.end() - 2));
  const int ow = fw / 2 + 1;
  const int vh = std::min(H, fh), vw = std::min(W, fw);
  const float* x = in.as<float>();
  std::complex<float>* y = out.as<std::complex<float>>();
  if (kRef) {
    for (int64_t s = 0; s < slices; ++s) {
      const float* xs = x + s * int64_t(H) * W;
      std::complex<float>* ys = y + s * int64_t(fh) * ow;
      for (int k = 0; k < fh; ++k)
        for (int l = 0; l < ow; ++l) {
          double re = 0, im = 0;
          for (int m = 0; m < vh; ++m)
            for (int n = 0; n < vw; ++n) {
              // Phase reduced modulo one turn before scaling, so large indices stay exact.
              const double turn = double((int64_t(k) * m) % fh) / fh + double((int64_t(l) * n) % fw) / fw;
              const double a = -2.0 * M_PI * turn;
              re += double(xs[int64_t(m) * W + n]) * std::cos(a);
              im += double(xs[int64_t(m) * W + n]) * std::sin(a);
            }
          ys[int64_t(k) * ow + l] = std::complex<float>(float(re), float(im));
        }
    }
    return OkStatus();
  }
  const std::vector<cd> tw_w = Twiddles(fw), tw_h = Twiddles(fh);
  std::vector<cd> row(static_cast<size_t>(fw)), half(static_cast<size_t>(fh) * size_t(ow)), col(static_cast<size_t>(fh));
  for (int64_t s = 0; s < slices; ++s) {
    const float* xs = x + s * int64_t(H) * W;
    std::complex<float>* ys = y + s * int64_t(fh) * ow;
    for (int m = 0; m < fh; ++m) {
      cd* h = &half[size_t(m) * size_t(ow)];
      if (m >= vh) {
        std::fill(h, h + ow, cd(0, 0));
        continue;
      }
      for (int n = 0; n < fw; ++n) row[size_t(n)] = cd(n < vw ? double(xs[int64_t(m) * W + n]) : 0.0, 0.0);
      Fft(row.data(), fw, tw_w);
      std::copy(row.begin(), row.begin() + ow, h);
    }
    for (int l = 0; l < ow; ++l) {
      for (int m = 0; m < fh; ++m) col[size_t(m)] = half[size_t(m) * size_t(ow) + size_t(l)];
      Fft(col.data(), fh, tw_h);
      for (int k = 0; k < fh; ++k)
        ys[int64_t(k) * ow + l] = std::complex<float>(float(col[size_t(k)].real()), float(col[size_t(k)].imag()));
    }
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// COMPLEX_ABS, REAL, IMAG
// ---------------------------------------------------------------------------------------------
Status ComplexPrepare(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("missing input");
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  if (in.type == DType::kComplex64) {
    TFG_RETURN_IF_ERROR(ctx.CheckType(out, DType::kFloat32, "output (for a COMPLEX64 input)"));
  } else if (in.type == DType::kComplex128) {
    TFG_RETURN_IF_ERROR(ctx.CheckType(out, DType::kFloat64, "output (for a COMPLEX128 input)"));
  } else {
    return ctx.Error(std::string("input has type ") + DTypeName(in.type) + ", expected COMPLEX64 or COMPLEX128");
  }
  return ctx.SetOutputShape(0, in.shape);
}

enum class Part { kAbs, kReal, kImag };

template <typename T, Part P>
void Extract(const std::complex<T>* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (P == Part::kAbs) y[i] = std::abs(x[i]);
    else if (P == Part::kReal) y[i] = x[i].real();
    else y[i] = x[i].imag();
  }
}

template <Part P>
Status ComplexEval(OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int64_t n = in.num_elements();
  if (in.type == DType::kComplex64) Extract<float, P>(in.as<std::complex<float>>(), out.as<float>(), n);
  else Extract<double, P>(in.as<std::complex<double>>(), out.as<double>(), n);
  return OkStatus();
}

}  // namespace

const OpImpl kOp_RFFT2D = {nullptr, RfftPrepare, RfftEval<false>, RfftEval<true>, false};
const OpImpl kOp_COMPLEX_ABS = {nullptr, ComplexPrepare, ComplexEval<Part::kAbs>, nullptr, false};
const OpImpl kOp_REAL = {nullptr, ComplexPrepare, ComplexEval<Part::kReal>, nullptr, false};
const OpImpl kOp_IMAG = {nullptr, ComplexPrepare, ComplexEval<Part::kImag>, nullptr, false};

}  // namespace tflite_gpu
