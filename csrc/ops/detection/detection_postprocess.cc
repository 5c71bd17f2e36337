// TFLite_Detection_PostProcess (custom op, registered by TFLite's builtin resolver): SSD box
// decoding against anchors plus non-max suppression, float32.
//
// Inputs: box_encodings [1, num_boxes, >=4] (ty, tx, th, tw), class_predictions
// [1, num_boxes, num_classes + label_offset] (label_offset 0 or 1: a leading background class),
// anchors [num_boxes, 4] (ycenter, xcenter, h, w). Outputs (float32): detection_boxes
// [1, N, 4] (ymin, xmin, ymax, xmax), detection_classes [1, N], detection_scores [1, N],
// num_detections [1], N = max_detections * max_classes_per_detection.
// Options (FlexBuffer map): max_detections, max_classes_per_detection, detections_per_class
// (default 100), use_regular_nms (default false), nms_score_threshold, nms_iou_threshold,
// num_classes, y_scale, x_scale, h_scale, w_scale.
//
// Decoding: yc = ty / y_scale * ah + ay, xc = tx / x_scale * aw + ax, h = exp(th / h_scale) * ah,
// w = exp(tw / w_scale) * aw; box = (yc - h/2, xc - w/2, yc + h/2, xc + w/2).
// Single-class NMS: candidates with score >= score threshold, by decreasing score; a candidate
// is kept unless its IoU with a kept box is > the IoU threshold; at most `limit` kept.
// Fast NMS: per box the top max_classes_per_detection classes; NMS on each box's best score
// (limit max_detections); each kept box writes its classes in order of decreasing score.
// Regular NMS: NMS per class (limit detections_per_class), then the best max_detections of all
// classes by score; unused rows are zero. num_detections = number of rows (fast: kept boxes).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "model/flexbuffer.h"
#include "ops/op_registry.h"

namespace tflite_gpu {
namespace {

struct DppParams {
  int max_detections = 0, max_classes_per_detection = 0, detections_per_class = 100, num_classes = 0;
  bool use_regular_nms = false;
  float score_threshold = 0.f, iou_threshold = 0.f;
  float y_scale = 0.f, x_scale = 0.f, h_scale = 0.f, w_scale = 0.f;
};

struct Box {
  float ymin, xmin, ymax, xmax;
};

// Output rows are limited so a hostile max_detections cannot ask for unbounded memory.
constexpr int64_t kMaxOutputRows = int64_t(1) << 24;

Status ParseDpp(const OptionsView& o, Node& n) {
  auto p = std::make_shared<DppParams>();
  if (!o.custom || o.custom_size == 0)
    return InvalidArgument("TFLite_Detection_PostProcess: custom options (a FlexBuffer map) are missing");
  flex::MapReader m(o.custom, o.custom_size);
  if (!m.ok()) return InvalidArgument("TFLite_Detection_PostProcess: " + m.error());
  auto need_int = [&](const char* k, int* out) -> Status {
    int64_t v;
    if (!m.GetInt(k, &v)) {
      if (!m.ok()) return InvalidArgument("TFLite_Detection_PostProcess: " + m.error());
      return InvalidArgument(std::string("TFLite_Detection_PostProcess: custom option '") + k + "' is missing");
    }
    if (v < 1 || v > (int64_t(1) << 24))
      return InvalidArgument(std::string("TFLite_Detection_PostProcess: ") + k + " = " + std::to_string(v) +
                             " (must be in 1..16777216)");
    *out = int(v);
    return OkStatus();
  };
  auto need_float = [&](const char* k, float* out) -> Status {
    double v;
    if (!m.GetDouble(k, &v)) {
      if (!m.ok()) return InvalidArgument("TFLite_Detection_PostProcess: " + m.error());
      return InvalidArgument(std::string("TFLite_Detection_PostProcess: custom option '") + k + "' is missing");
    }
    *out = float(v);
    return OkStatus();
  };
  TFG_RETURN_IF_ERROR(need_int("max_detections", &p->max_detections));
  TFG_RETURN_IF_ERROR(need_int("max_classes_per_detection", &p->max_classes_per_detection));
  TFG_RETURN_IF_ERROR(need_int("num_classes", &p->num_classes));
  int64_t dpc;
  if (m.GetInt("detections_per_class", &dpc)) {
    if (dpc < 1 || dpc > (int64_t(1) << 24))
      return InvalidArgument("TFLite_Detection_PostProcess: detections_per_class = " + std::to_string(dpc) +
                             " (must be in 1..16777216)");
    p->detections_per_class = int(dpc);
  }
  bool regular = false;
  if (m.GetBool("use_regular_nms", &regular)) p->use_regular_nms = regular;
  TFG_RETURN_IF_ERROR(need_float("nms_score_threshold", &p->score_threshold));
  TFG_RETURN_IF_ERROR(need_float("nms_iou_threshold", &p->iou_threshold));
  TFG_RETURN_IF_ERROR(need_float("y_scale", &p->y_scale));
  TFG_RETURN_IF_ERROR(need_float("x_scale", &p->x_scale));
  TFG_RETURN_IF_ERROR(need_float("h_scale", &p->h_scale));
  TFG_RETURN_IF_ERROR(need_float("w_scale", &p->w_scale));
  if (!m.ok()) return InvalidArgument("TFLite_Detection_PostProcess: " + m.error());
  if (!(p->iou_threshold >= 0.f && p->iou_threshold <= 1.f))
    return InvalidArgument("TFLite_Detection_PostProcess: nms_iou_threshold must be in [0, 1]");
  n.params = p;
  return OkStatus();
}

Status PrepareDpp(OpContext& ctx) {
  const DppParams& p = ctx.node().P<DppParams>();
  TFG_RETURN_IF_ERROR(ctx.CheckArity(3, 3, 4, 4));
  for (int i = 0; i < 3; ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is omitted");
    TFG_RETURN_IF_ERROR(ctx.CheckType(ctx.input(i), DType::kFloat32, i == 0 ? "box_encodings" : i == 1 ? "class_predictions" : "anchors"));
  }
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  const Tensor& anchors = ctx.input(2);
  if (boxes.shape.size() != 3 || boxes.shape[0] != 1 || boxes.shape[2] < 4)
    return ctx.Error("box_encodings must have shape [1, num_boxes, >=4], got " + DimsToString(boxes.shape));
  int num_boxes = boxes.shape[1];
  if (scores.shape.size() != 3 || scores.shape[0] != 1 || scores.shape[1] != num_boxes)
    return ctx.Error("class_predictions must have shape [1, " + std::to_string(num_boxes) + ", classes], got " +
                     DimsToString(scores.shape));
  if (anchors.shape.size() != 2 || anchors.shape[0] != num_boxes || anchors.shape[1] != 4)
    return ctx.Error("anchors must have shape [" + std::to_string(num_boxes) + ", 4], got " + DimsToString(anchors.shape));
  int label_offset = scores.shape[2] - p.num_classes;
  if (label_offset < 0)
    return ctx.Error("class_predictions has " + std::to_string(scores.shape[2]) + " classes, fewer than num_classes = " +
                     std::to_string(p.num_classes));
  int64_t rows = int64_t(p.max_detections) * p.max_classes_per_detection;
  if (rows > kMaxOutputRows)
    return ctx.Error("max_detections * max_classes_per_detection = " + std::to_string(rows) + " is over the limit of " +
                     std::to_string(kMaxOutputRows));
  int r = int(rows);
  for (int i = 0; i < 4; ++i) TFG_RETURN_IF_ERROR(ctx.SetOutputType(i, DType::kFloat32));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, {1, r, 4}));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(1, {1, r}));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(2, {1, r}));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(3, {1}));
  return OkStatus();
}

