// The router's selection rule, shared by RouterTopkCpu (common_cpu.cc) and the CUDA kernel
// qprof_moe_router_topk (one warp per token), host- and device-callable:
//   score_e = sigmoid(logit_e); key_e = score_e + bias_e; the top-k keys win, ties to the
//   lower expert index; weight_j = score_j / sum of the chosen scores * route_scale.
// NaN is defined, never propagated into an id: a NaN logit counts as -inf (score 0, key
// -inf), and a NaN key (bias NaN, or inf - inf) counts as -inf, so such experts are chosen
// only after every finite one, in index order, with weight 0. If all chosen scores are 0 the
// weights are 0. Every chosen id is in [0, experts): the k-th pick always finds an untaken
// expert whose key is >= -inf.
#ifndef QPROF_KERNELS_COMMON_ROUTER_MATH_H_
#define QPROF_KERNELS_COMMON_ROUTER_MATH_H_

#include <math.h>

#include <cmath>

#include "kernels/common/reg_ops.h"

namespace qprof::kernels {

QPROF_HDI float RouterScore(float logit) {
  if (logit != logit) return 0.f;  // NaN logit: sigmoid(-inf)
  return 1.0f / (1.0f + expf(-logit));
}
QPROF_HDI float RouterKey(float logit, float bias) {
  const float k = 1.0f / (1.0f + expf(-logit)) + bias;  // NaN logit -> NaN k
  return k != k ? -INFINITY : k;
}
// True when (key_a, a) ranks before (key_b, b): higher key, then lower index. Keys are
// never NaN (RouterKey), so this is a strict total order.
QPROF_HDI bool RouterBetter(float key_a, int a, float key_b, int b) {
  return key_a > key_b || (key_a == key_b && a < b);
}
QPROF_HDI float RouterWeight(float score, float sum, float route_scale) {
  return sum > 0.f ? score / sum * route_scale : 0.f;
}

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_COMMON_ROUTER_MATH_H_
