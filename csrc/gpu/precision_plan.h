// Mixed storage for the fp16 modes: which tensors a partition keeps in float.
//
// fp16 storage keeps 11 significant bits and magnitudes up to 65504; a larger value becomes inf
// (round to nearest) or is clamped, and everything computed from it is garbage. Arithmetic is
// always float (gpu_op.h), so only what is stored between kernels matters. At prepare, one forward
// pass over the interpreter graph (plan order, CPU nodes included) estimates for every real-valued
// tensor its RMS magnitude S from the op kinds and the constant weights, assuming standardized float
// inputs (RMS 1: images in [0, 1] or [-1, 1], z-scored features), and, where the graph gives one, a
// sound interval [lo, hi] (constants, quantization grids, saturating ops: LOGISTIC, TANH, SOFTMAX,
// RELU6 and clamps, x - max(x), x / sum(x) for x >= 0). A tensor is stored as float when its
// estimated peak, min(kPeakFactor * S, max(|lo|, |hi|)), exceeds 65504.
//
// The rules (S of the output from S of the inputs):
//   CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED / TRANSPOSE_CONV / Convolution2DTransposeBias:
//     sqrt((S_in * g)^2 + rms(bias)^2), g = sqrt(sum(w^2) / outputs), the RMS over outputs of one
//     output's filter norm (the RMS gain for uncorrelated inputs); then the fused activation (RELU
//     halves the power: S / sqrt(2)).
//   ADD / SUB: S_a + S_b (the RMS triangle inequality; a constant's S is its max |value|);
//   MUL: S_a * S_b; DIV: by a constant S_a / min|c|, else S_a (a normalizer);
//   SQUARE, SQUARED_DIFFERENCE: squared; EXP: exp(peak) / kPeakFactor; POW: S^max(e, 1);
//   SUM: S * (elements summed); REDUCE_PROD: S^n; MEAN, pools, data movement: unchanged;
//   RELU, HARD_SWISH, GELU, ELU: about S / sqrt(2) (half the power passes); RELU6: min(S, 6) /
//   sqrt(2); PRELU / LEAKY_RELU: S * sqrt((1 + alpha^2) / 2).
// These are estimates of typical magnitudes, not worst-case bounds (worst-case L1 bounds grow
// geometrically through ReLU nets and would keep every tensor in float): the estimate catches what
// grows by construction (squares, exponentials, large sums, big weights), which is where fp16
// storage fails.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace tflite_gpu {
class Subgraph;
namespace gpu {

constexpr double kHalfMax = 65504.0;
constexpr double kPeakFactor = 8.0;  // peak / RMS assumed for an activation tensor

struct F32StoragePlan {
  std::vector<double> rms;             // per interpreter tensor: estimated RMS (may be inf)
  std::vector<double> lo, hi;          // sound bounds where known (else -inf / +inf)
  std::map<int, std::string> keep;     // tensors to store as float -> why
  double Peak(int t) const;            // the estimated peak magnitude compared with 65504
};

// The plan for a whole subgraph (cheap: one pass, weight norms computed once per weight tensor).
F32StoragePlan PlanF32Storage(const Subgraph& sg);

}  // namespace gpu
}  // namespace tflite_gpu
