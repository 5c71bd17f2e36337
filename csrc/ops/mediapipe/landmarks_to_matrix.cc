// MediaPipe's custom op Landmarks2TransformMatrix (face mesh with attention), float32. Two
// versions under one custom code, with different options and input layouts (semantics from
// MediaPipe's public mediapipe/util/tflite/operations/landmarks_to_transform_matrix.cc):
//
// Both: landmarks are read as consecutive (x, y, z) float triples of the input (landmark i at
// elements 3i..3i+2). Output [1, 4, 4]: a row-major 4x4 matrix mapping output-crop pixel
// coordinates (x, y, 0, 1) to input coordinates. "Subset" options are flat lists of landmark
// indices taken in pairs; an odd count pairs the last index with itself.
//
// Version 1, input [1, 1, 1, 3K]. Options: input_hw [h, w], output_hw [h, w], dimensions (must be
// 3), landmarks_range (> 0), bbox_size_multiplier (!= 0), left_rotation_idx, right_rotation_idx,
// subset (non-empty).
//   alpha = -atan((yr - yl) / (xr - xl)); each subset landmark's (x, y) rotated by alpha,
//   (x cos a - y sin a, x sin a + y cos a); max/min over them (starting from -1e5 / 1e5);
//   bbox = (max - min) * bbox_size_multiplier; mid = (max + min) / 2 rotated by -alpha.
//   itm = to_absolute * R * S * to_relative (3x3), with
//     S = diag(bbox.x / range, bbox.y / range, 1),
//     R = [[cos -a, -sin -a, mid.x / range * 2 - 1], [sin -a, cos -a, mid.y / range * 2 - 1], [0, 0, 1]],
//     to_relative = [[2 / (out_w - 1), 0, -1], [0, 2 / (out_h - 1), -1], [0, 0, 1]],
//     to_absolute = [[(in_w - 1) / 2, 0, (in_w - 1) / 2], [0, (in_h - 1) / 2, (in_h - 1) / 2], [0, 0, 1]];
//   output rows: [i00, i01, 0, i02], [i10, i11, 0, i12], [i20, i21, i22, 0], [0, 0, 0, 1].
//
// Version 2, input of rank 3 (MediaPipe's [1, K, 3]). Options: subset_idxs (non-empty),
// left_rotation_idx, right_rotation_idx, target_rotation_radians (absent: 0, as MediaPipe reads a
// missing key), output_height, output_width (> 0), scale_x, scale_y (> 0).
//   r = target_rotation_radians - atan2(yr - yl, xr - xl); subset landmarks (x, y) rotated by r;
//   crop size = max - min per axis; crop center = (max + min) / 2 rotated by -r.
//   M = T(cx, cy) * Rot(-r) * Scale(scale_x * w / output_width, scale_y * h / output_height)
//       * T(-output_width / 2, -output_height / 2)  (4x4, Rot/Scale acting on x, y).
//
// Landmark indices must name a landmark of the input (MediaPipe reads past the end otherwise).
// An empty subset is an error (MediaPipe's version 2 reads out of bounds). Arithmetic is float32
// in MediaPipe's order.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/mediapipe/mp_options.h"
#include "ops/mediapipe/mp_params.h"

