// Seeded synthetic weights that look like a trained model's where it matters for FP4:
// roughly normal values scaled 1/sqrt(fan_in), a per-row scale drawn log-normally (rows
// differ in magnitude, as output channels do), and a few outlier input channels per
// tensor (columns 8-16x larger than the rest, as in activation-aware quantization studies;
// the row is rescaled so its expected norm is unchanged). Outliers
// inflate the scale of the blocks they fall in, which costs MXFP4 (power-of-two scales,
// 32-element blocks) more than NVFP4 (E4M3 scales, 16-element blocks), as on real models.
//
// Values are a pure function of (seed, tensor name, row, column): a counter-based hash
// (splitmix64), so any row range can be regenerated on demand in any order. The dense FP32
// reference model regenerates unquantized expert weights this way instead of keeping
// gigabytes of FP32 copies. Normal deviates are Irwin-Hall sums of four uniforms
// (bounded at +-3.46 sigma; the outliers supply the heavy tail).
#ifndef QPROF_RUNTIME_SYNTHETIC_H_
#define QPROF_RUNTIME_SYNTHETIC_H_

#include <cstdint>
#include <string>

namespace qprof::runtime {

struct SynthSpec {
  uint64_t seed = 1;
  std::string name;          // tensor name, e.g. "layers.3.ffn.experts.17.w13"
  int64_t rows = 0;
  int64_t cols = 0;
  float std = 1.0f;          // base standard deviation
  float mean = 0.0f;         // added after scaling (norm weights: 1)
  float row_sigma = 0.0f;    // log-normal sigma of the per-row scale (0: none)
  int outlier_channels = 0;  // columns scaled by 8..16
};

// Writes rows [r0, r1) of the tensor into out ([r1 - r0, cols]).
void SynthRows(const SynthSpec& spec, int64_t r0, int64_t r1, float* out);

// Stable 64-bit hash of a tensor name (FNV-1a) mixed with the seed.
uint64_t TensorKey(uint64_t seed, const std::string& name);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_SYNTHETIC_H_
