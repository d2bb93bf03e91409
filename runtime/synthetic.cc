#include "runtime/synthetic.h"

#include <cmath>
#include <vector>

namespace qprof::runtime {
namespace {

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Sum of four 16-bit uniforms, centred and scaled to unit variance: Irwin-Hall(4) has
// variance 4/12, so multiply by sqrt(3).
inline float Normalish(uint64_t h) {
  float s = static_cast<float>(h & 0xFFFF) + static_cast<float>((h >> 16) & 0xFFFF) +
            static_cast<float>((h >> 32) & 0xFFFF) + static_cast<float>(h >> 48);
  return (s / 65536.0f - 2.0f) * 1.7320508f;
}

}  // namespace

uint64_t TensorKey(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return SplitMix64(h ^ SplitMix64(seed));
}

void SynthRows(const SynthSpec& spec, int64_t r0, int64_t r1, float* out) {
  const uint64_t key = TensorKey(spec.seed, spec.name);
  // Outlier columns and their gains, a function of the tensor key only.
  std::vector<float> col_gain;
  if (spec.outlier_channels > 0 && spec.cols > 0) {
    col_gain.assign(spec.cols, 1.0f);
    for (int i = 0; i < spec.outlier_channels; ++i) {
      uint64_t h = SplitMix64(key ^ (0xC0FFEEull + i));
      col_gain[h % spec.cols] = 8.0f + 8.0f * static_cast<float>((h >> 40) & 0xFFFF) / 65536.0f;
    }
    // Keep the row's expected square norm at cols * std^2, so outliers change the shape
    // of the distribution (what the block scales see) but not the layer's output scale.
    double sq = 0;
    for (float g : col_gain) sq += double(g) * g;
    const float norm = static_cast<float>(std::sqrt(spec.cols / sq));
    for (float& g : col_gain) g *= norm;
  }
  for (int64_t r = r0; r < r1; ++r) {
    float row_scale = spec.std;
    if (spec.row_sigma > 0) {
      row_scale *= std::exp(spec.row_sigma * Normalish(SplitMix64(key ^ (~uint64_t(r)))));
    }
    float* o = out + (r - r0) * spec.cols;
    const uint64_t row_key = key + static_cast<uint64_t>(r) * 0x9E3779B97F4A7C15ull;
    for (int64_t c = 0; c < spec.cols; ++c) {
      float v = Normalish(SplitMix64(row_key + static_cast<uint64_t>(c))) * row_scale;
      if (!col_gain.empty()) v *= col_gain[c];
      o[c] = v + spec.mean;
    }
  }
}

}  // namespace qprof::runtime