float Iou(const Box& a, const Box& b) {
  float area_a = (a.ymax - a.ymin) * (a.xmax - a.xmin);
  float area_b = (b.ymax - b.ymin) * (b.xmax - b.xmin);
  if (area_a <= 0.f || area_b <= 0.f) return 0.f;
  float ih = std::max(std::min(a.ymax, b.ymax) - std::max(a.ymin, b.ymin), 0.f);
  float iw = std::max(std::min(a.xmax, b.xmax) - std::max(a.xmin, b.xmin), 0.f);
  float inter = ih * iw;
  return inter / (area_a + area_b - inter);
}

// Greedy NMS over one score per box (stride `stride` in `scores`); appends kept box indices.
void NmsSingleClass(const std::vector<Box>& boxes, const float* scores, int stride, int num_boxes,
                    const DppParams& p, int limit, std::vector<int>* kept) {
  kept->clear();
  std::vector<int> cand;
  for (int i = 0; i < num_boxes; ++i)
    if (scores[size_t(i) * size_t(stride)] >= p.score_threshold) cand.push_back(i);
  std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) {
    return scores[size_t(a) * size_t(stride)] > scores[size_t(b) * size_t(stride)];
  });
  size_t out_size = std::min(cand.size(), size_t(limit));
  std::vector<uint8_t> active(cand.size(), 1);
  size_t num_active = cand.size();
  for (size_t i = 0; i < cand.size(); ++i) {
    if (num_active == 0 || kept->size() >= out_size) break;
    if (!active[i]) continue;
    kept->push_back(cand[i]);
    active[i] = 0;
    --num_active;
    for (size_t j = i + 1; j < cand.size(); ++j) {
      if (active[j] && Iou(boxes[size_t(cand[i])], boxes[size_t(cand[j])]) > p.iou_threshold) {
        active[j] = 0;
        --num_active;
      }
    }
  }
}

