// NON_MAX_SUPPRESSION_V4 (padded) and NON_MAX_SUPPRESSION_V5 (soft-NMS), float32, as TFLite.
//
// Inputs: boxes [num_boxes, 4] (y1, x1, y2, x2; corners in either order), scores [num_boxes],
// max_output_size (INT32 scalar), iou_threshold (scalar), score_threshold (scalar) and, for V5,
// soft_nms_sigma (scalar, >= 0). TFLite tells the two apart by the input count (6 inputs: soft).
// Outputs: V4 selected_indices [max_output_size] INT32, valid_outputs [] INT32; V5
// selected_indices, selected_scores [max_output_size] FLOAT32, valid_outputs. Entries past
// valid_outputs are zero. The output length is fixed at prepare when max_output_size is
// constant, otherwise the outputs are dynamic and sized at invoke.
//
// Selection (TFLite's greedy soft-NMS): candidates with score > score_threshold enter a max-heap
// by score. Repeatedly the best is popped and compared, newest first, with the boxes selected
// since it was last examined: IoU >= iou_threshold drops it; otherwise, when sigma > 0, its score
// is multiplied by exp(-0.5 * iou^2 / sigma) per comparison, stopping early once the score is
// <= score_threshold. A candidate whose score is unchanged is selected; a candidate still above
// the threshold goes back on the heap (a selected one too: on its next pop it meets itself, IoU
// 1, and is dropped, as in TFLite). At most min(max_output_size, #candidates) are selected.
// The heap is std::priority_queue over a std::deque, so equal scores pop in TFLite's order.
#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>

#include "ops/op_registry.h"

namespace tflite_gpu {
namespace {

constexpr int kMaxOutputLimit = 1 << 24;

bool Soft(const OpContext& ctx) { return ctx.num_inputs() == 6; }

Status CheckScalar(const OpContext& ctx, const Tensor& t, DType want, const char* what) {
  TFG_RETURN_IF_ERROR(ctx.CheckType(t, want, what));
  if (!t.shape.empty()) return ctx.Error(std::string(what) + " must be a scalar, got shape " + DimsToString(t.shape));
  return OkStatus();
}

Status ReadMaxOutput(const OpContext& ctx, const Tensor& t, int* out) {
  if (!t.data || t.bytes < 4) return ctx.Error("max_output_size has no data");
  const int32_t v = t.as<int32_t>()[0];
  if (v < 0) return ctx.Error("max_output_size must be >= 0, got " + std::to_string(v));
  if (v > kMaxOutputLimit)
    return ctx.Error("max_output_size " + std::to_string(v) + " is over the limit " + std::to_string(kMaxOutputLimit));
  *out = v;
  return OkStatus();
}

Status NmsPrepare(OpContext& ctx) {
  const int ni = ctx.num_inputs();
  if (ni != 5 && ni != 6) return ctx.Error("expects 5 inputs (6 for soft-NMS), got " + std::to_string(ni));
  const bool soft = Soft(ctx);
  const int want_out = soft ? 3 : 2;
  if (ctx.num_outputs() != want_out)
    return ctx.Error("expects " + std::to_string(want_out) + " outputs with " + std::to_string(ni) + " inputs, got " +
                     std::to_string(ctx.num_outputs()));
  for (int i = 0; i < ni; ++i)
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  TFG_RETURN_IF_ERROR(ctx.CheckType(boxes, DType::kFloat32, "boxes"));
  if (boxes.shape.size() != 2 || boxes.shape[1] != 4)
    return ctx.Error("boxes must have shape [num_boxes, 4], got " + DimsToString(boxes.shape));
  TFG_RETURN_IF_ERROR(ctx.CheckType(scores, DType::kFloat32, "scores"));
  if (scores.shape.size() != 1 || scores.shape[0] != boxes.shape[0])
    return ctx.Error("scores must have shape [" + std::to_string(boxes.shape[0]) + "] (one per box), got " +
                     DimsToString(scores.shape));
  const Tensor& mos = ctx.input(2);
  TFG_RETURN_IF_ERROR(CheckScalar(ctx, mos, DType::kInt32, "max_output_size"));
  TFG_RETURN_IF_ERROR(CheckScalar(ctx, ctx.input(3), DType::kFloat32, "iou_threshold"));
  TFG_RETURN_IF_ERROR(CheckScalar(ctx, ctx.input(4), DType::kFloat32, "score_threshold"));
  if (soft) TFG_RETURN_IF_ERROR(CheckScalar(ctx, ctx.input(5), DType::kFloat32, "soft_nms_sigma"));
  // Output types are the op's, whatever the model declares (TFLite sets them too).
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(0, DType::kInt32));
  if (soft) TFG_RETURN_IF_ERROR(ctx.SetOutputType(1, DType::kFloat32));
  TFG_RETURN_IF_ERROR(ctx.SetOutputType(want_out - 1, DType::kInt32));
  TFG_RETURN_IF_ERROR(ctx.SetOutputShape(want_out - 1, {}));
  if (ctx.IsConstantOrPersistent(mos)) {
    int m = 0;
    TFG_RETURN_IF_ERROR(ReadMaxOutput(ctx, mos, &m));
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, {m}));
    if (soft) TFG_RETURN_IF_ERROR(ctx.SetOutputShape(1, {m}));
  } else {
    ctx.SetOutputDynamic(0);
    if (soft) ctx.SetOutputDynamic(1);
  }
  return OkStatus();
}