namespace tflite_gpu {
namespace {

constexpr const char* kOp = "Landmarks2TransformMatrix";
constexpr int64_t kMaxIdx = (int64_t(1) << 28);

using mp::L2tmParams;

Status ParseL2tm(const OptionsView& o, Node& n) {
  mp::Options m(kOp, o);
  TFG_RETURN_IF_ERROR(m.Open(true));
  auto p = std::make_shared<L2tmParams>();
  p->version = n.version;
  TFG_RETURN_IF_ERROR(m.Int("left_rotation_idx", true, 0, kMaxIdx, 0, &p->left));
  TFG_RETURN_IF_ERROR(m.Int("right_rotation_idx", true, 0, kMaxIdx, 0, &p->right));
  if (p->version == 1) {
    std::vector<int> hw;
    TFG_RETURN_IF_ERROR(m.IntVector("input_hw", 2, 1, 1 << 24, &hw));
    p->in_h = hw[0];
    p->in_w = hw[1];
    TFG_RETURN_IF_ERROR(m.IntVector("output_hw", 2, 1, 1 << 24, &hw));
    p->out_h = hw[0];
    p->out_w = hw[1];
    int dims = 0;
    TFG_RETURN_IF_ERROR(m.Int("dimensions", true, 3, 3, 3, &dims));
    TFG_RETURN_IF_ERROR(m.Int("landmarks_range", true, 1, INT32_MAX, 0, &p->landmarks_range));
    TFG_RETURN_IF_ERROR(m.Float("bbox_size_multiplier", true, 0.f, &p->bbox_mult));
    if (p->bbox_mult == 0.f) return m.Err("bbox_size_multiplier must not be 0");
    TFG_RETURN_IF_ERROR(m.IntVector("subset", 1, 0, kMaxIdx, &p->subset));
  } else {
    TFG_RETURN_IF_ERROR(m.IntVector("subset_idxs", 1, 0, kMaxIdx, &p->subset));
    TFG_RETURN_IF_ERROR(m.Float("target_rotation_radians", false, 0.f, &p->target_rot));
    TFG_RETURN_IF_ERROR(m.Int("output_height", true, 1, 1 << 24, 0, &p->output_height));
    TFG_RETURN_IF_ERROR(m.Int("output_width", true, 1, 1 << 24, 0, &p->output_width));
    TFG_RETURN_IF_ERROR(m.Float("scale_x", true, 0.f, &p->scale_x));
    TFG_RETURN_IF_ERROR(m.Float("scale_y", true, 0.f, &p->scale_y));
    if (!(p->scale_x > 0.f) || !(p->scale_y > 0.f)) return m.Err("scale_x and scale_y must be > 0");
  }
  if (p->subset.size() % 2) p->subset.push_back(p->subset.back());
  p->max_idx = std::max(p->left, p->right);
  for (int i : p->subset) p->max_idx = std::max(p->max_idx, i);
  n.params = p;
  return OkStatus();
}

Status PrepareL2tm(OpContext& ctx) {
  TFG_RETURN_IF_ERROR(ctx.CheckArity(1, 1, 1, 1));
  if (!ctx.has_input(0)) return ctx.Error("the landmarks input is omitted");
  const L2tmParams& p = ctx.node().P<L2tmParams>();
  const Tensor& in = ctx.input(0);
  TFG_RETURN_IF_ERROR(ctx.CheckType(in, DType::kFloat32, "the landmarks"));
  if (p.version == 1) {
    if (in.shape.size() != 4 || in.shape[0] != 1 || in.shape[1] != 1 || in.shape[2] != 1)
      return ctx.Error("version 1 takes landmarks of shape [1, 1, 1, 3 * K], got " + DimsToString(in.shape));
  } else if (in.shape.size() != 3) {
    return ctx.Error("version 2 takes landmarks of rank 3 ([1, K, 3]), got " + DimsToString(in.shape));
  }
  int64_t count = std::max<int64_t>(0, in.num_elements()) / 3;
  if (p.max_idx >= count)
    return ctx.Error("landmark index " + std::to_string(p.max_idx) + " (options) is out of range: the input " +
                     DimsToString(in.shape) + " holds " + std::to_string(count) + " landmarks");
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kFloat32));
  return ctx.SetOutputShape(0, {1, 4, 4});
}

using M3 = float[3][3];

void Mul3(const M3& a, const M3& b, M3& out) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      float s = 0.f;
      for (int k = 0; k < 3; ++k) s += a[i][k] * b[k][j];
      r[i][j] = s;
    }
  std::memcpy(out, r, sizeof(r));
}

void EvalV1(const L2tmParams& p, const float* lm, float* out) {
  const float lx = lm[p.left * 3], ly = lm[p.left * 3 + 1];
  const float rx = lm[p.right * 3], ry = lm[p.right * 3 + 1];
  const float a = -std::atan((ry - ly) / (rx - lx));
  const float ca = std::cos(a), sa = std::sin(a);
  float maxx = -100000.f, maxy = -100000.f, minx = 100000.f, miny = 100000.f;
  for (int idx : p.subset) {
    const float x = lm[idx * 3], y = lm[idx * 3 + 1];
    const float u = x * ca - y * sa, v = x * sa + y * ca;
    maxx = std::max(maxx, u);
    maxy = std::max(maxy, v);
    minx = std::min(minx, u);
    miny = std::min(miny, v);
  }
  const float range = float(p.landmarks_range);
  const float bw = (maxx - minx) * p.bbox_mult, bh = (maxy - miny) * p.bbox_mult;
  const float mx = (maxx + minx) / 2.f, my = (maxy + miny) / 2.f;
  const float cn = std::cos(-a), sn = std::sin(-a);
  const float rmx = mx * cn - my * sn, rmy = mx * sn + my * cn;
  const M3 scale = {{bw / range, 0.f, 0.f}, {0.f, bh / range, 0.f}, {0.f, 0.f, 1.f}};
  const M3 rot = {{cn, -sn, (rmx / range) * 2.f - 1.f}, {sn, cn, (rmy / range) * 2.f - 1.f}, {0.f, 0.f, 1.f}};
  const M3 to_rel = {{2.f / (float(p.out_w) - 1.f), 0.f, -1.f}, {0.f, 2.f / (float(p.out_h) - 1.f), -1.f}, {0.f, 0.f, 1.f}};
  const float hw = (float(p.in_w) - 1.f) / 2.f, hh = (float(p.in_h) - 1.f) / 2.f;
  const M3 to_abs = {{hw, 0.f, hw}, {0.f, hh, hh}, {0.f, 0.f, 1.f}};
  M3 t;
  Mul3(to_abs, rot, t);
  Mul3(t, scale, t);
  Mul3(t, to_rel, t);
  const float o[16] = {t[0][0], t[0][1], 0.f, t[0][2], t[1][0], t[1][1], 0.f, t[1][2],
                       t[2][0], t[2][1], t[2][2], 0.f, 0.f, 0.f, 0.f, 1.f};
  std::memcpy(out, o, sizeof(o));
}