Status EvalDpp(OpContext& ctx) {
  const DppParams& p = ctx.node().P<DppParams>();
  const Tensor& enc = ctx.input(0);
  const Tensor& sc = ctx.input(1);
  const Tensor& anc = ctx.input(2);
  const int num_boxes = enc.shape[1], code = enc.shape[2];
  const int ncls_bg = sc.shape[2], label_offset = ncls_bg - p.num_classes, ncls = p.num_classes;
  std::vector<Box> boxes(size_t(std::max(num_boxes, 0)));
  const float* e = enc.as<float>();
  const float* a = anc.as<float>();
  for (int i = 0; i < num_boxes; ++i) {
    const float* b = e + size_t(i) * size_t(code);
    const float* an = a + size_t(i) * 4;
    float yc = b[0] / p.y_scale * an[2] + an[0];
    float xc = b[1] / p.x_scale * an[3] + an[1];
    float hh = 0.5f * std::exp(b[2] / p.h_scale) * an[2];
    float hw = 0.5f * std::exp(b[3] / p.w_scale) * an[3];
    boxes[size_t(i)] = Box{yc - hh, xc - hw, yc + hh, xc + hw};
  }
  const float* scores = sc.as<float>();
  Tensor& ob = ctx.output(0);
  Tensor& oc = ctx.output(1);
  Tensor& os = ctx.output(2);
  Tensor& on = ctx.output(3);
  const int rows = ob.shape[1];
  std::memset(ob.data, 0, size_t(rows) * 4 * sizeof(float));
  std::memset(oc.data, 0, size_t(rows) * sizeof(float));
  std::memset(os.data, 0, size_t(rows) * sizeof(float));
  float* out_b = ob.as<float>();
  float* out_c = oc.as<float>();
  float* out_s = os.as<float>();
  auto write = [&](int row, int box, int cls, float score) {
    const Box& bx = boxes[size_t(box)];
    out_b[size_t(row) * 4 + 0] = bx.ymin;
    out_b[size_t(row) * 4 + 1] = bx.xmin;
    out_b[size_t(row) * 4 + 2] = bx.ymax;
    out_b[size_t(row) * 4 + 3] = bx.xmax;
    out_c[row] = float(cls);
    out_s[row] = score;
  };
  std::vector<int> kept;
  if (!p.use_regular_nms) {
    const int per_box = std::min(p.max_classes_per_detection, ncls);
    std::vector<float> max_scores(static_cast<size_t>(num_boxes));
    std::vector<int> top(static_cast<size_t>(num_boxes) * static_cast<size_t>(per_box));
    std::vector<int> idx(static_cast<size_t>(ncls));
    for (int i = 0; i < num_boxes; ++i) {
      const float* s = scores + size_t(i) * size_t(ncls_bg) + size_t(label_offset);
      std::iota(idx.begin(), idx.end(), 0);
      std::partial_sort(idx.begin(), idx.begin() + per_box, idx.end(), [&](int x, int y) { return s[x] > s[y]; });
      std::copy(idx.begin(), idx.begin() + per_box, top.begin() + ptrdiff_t(size_t(i) * size_t(per_box)));
      max_scores[size_t(i)] = s[idx[0]];
    }
    NmsSingleClass(boxes, max_scores.data(), 1, num_boxes, p, p.max_detections, &kept);
    int row_box = 0;
    for (int b : kept) {
      const float* s = scores + size_t(b) * size_t(ncls_bg) + size_t(label_offset);
      for (int c = 0; c < per_box; ++c) {
        int cls = top[size_t(b) * size_t(per_box) + size_t(c)];
        write(per_box * row_box + c, b, cls, s[cls]);
      }
      ++row_box;
    }
    on.as<float>()[0] = float(row_box);
    return OkStatus();
  }
  // Regular NMS.
  struct Det {
    int box, cls;
    float score;
  };
  std::vector<Det> best;  // sorted by decreasing score, at most max_detections
  std::vector<Det> merged;
  for (int c = 0; c < ncls; ++c) {
    const float* s = scores + size_t(label_offset) + size_t(c);
    NmsSingleClass(boxes, s, ncls_bg, num_boxes, p, p.detections_per_class, &kept);
    merged = best;
    for (int b : kept) merged.push_back(Det{b, c, s[size_t(b) * size_t(ncls_bg)]});
    size_t keep = std::min(merged.size(), size_t(p.max_detections));
    std::stable_sort(merged.begin(), merged.end(), [](const Det& x, const Det& y) { return x.score > y.score; });
    merged.resize(keep);
    best.swap(merged);
  }
  for (size_t i = 0; i < best.size(); ++i) write(int(i), best[i].box, best[i].cls, best[i].score);
  on.as<float>()[0] = float(best.size());
  return OkStatus();
}

}  // namespace

const OpImpl kOp_TFLite_Detection_PostProcess = {ParseDpp, PrepareDpp, EvalDpp, nullptr, false};

}  // namespace tflite_gpu
