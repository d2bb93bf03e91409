// Exposes the C++ codecs and block quantizers to tests/kernels/formats/ml_dtypes_oracle_test.py,
// which compares them bit for bit with an independent implementation (ml_dtypes + numpy).
//
//   formats_oracle_tool decode OUT            16 E2M1, 256 E4M3, 256 UE8M0 decodes (F32)
//   formats_oracle_tool encode IN OUT         IN: F32 values; OUT: n E2M1 codes, n E4M3 codes
//   formats_oracle_tool mxfp4 ROWS COLS IN OUT   OUT: scales, packed, dequantized F32
//   formats_oracle_tool nvfp4 ROWS COLS IN OUT   OUT: scale2 (F32), scales, packed, dequantized
// Files are raw little-endian arrays. Exit status 1 with a message on any error.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/formats/fp4_codecs.h"
#include "kernels/formats/mxfp4.h"
#include "kernels/formats/nvfp4.h"

namespace {

using namespace qprof::fp4;

std::vector<float> ReadFloats(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<float> v(bytes.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

template <typename T>
void Append(std::string* out, const T* p, size_t n) {
  out->append(reinterpret_cast<const char*>(p), n * sizeof(T));
}

int Fail(const std::string& msg) {
  std::fprintf(stderr, "formats_oracle_tool: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Fail("usage: decode OUT | encode IN OUT | mxfp4|nvfp4 ROWS COLS IN OUT");
  const std::string mode = argv[1];
  std::string out;
  const char* out_path = nullptr;
  if (mode == "decode") {
    out_path = argv[2];
    for (int c = 0; c < 16; ++c) {
      const float f = E2M1ToFloat(static_cast<uint8_t>(c));
      Append(&out, &f, 1);
    }
    for (int c = 0; c < 256; ++c) {
      const float f = E4M3ToFloat(static_cast<uint8_t>(c));
      Append(&out, &f, 1);
    }
    for (int c = 0; c < 256; ++c) {
      const float f = Ue8m0ToFloat(static_cast<uint8_t>(c));
      Append(&out, &f, 1);
    }
  } else if (mode == "encode" && argc == 4) {
    const auto x = ReadFloats(argv[2]);
    out_path = argv[3];
    for (float v : x) out.push_back(static_cast<char>(FloatToE2M1(v)));
    for (float v : x) out.push_back(static_cast<char>(FloatToE4M3(v)));
  } else if ((mode == "mxfp4" || mode == "nvfp4") && argc == 6) {
    const int64_t rows = std::atoll(argv[2]), cols = std::atoll(argv[3]);
    const auto x = ReadFloats(argv[4]);
    out_path = argv[5];
    if (static_cast<int64_t>(x.size()) != rows * cols) return Fail("size mismatch");
    std::vector<float> deq(x.size());
    if (mode == "mxfp4") {
      auto m = QuantizeMxfp4(x.data(), rows, cols, "oracle");
      if (!m.ok()) return Fail(std::string(m.status().message()));
      DequantizeMxfp4(*m, deq.data());
      Append(&out, m->scales.data(), m->scales.size());
      Append(&out, m->packed.data(), m->packed.size());
    } else {
      auto m = QuantizeNvfp4(x.data(), rows, cols, "oracle");
      if (!m.ok()) return Fail(std::string(m.status().message()));
      DequantizeNvfp4(*m, deq.data());
      Append(&out, &m->scale2, 1);
      Append(&out, m->scales.data(), m->scales.size());
      Append(&out, m->packed.data(), m->packed.size());
    }
    Append(&out, deq.data(), deq.size());
  } else {
    return Fail("bad arguments for mode " + mode);
  }
  std::ofstream o(out_path, std::ios::binary);
  o.write(out.data(), static_cast<std::streamsize>(out.size()));
  return o.good() ? 0 : Fail(std::string("cannot write ") + out_path);
}
