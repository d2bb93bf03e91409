// MXFP4 (OCP Microscaling v1.0): blocks of 32 elements along the row (K), one UE8M0
// scale per block. This implements the specification's recipe:
//   shared_exp = floor(log2(amax)) - 2     (2 = emax of E2M1), clamped to [-127, 127]
//   X = 2^shared_exp; element = E2M1_RNE(v / X), saturated to +-6
//   all-zero block -> scale code 0 (2^-127) and zero elements.
// Blocks whose amax mantissa exceeds 1.5 clip their largest element to 6: that is the
// specification, not a bug. (Some training code uses ceil(log2(amax/6)); not this one.)
//
// Storage (the gpt-oss layout): `packed` holds rows*cols/2 bytes, byte i of a row =
// element 2i in the low nibble | element 2i+1 in the high nibble; `scales` holds
// rows*cols/32 UE8M0 codes, row-major [rows, cols/32].
#ifndef QPROF_KERNELS_FORMATS_MXFP4_H_
#define QPROF_KERNELS_FORMATS_MXFP4_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace qprof::fp4 {

inline constexpr int kMxfp4BlockSize = 32;
// Bits per weight with scales: format::BitsPerWeight (proto/vocabulary.h).

struct Mxfp4Matrix {
  int64_t rows = 0;
  int64_t cols = 0;                // K; a multiple of 32
  std::vector<uint8_t> packed;     // [rows, cols/2]
  std::vector<uint8_t> scales;     // [rows, cols/32] UE8M0
};

// Quantizes a row-major [rows, cols] F32 matrix. InvalidArgument when cols % 32 != 0 or
// an element is NaN/Inf (the message names `tensor_name` and the element index).
absl::StatusOr<Mxfp4Matrix> QuantizeMxfp4(const float* data, int64_t rows, int64_t cols,
                                          const std::string& tensor_name);

// Dequantizes into `out` ([rows, cols] F32).
void DequantizeMxfp4(const Mxfp4Matrix& m, float* out);

// As above with an explicit number of threads (1 = the calling thread only). The two
// functions above use up to 2; results are identical for any thread count.
absl::StatusOr<Mxfp4Matrix> QuantizeMxfp4(const float* data, int64_t rows, int64_t cols,
                                          const std::string& tensor_name, int threads);
void DequantizeMxfp4(const Mxfp4Matrix& m, float* out, int threads);

// The UE8M0 scale code of a block with this amax (the spec recipe above; amax >= 0 finite):
// clamp(floor(log2(amax)) - 2, -127, 127) + 127, and 0 for amax == 0.
uint8_t Mxfp4ScaleCodeForAmax(float amax);

// One block: quantizes 32 values into 16 packed bytes and returns the UE8M0 scale code.
// Input must be finite.
uint8_t QuantizeMxfp4Block(const float* v, uint8_t* packed16);

}  // namespace qprof::fp4

#endif  // QPROF_KERNELS_FORMATS_MXFP4_H_
