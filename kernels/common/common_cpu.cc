#include "kernels/common/common_cpu.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/common/router_math.h"
#include "kernels/common/thread_pool.h"
#include "kernels/common/vec.h"

namespace qprof::kernels {
namespace {

absl::Status Null(const char* kernel, const char* field) {
  return absl::InvalidArgumentError(absl::StrCat(kernel, ": ", field, " is null"));
}

// Rows of W converted from BF16 per tile; 8 rows of up to 8K floats stay in L2.
constexpr int kGemmRowTile = 8;
constexpr int64_t kInlineWork = 1 << 16;

QPROF_CPU_CLONES void GemmTile(const DenseGemmParams& p, int64_t r0, int64_t r1,
                               std::vector<float>& wbuf) {
  const int64_t k = p.k;
  wbuf.resize(static_cast<size_t>((r1 - r0) * k));
  for (int64_t r = r0; r < r1; ++r) Bf16RowToFloat(p.w + r * k, k, &wbuf[(r - r0) * k]);
  for (int64_t m = 0; m < p.m; ++m) {
    const float* x = p.x + m * k;
    float* y = p.y + m * int64_t{p.n};
    for (int64_t r = r0; r < r1; ++r) {
      float v = Dot(&wbuf[(r - r0) * k], x, k);
      y[r] = p.accumulate ? y[r] + v : v;
    }
  }
}

QPROF_CPU_CLONES void GemmF32Tile(int m, int n, int k, const float* x, const float* w,
                                  float* y, bool accumulate, int64_t r0, int64_t r1) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t r = r0; r < r1; ++r) {
      float v = Dot(w + r * k, x + i * int64_t{k}, k);
      float& out = y[i * int64_t{n} + r];
      out = accumulate ? out + v : v;
    }
  }
}

absl::Status CheckGemm(const DenseGemmParams& p) {
  if (p.m < 0 || p.n < 0 || p.k < 0) return absl::InvalidArgumentError("gemm: negative dims");
  if (!p.x) return Null("gemm", "x");
  if (!p.w) return Null("gemm", "w");
  if (!p.y) return Null("gemm", "y");
  return absl::OkStatus();
}

}  // namespace

void Bf16ToFloatN(const uint16_t* in, int64_t n, float* out) { Bf16RowToFloat(in, n, out); }

void FloatToBf16N(const float* in, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = FloatToBf16(in[i]);
}

absl::Status EmbeddingCpu(const EmbeddingParams& p) {
  if (!p.ids) return Null("embedding", "ids");
  if (!p.table) return Null("embedding", "table");
  if (!p.out) return Null("embedding", "out");
  for (int r = 0; r < p.rows; ++r) {
    int32_t id = p.ids[r];
    if (id < 0 || id >= p.vocab) {
      return absl::InvalidArgumentError(
          absl::StrCat("embedding: token id ", id, " at row ", r, " outside [0, ", p.vocab, ")"));
    }
    Bf16RowToFloat(p.table + int64_t{id} * p.dim, p.dim, p.out + int64_t{r} * p.dim);
  }
  return absl::OkStatus();
}

absl::Status RmsNormCpu(const RmsNormParams& p) {
  if (!p.x) return Null("rmsnorm", "x");
  if (!p.weight) return Null("rmsnorm", "weight");
  if (!p.out) return Null("rmsnorm", "out");
  const int xs = p.x_stride > 0 ? p.x_stride : p.cols;
  const int os = p.out_stride > 0 ? p.out_stride : p.cols;
  for (int r = 0; r < p.rows; ++r) {
    const float* x = p.x + int64_t{r} * xs;
    float* out = p.out + int64_t{r} * os;
    float ss = 0;  // FP32 sum of squares, index order
    for (int c = 0; c < p.cols; ++c) ss += x[c] * x[c];
    // out = x / sqrt(mean(x^2) + eps) * w
    float inv = 1.0f / std::sqrt(ss / static_cast<float>(p.cols) + p.eps);
    for (int c = 0; c < p.cols; ++c) out[c] = x[c] * inv * Bf16ToFloat(p.weight[c]);
  }
  return absl::OkStatus();
}

absl::Status RopeCpu(const RopeParams& p) {
  if (!p.x) return Null("rope", "x");
  if (!p.positions) return Null("rope", "positions");
  if (p.rope_dim % 2 != 0) return absl::InvalidArgumentError("rope: rope_dim is odd");
  const int half = p.rope_dim / 2;
  std::vector<float> cs(half), sn(half);
  for (int r = 0; r < p.rows; ++r) {
    // angle_i = pos * theta^(-2i/d), computed in double then rounded once.
    for (int i = 0; i < half; ++i) {
      double freq = std::pow(static_cast<double>(p.theta), -2.0 * i / p.rope_dim);
      double a = static_cast<double>(p.positions[r]) * freq;
      cs[i] = static_cast<float>(std::cos(a));
      sn[i] = static_cast<float>(std::sin(a));
    }
    for (int h = 0; h < p.heads; ++h) {
      float* v = p.x + int64_t{r} * p.row_stride + int64_t{h} * p.head_stride;
      for (int i = 0; i < half; ++i) {
        float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * cs[i] - b * sn[i];
        v[2 * i + 1] = a * sn[i] + b * cs[i];
      }
    }
  }
  return absl::OkStatus();
}