void EvalV2(const L2tmParams& p, const float* lm, float* out) {
  const float lx = lm[p.left * 3], ly = lm[p.left * 3 + 1];
  const float rx = lm[p.right * 3], ry = lm[p.right * 3 + 1];
  const float r = p.target_rot - std::atan2(ry - ly, rx - lx);
  const float c = std::cos(r), s = std::sin(r);
  float maxx = 0.f, maxy = 0.f, minx = 0.f, miny = 0.f;
  for (size_t i = 0; i < p.subset.size(); ++i) {
    const float x = lm[p.subset[i] * 3], y = lm[p.subset[i] * 3 + 1];
    // Rot(r) * (x, y, 1): MediaPipe's 3x3 product, row by row.
    const float u = c * x + -s * y + 0.f * 1.f, v = s * x + c * y + 0.f * 1.f;
    if (i == 0) {
      maxx = minx = u;
      maxy = miny = v;
      continue;
    }
    if (maxx < u) maxx = u;
    if (maxy < v) maxy = v;
    if (minx > u) minx = u;
    if (miny > v) miny = v;
  }
  const float crop_w = maxx - minx, crop_h = maxy - miny;
  const float mx = (minx + maxx) / 2.f, my = (miny + maxy) / 2.f;
  const float ci = std::cos(-r), si = std::sin(-r);
  const float cx = ci * mx + -si * my + 0.f * 1.f, cy = si * mx + ci * my + 0.f * 1.f;
  // T(cx, cy) * Rot(-r) * Scale(sx, sy) * T(tx, ty), written out (the x/y block; z and w rows are
  // the identity's).
  const float rn = -r;
  const float cr = std::cos(rn), sr = std::sin(rn);
  const float sx = p.scale_x * crop_w / float(p.output_width);
  const float sy = p.scale_y * crop_h / float(p.output_height);
  const float tx = -1.f * (float(p.output_width) / 2.f), ty = -1.f * (float(p.output_height) / 2.f);
  float m[4][4] = {{1.f, 0.f, 0.f, cx}, {0.f, 1.f, 0.f, cy}, {0.f, 0.f, 1.f, 0.f}, {0.f, 0.f, 0.f, 1.f}};
  auto mul = [&m](const float (&b)[4][4]) {
    float t[4][4];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        float acc = 0.f;
        for (int k = 0; k < 4; ++k) acc += m[i][k] * b[k][j];
        t[i][j] = acc;
      }
    std::memcpy(m, t, sizeof(t));
  };
  mul({{cr, -sr, 0.f, 0.f}, {sr, cr, 0.f, 0.f}, {0.f, 0.f, 1.f, 0.f}, {0.f, 0.f, 0.f, 1.f}});
  mul({{sx, 0.f, 0.f, 0.f}, {0.f, sy, 0.f, 0.f}, {0.f, 0.f, 1.f, 0.f}, {0.f, 0.f, 0.f, 1.f}});
  mul({{1.f, 0.f, 0.f, tx}, {0.f, 1.f, 0.f, ty}, {0.f, 0.f, 1.f, 0.f}, {0.f, 0.f, 0.f, 1.f}});
  std::memcpy(out, m, sizeof(m));
}

Status EvalL2tm(OpContext& ctx) {
  const L2tmParams& p = ctx.node().P<L2tmParams>();
  const float* lm = ctx.input(0).as<float>();
  float* out = ctx.output(0).as<float>();
  if (p.version == 1) EvalV1(p, lm, out);
  else EvalV2(p, lm, out);
  return OkStatus();
}

}  // namespace

const OpImpl kOp_Landmarks2TransformMatrix = {ParseL2tm, PrepareL2tm, EvalL2tm, nullptr, false};

}  // namespace tflite_gpu
