// The prompt part of the KV and index-key caches, synthetic (seeded rows ~N(0,1), like the
// normalised latents a prefill would have written): one definition for both decoders, so
// a CPU and a GPU run of the same seed attend over the same cache.
#ifndef QPROF_RUNTIME_PROMPT_CACHE_H_
#define QPROF_RUNTIME_PROMPT_CACHE_H_

#include <cstdint>
#include <vector>

namespace qprof::runtime {

// Layer `layer`'s caches for sequences of `lens` prompt tokens, `stride` rows reserved per
// sequence: *kv [B, stride, d_qk] and *index_keys [B, stride, index_dim], BF16 bits, rows
// past each prompt zero.
void FillPromptCache(uint64_t seed, int layer, const std::vector<int>& lens, int stride,
                     int d_qk, int index_dim, std::vector<uint16_t>* kv,
                     std::vector<uint16_t>* index_keys);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_PROMPT_CACHE_H_