absl::Status DenseGemmReferenceCpu(const DenseGemmParams& p) {
  if (absl::Status s = CheckGemm(p); !s.ok()) return s;
  for (int64_t m = 0; m < p.m; ++m) {
    for (int64_t n = 0; n < p.n; ++n) {
      float acc = 0;  // FP32, index order
      for (int64_t k = 0; k < p.k; ++k) acc += Bf16ToFloat(p.w[n * p.k + k]) * p.x[m * p.k + k];
      float& y = p.y[m * p.n + n];
      y = p.accumulate ? y + acc : acc;
    }
  }
  return absl::OkStatus();
}

absl::Status DenseGemmCpu(const DenseGemmParams& p) {
  if (absl::Status s = CheckGemm(p); !s.ok()) return s;
  // Waking a worker costs microseconds; below ~64K multiply-adds run on the caller.
  ThreadPool* pool = int64_t{p.m} * p.n * p.k < kInlineWork ? nullptr : p.pool;
  ParallelFor(pool, (p.n + kGemmRowTile - 1) / kGemmRowTile, 1, [&](int64_t b, int64_t e) {
    thread_local std::vector<float> wbuf;
    for (int64_t t = b; t < e; ++t) {
      GemmTile(p, t * kGemmRowTile, std::min<int64_t>(p.n, (t + 1) * kGemmRowTile), wbuf);
    }
  });
  return absl::OkStatus();
}

void DenseGemmF32Cpu(int m, int n, int k, const float* x, const float* w, float* y,
                     bool accumulate, ThreadPool* pool) {
  ParallelFor(pool, (n + kGemmRowTile - 1) / kGemmRowTile, 1, [&](int64_t b, int64_t e) {
    GemmF32Tile(m, n, k, x, w, y, accumulate, b * kGemmRowTile,
                std::min<int64_t>(n, e * kGemmRowTile));
  });
}

absl::Status RouterTopkCpu(const RouterTopkParams& p) {
  if (!p.logits) return Null("router", "logits");
  if (!p.topk_ids) return Null("router", "topk_ids");
  if (!p.topk_weights) return Null("router", "topk_weights");
  if (p.topk < 1 || p.topk > p.experts) {
    return absl::InvalidArgumentError(
        absl::StrCat("router: topk ", p.topk, " outside 1..", p.experts));
  }
  std::vector<float> score(p.experts), key(p.experts);
  std::vector<int> order(p.experts);
  for (int t = 0; t < p.tokens; ++t) {
    const float* lg = p.logits + int64_t{t} * p.experts;
    for (int e = 0; e < p.experts; ++e) {
      score[e] = RouterScore(lg[e]);  // sigmoid; NaN counts as -inf (router_math.h)
      key[e] = RouterKey(lg[e], p.bias ? p.bias[e] : 0.0f);
      order[e] = e;
    }
    // Highest key first; ties to the lower expert index (keys are never NaN).
    std::partial_sort(order.begin(), order.begin() + p.topk, order.end(),
                      [&](int a, int b) { return RouterBetter(key[a], a, key[b], b); });
    float sum = 0;
    for (int j = 0; j < p.topk; ++j) sum += score[order[j]];
    for (int j = 0; j < p.topk; ++j) {
      p.topk_ids[t * p.topk + j] = order[j];
      // renormalise over the chosen experts, then scale
      p.topk_weights[t * p.topk + j] = RouterWeight(score[order[j]], sum, p.route_scale);
    }
  }
  return absl::OkStatus();
}

absl::Status ArgmaxCpu(const ArgmaxParams& p) {
  if (!p.logits) return Null("argmax", "logits");
  if (!p.ids) return Null("argmax", "ids");
  for (int r = 0; r < p.rows; ++r) {
    const float* l = p.logits + int64_t{r} * p.cols;
    int best = 0;
    float bv = -std::numeric_limits<float>::infinity();
    for (int c = 0; c < p.cols; ++c) {
      if (l[c] > bv) {  // strict: the lowest index wins ties; NaN never wins
        bv = l[c];
        best = c;
      }
    }
    p.ids[r] = best;
  }
  return absl::OkStatus();
}

}  // namespace qprof::kernels
