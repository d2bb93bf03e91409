#include "kernels/mla/mla_cpu.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/thread_pool.h"
#include "kernels/common/vec.h"
#include "kernels/mla/indexer_rule.h"

namespace qprof::kernels {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

absl::Status Bad(const char* kernel, const std::string& m) {
  return absl::InvalidArgumentError(absl::StrCat(kernel, ": ", m));
}

// Softmax-weighted sum over the selected rows for one (b, h): FP32 throughout. `rows`
// holds the selected KV rows as FP32 [n, d_qk].
QPROF_CPU_CLONES void AttendHead(const float* q, const float* rows, int64_t n, int d_qk,
                                 int d_v, float scale, float* scores, float* out,
                                 float* lse) {
  float mx = kNegInf;
  for (int64_t i = 0; i < n; ++i) {
    scores[i] = Dot(q, rows + i * d_qk, d_qk) * scale;
    mx = std::max(mx, scores[i]);
  }
  std::fill(out, out + d_v, 0.0f);
  if (n == 0) {
    if (lse) *lse = kNegInf;
    return;
  }
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    scores[i] = std::exp(scores[i] - mx);
    sum += scores[i];
  }
  const float inv = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i) Axpy(scores[i] * inv, rows + i * d_qk, out, d_v);
  if (lse) *lse = mx + std::log(sum);
}

QPROF_CPU_CLONES void IndexScores(const IndexerParams& p, int b, int len, float* scores,
                                  std::vector<float>& key) {
  key.resize(p.index_dim);
  const float* q = p.q + int64_t{b} * p.index_heads * p.index_dim;
  const float* w = p.head_weights + int64_t{b} * p.index_heads;
  for (int t = 0; t < len; ++t) {
    Bf16ToFloatN(p.keys + (int64_t{b} * p.kv_seq_stride + t) * p.index_dim, p.index_dim,
                 key.data());
    float acc = 0;
    for (int h = 0; h < p.index_heads; ++h) {
      float d = Dot(q + int64_t{h} * p.index_dim, key.data(), p.index_dim);
      acc += w[h] * IndexerRelu(d);  // w_h * relu(q_h . k_t); relu(NaN) = 0
    }
    scores[t] = acc;
  }
}

// Top index_topk by score (ties: lower index; NaN counts as -inf: indexer_rule.h), plus the
// window, ascending, -1 padded.
int SelectTokens(const IndexerParams& p, int len, const float* scores, int32_t* out) {
  std::vector<int32_t> order(len);
  std::vector<float> key(len);
  std::iota(order.begin(), order.end(), 0);
  for (int t = 0; t < len; ++t) key[t] = IndexerRankKey(scores[t]);
  const int keep = std::min(len, p.index_topk);
  std::partial_sort(order.begin(), order.begin() + keep, order.end(), [&](int a, int b) {
    return key[a] > key[b] || (key[a] == key[b] && a < b);
  });
  std::vector<char> chosen(len, 0);
  for (int i = 0; i < keep; ++i) chosen[order[i]] = 1;
  for (int t = std::max(0, len - p.window); t < len; ++t) chosen[t] = 1;
  int n = 0;
  for (int t = 0; t < len && n < p.out_topk; ++t) {
    if (chosen[t]) out[n++] = t;
  }
  for (int i = n; i < p.out_topk; ++i) out[i] = -1;
  return n;
}

}  // namespace

