// NVFP4 (NVIDIA, ModelOpt reference): blocks of 16 elements along K, one E4M3 block scale
// per block, one FP32 scale per tensor:
//   weight_scale_2 = amax_tensor / (6 * 448)            (all-zero tensor -> 1.0)
//   block_scale[b] = E4M3_RNE(max(amax_b / (6 * weight_scale_2), 2^-9))  (6*ws2 in fp32 first;
//                    all-zero block -> 1.0)
//   element = E2M1_RNE(w / (float(block_scale) * weight_scale_2))  (product in fp32, then one
//             fp32 division)
//   dequant = e2m1 * float(e4m3) * weight_scale_2
//
// Storage (the ModelOpt layout): `packed` rows*cols/2 bytes (low nibble = even element),
// `scales` [rows, cols/16] E4M3 codes (unswizzled), `scale2` the FP32 weight_scale_2.
#ifndef QPROF_KERNELS_FORMATS_NVFP4_H_
#define QPROF_KERNELS_FORMATS_NVFP4_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace qprof::fp4 {

inline constexpr int kNvfp4BlockSize = 16;
// Bits per weight with scales: format::BitsPerWeight (proto/vocabulary.h).

struct Nvfp4Matrix {
  int64_t rows = 0;
  int64_t cols = 0;                // K; a multiple of 16
  std::vector<uint8_t> packed;     // [rows, cols/2]
  std::vector<uint8_t> scales;     // [rows, cols/16] E4M3
  float scale2 = 1.0f;             // weight_scale_2
};

// Quantizes a row-major [rows, cols] F32 matrix with one tensor scale computed from this
// matrix's amax. InvalidArgument when cols % 16 != 0 or an element is NaN/Inf.
absl::StatusOr<Nvfp4Matrix> QuantizeNvfp4(const float* data, int64_t rows, int64_t cols,
                                          const std::string& tensor_name);

// As above with a given weight_scale_2 (MoE w1 and w3 share one global scale).
absl::StatusOr<Nvfp4Matrix> QuantizeNvfp4WithScale2(const float* data, int64_t rows,
                                                    int64_t cols, float scale2,
                                                    const std::string& tensor_name);

// weight_scale_2 for a tensor with this amax (amax / (6*448), or 1 for amax == 0).
float Nvfp4Scale2ForAmax(float amax);

void DequantizeNvfp4(const Nvfp4Matrix& m, float* out);

// As above with an explicit number of threads (1 = the calling thread only). The
// functions above use up to 2; results are identical for any thread count.
absl::StatusOr<Nvfp4Matrix> QuantizeNvfp4WithScale2(const float* data, int64_t rows,
                                                    int64_t cols, float scale2,
                                                    const std::string& tensor_name,
                                                    int threads);
void DequantizeNvfp4(const Nvfp4Matrix& m, float* out, int threads);

// Largest |x| of `n` values, or InvalidArgument naming `tensor_name` and the index of the
// first NaN/Inf. (QuantizeNvfp4 = this, Nvfp4Scale2ForAmax, QuantizeNvfp4WithScale2; MoE
// callers take the max over w1 and w3 first.)
absl::StatusOr<float> AbsMaxFinite(const float* data, int64_t n, const std::string& tensor_name,
                                   int threads = 2);
// As above for a [rows, cols] matrix: the error also gives the row and column.
absl::StatusOr<float> AbsMaxFinite(const float* data, int64_t rows, int64_t cols,
                                   const std::string& tensor_name, int threads);

// One block of 16 (finite input): writes 8 packed bytes and returns the E4M3 scale code.
uint8_t QuantizeNvfp4Block(const float* v, float scale2, uint8_t* packed8);

}  // namespace qprof::fp4

#endif  // QPROF_KERNELS_FORMATS_NVFP4_H_