float Iou(const float* boxes, int i, int j) {
  const float* a = boxes + size_t(i) * 4;
  const float* b = boxes + size_t(j) * 4;
  const float ay0 = std::min(a[0], a[2]), ay1 = std::max(a[0], a[2]);
  const float ax0 = std::min(a[1], a[3]), ax1 = std::max(a[1], a[3]);
  const float by0 = std::min(b[0], b[2]), by1 = std::max(b[0], b[2]);
  const float bx0 = std::min(b[1], b[3]), bx1 = std::max(b[1], b[3]);
  const float area_a = (ay1 - ay0) * (ax1 - ax0);
  const float area_b = (by1 - by0) * (bx1 - bx0);
  if (area_a <= 0 || area_b <= 0) return 0.f;
  const float ih = std::max(std::min(ay1, by1) - std::max(ay0, by0), 0.f);
  const float iw = std::max(std::min(ax1, bx1) - std::max(ax0, bx0), 0.f);
  const float inter = ih * iw;
  return inter / (area_a + area_b - inter);
}

struct Cand {
  int index;
  float score;
  int first_unchecked;  // selections before this one were already compared with the candidate
};
struct ByScore {
  bool operator()(const Cand& a, const Cand& b) const { return a.score < b.score; }
};

// Returns the number selected; sel_scores may be null.
int SoftNms(const float* boxes, int num_boxes, const float* scores, int max_out, float iou_thr, float score_thr,
            float sigma, int32_t* sel, float* sel_scores) {
  std::priority_queue<Cand, std::deque<Cand>, ByScore> heap;
  for (int i = 0; i < num_boxes; ++i)
    if (scores[i] > score_thr) heap.push(Cand{i, scores[i], 0});
  const int limit = std::min(int(heap.size()), max_out);
  const float decay = sigma > 0.f ? -0.5f / sigma : 0.f;
  int n = 0;
  while (n < limit && !heap.empty()) {
    Cand c = heap.top();
    heap.pop();
    const float before = c.score;
    bool drop = false;
    for (int j = n - 1; j >= c.first_unchecked; --j) {
      const float iou = Iou(boxes, c.index, sel[j]);
      if (iou >= iou_thr) {
        drop = true;
        break;
      }
      if (sigma > 0.f) c.score = c.score * std::exp(decay * iou * iou);
      if (c.score <= score_thr) break;
    }
    c.first_unchecked = n;
    if (drop) continue;
    if (c.score == before) {
      sel[n] = c.index;
      if (sel_scores) sel_scores[n] = c.score;
      ++n;
    }
    if (c.score > score_thr) heap.push(c);
  }
  return n;
}

Status NmsEval(OpContext& ctx) {
  const bool soft = Soft(ctx);
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  int max_out = 0;
  TFG_RETURN_IF_ERROR(ReadMaxOutput(ctx, ctx.input(2), &max_out));
  const float iou_thr = ctx.input(3).as<float>()[0];
  const float score_thr = ctx.input(4).as<float>()[0];
  float sigma = 0.f;
  if (soft) {
    sigma = ctx.input(5).as<float>()[0];
    if (!(sigma >= 0.f)) return ctx.Error("soft_nms_sigma must be >= 0, got " + std::to_string(sigma));
  }
  if (!ctx.IsConstantOrPersistent(ctx.input(2))) {
    TFG_RETURN_IF_ERROR(ctx.SetOutputShape(0, {max_out}));
    if (soft) TFG_RETURN_IF_ERROR(ctx.SetOutputShape(1, {max_out}));
  }
  Tensor& idx = ctx.output(0);
  float* sel_scores = soft ? ctx.output(1).as<float>() : nullptr;
  Tensor& count = ctx.output(soft ? 2 : 1);
  if (idx.num_elements() != max_out || (soft && ctx.output(1).num_elements() != max_out))
    return ctx.Error("selected outputs do not have max_output_size elements");
  const int n = SoftNms(boxes.as<float>(), boxes.shape[0], scores.as<float>(), max_out, iou_thr, score_thr, sigma,
                        idx.as<int32_t>(), sel_scores);
  for (int i = n; i < max_out; ++i) {
    idx.as<int32_t>()[i] = 0;
    if (sel_scores) sel_scores[i] = 0.f;
  }
  count.as<int32_t>()[0] = n;
  return OkStatus();
}

}  // namespace

const OpImpl kOp_NON_MAX_SUPPRESSION_V4 = {nullptr, NmsPrepare, NmsEval, nullptr, false};
const OpImpl kOp_NON_MAX_SUPPRESSION_V5 = {nullptr, NmsPrepare, NmsEval, nullptr, false};

}  // namespace tflite_gpu
