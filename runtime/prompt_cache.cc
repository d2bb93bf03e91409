#include "runtime/prompt_cache.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/common/common_cpu.h"
#include "runtime/synthetic.h"

namespace qprof::runtime {

void FillPromptCache(uint64_t seed, int layer, const std::vector<int>& lens, int stride,
                     int d_qk, int index_dim, std::vector<uint16_t>* kv,
                     std::vector<uint16_t>* index_keys) {
  const int64_t B = static_cast<int64_t>(lens.size());
  kv->assign(static_cast<size_t>(B) * stride * d_qk, 0);
  index_keys->assign(static_cast<size_t>(B) * stride * index_dim, 0);
  SynthSpec kvs{seed, absl::StrCat("cache.layers.", layer, ".kv"), B * stride, d_qk, 1.0f};
  SynthSpec iks{seed, absl::StrCat("cache.layers.", layer, ".index_k"), B * stride, index_dim,
                1.0f};
  std::vector<float> row(std::max(d_qk, index_dim));
  for (int64_t b = 0; b < B; ++b) {
    for (int t = 0; t < lens[b]; ++t) {
      const int64_t r = b * stride + t;
      SynthRows(kvs, r, r + 1, row.data());
      kernels::FloatToBf16N(row.data(), d_qk, &(*kv)[r * d_qk]);
      SynthRows(iks, r, r + 1, row.data());
      kernels::FloatToBf16N(row.data(), index_dim, &(*index_keys)[r * index_dim]);
    }
  }
}

}  // namespace qprof::runtime
