// Host-side entry to the device codec kernel (no CUDA types in this header).
#ifndef QPROF_TESTS_FORMATS_CUDA_CODECS_CUDA_H_
#define QPROF_TESTS_FORMATS_CUDA_CODECS_CUDA_H_

#include <cstdint>
#include <string>
#include <vector>

namespace qprof::fp4::testing {

int DeviceCount();
// Encodes `in` to E2M1 and E4M3 on the device and decodes all E4M3 (256), UE8M0 (256) and
// E2M1 (16) codes into `decoded`. Returns "" or the CUDA error string.
std::string RunCodecsOnDevice(const std::vector<float>& in, std::vector<uint8_t>* e2m1,
                              std::vector<uint8_t>* e4m3, std::vector<float>* decoded);

}  // namespace qprof::fp4::testing

#endif  // QPROF_TESTS_FORMATS_CUDA_CODECS_CUDA_H_