absl::Status ValidateSparseMlaParams(const SparseMlaParams& p) {
  const char* k = "sparse_mla";
  if (p.batch < 0 || p.heads <= 0 || p.d_v <= 0 || p.d_qk < p.d_v || p.topk < 0 ||
      p.kv_seq_stride < 0) {
    return Bad(k, absl::StrCat("bad dims batch=", p.batch, " heads=", p.heads, " d_v=", p.d_v,
                               " d_qk=", p.d_qk, " topk=", p.topk));
  }
  if (!p.q) return Bad(k, "q is null");
  if (!p.kv) return Bad(k, "kv is null");
  if (!p.seq_lens) return Bad(k, "seq_lens is null");
  if (!p.indices) return Bad(k, "indices is null");
  if (!p.out) return Bad(k, "out is null");
  for (int b = 0; b < p.batch; ++b) {
    if (p.seq_lens[b] < 0 || p.seq_lens[b] > p.kv_seq_stride) {
      return Bad(k, absl::StrCat("seq_lens[", b, "] = ", p.seq_lens[b], " outside 0..",
                                 p.kv_seq_stride));
    }
    for (int i = 0; i < p.topk; ++i) {
      int32_t t = p.indices[int64_t{b} * p.topk + i];
      if (t >= p.seq_lens[b]) {
        return Bad(k, absl::StrCat("indices[", b, ", ", i, "] = ", t, " >= seq_len ",
                                   p.seq_lens[b]));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status SparseMlaDecodeReferenceCpu(const SparseMlaParams& p) {
  if (absl::Status s = ValidateSparseMlaParams(p); !s.ok()) return s;
  std::vector<float> scores(p.topk);
  for (int b = 0; b < p.batch; ++b) {
    const int32_t* idx = p.indices + int64_t{b} * p.topk;
    for (int h = 0; h < p.heads; ++h) {
      const float* q = p.q + (int64_t{b} * p.heads + h) * p.d_qk;
      float* out = p.out + (int64_t{b} * p.heads + h) * p.d_v;
      float mx = kNegInf;
      for (int i = 0; i < p.topk; ++i) {
        scores[i] = kNegInf;
        if (idx[i] < 0) continue;
        const uint16_t* row = p.kv + (int64_t{b} * p.kv_seq_stride + idx[i]) * p.d_qk;
        float acc = 0;  // FP32, index order
        for (int c = 0; c < p.d_qk; ++c) acc += q[c] * Bf16ToFloat(row[c]);
        scores[i] = acc * p.softmax_scale;
        mx = std::max(mx, scores[i]);
      }
      float sum = 0;
      for (int i = 0; i < p.topk; ++i) {
        if (idx[i] >= 0) sum += std::exp(scores[i] - mx);
      }
      for (int c = 0; c < p.d_v; ++c) {
        float acc = 0;
        for (int i = 0; i < p.topk; ++i) {
          if (idx[i] < 0) continue;
          const uint16_t* row = p.kv + (int64_t{b} * p.kv_seq_stride + idx[i]) * p.d_qk;
          acc += std::exp(scores[i] - mx) / sum * Bf16ToFloat(row[c]);
        }
        out[c] = sum > 0 ? acc : 0.0f;
      }
      if (p.lse) p.lse[int64_t{b} * p.heads + h] = sum > 0 ? mx + std::log(sum) : kNegInf;
    }
  }
  return absl::OkStatus();
}

absl::Status SparseMlaDecodeCpu(const SparseMlaParams& p) {
  if (absl::Status s = ValidateSparseMlaParams(p); !s.ok()) return s;
  // Work items: (sequence, head group). Groups let a small batch still use every core;
  // each item converts its sequence's selected rows from BF16 once for its heads.
  const int threads = p.pool ? p.pool->size() : 1;
  const int groups = std::min(p.heads, std::max(1, (2 * threads + p.batch - 1) /
                                                       std::max(1, p.batch)));
  const int per_group = (p.heads + groups - 1) / groups;
  ParallelFor(p.pool, int64_t{p.batch} * groups, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> rows, scores;
    for (int64_t item = begin; item < end; ++item) {
      const int b = static_cast<int>(item / groups), g = static_cast<int>(item % groups);
      const int32_t* idx = p.indices + int64_t{b} * p.topk;
      rows.resize(static_cast<size_t>(p.topk) * p.d_qk);
      scores.resize(p.topk);
      int64_t n = 0;
      for (int i = 0; i < p.topk; ++i) {
        if (idx[i] < 0) continue;
        Bf16ToFloatN(p.kv + (int64_t{b} * p.kv_seq_stride + idx[i]) * p.d_qk, p.d_qk,
                     rows.data() + n * p.d_qk);
        ++n;
      }
      for (int h = g * per_group; h < std::min(p.heads, (g + 1) * per_group); ++h) {
        const int64_t bh = int64_t{b} * p.heads + h;
        AttendHead(p.q + bh * p.d_qk, rows.data(), n, p.d_qk, p.d_v, p.softmax_scale,
                   scores.data(), p.out + bh * p.d_v, p.lse ? p.lse + bh : nullptr);
      }
    }
  });
  return absl::OkStatus();
}

absl::Status ValidateIndexerParams(const IndexerParams& p) {
  const char* k = "indexer";
  if (p.batch < 0 || p.index_heads <= 0 || p.index_dim <= 0 || p.index_topk < 0 ||
      p.window < 0 || p.out_topk < 0) {
    return Bad(k, "bad dims");
  }
  if (!p.q || !p.head_weights || !p.keys || !p.seq_lens || !p.scores || !p.indices) {
    return Bad(k, "a required pointer (q, head_weights, keys, seq_lens, scores, indices) "
                  "is null");
  }
  for (int b = 0; b < p.batch; ++b) {
    int len = p.seq_lens[b];
    if (len < 0 || len > p.kv_seq_stride) {
      return Bad(k, absl::StrCat("seq_lens[", b, "] = ", len, " outside 0..", p.kv_seq_stride));
    }
    if (p.out_topk < std::min(len, p.index_topk + p.window)) {
      return Bad(k, absl::StrCat("out_topk ", p.out_topk, " < min(len, index_topk + window)"));
    }
  }
  return absl::OkStatus();
}

absl::Status IndexerTopkReferenceCpu(const IndexerParams& p) {
  if (absl::Status s = ValidateIndexerParams(p); !s.ok()) return s;
  for (int b = 0; b < p.batch; ++b) {
    const int len = p.seq_lens[b];
    float* scores = p.scores + int64_t{b} * p.kv_seq_stride;
    for (int t = 0; t < len; ++t) {
      const uint16_t* key = p.keys + (int64_t{b} * p.kv_seq_stride + t) * p.index_dim;
      float acc = 0;
      for (int h = 0; h < p.index_heads; ++h) {
        const float* q = p.q + (int64_t{b} * p.index_heads + h) * p.index_dim;
        float d = 0;  // FP32, index order
        for (int c = 0; c < p.index_dim; ++c) d += q[c] * Bf16ToFloat(key[c]);
        acc += p.head_weights[int64_t{b} * p.index_heads + h] * IndexerRelu(d);
      }
      scores[t] = acc;
    }
    int n = SelectTokens(p, len, scores, p.indices + int64_t{b} * p.out_topk);
    if (p.counts) p.counts[b] = n;
  }
  return absl::OkStatus();
}

absl::Status IndexerTopkCpu(const IndexerParams& p) {
  if (absl::Status s = ValidateIndexerParams(p); !s.ok()) return s;
  ParallelFor(p.pool, p.batch, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> key;
    for (int64_t b = begin; b < end; ++b) {
      const int len = p.seq_lens[b];
      float* scores = p.scores + b * p.kv_seq_stride;
      IndexScores(p, static_cast<int>(b), len, scores, key);
      int n = SelectTokens(p, len, scores, p.indices + b * p.out_topk);
      if (p.counts) p.counts[b] = n;
    }
  });
  return absl::OkStatus();
}

}  // namespace qprof::kernels
