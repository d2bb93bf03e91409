// safetensors reading and writing.
//
// Layout: 8-byte little-endian header length H, H bytes of JSON, then the data section.
// The JSON maps tensor names to {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}
// (offsets relative to the data section) plus an optional "__metadata__" string map.
//
// Reading memory-maps the file and validates everything before handing out a byte: the
// header length against the file size, each dtype, shape x element size against the
// byte range, ranges inside the data section and not overlapping, no duplicate names.
// Each problem gives one InvalidArgument (DataLoss for a cut file) naming the file and
// the tensor; no input can make the reader touch memory outside the mapping.
//
// Writing is atomic: a temporary file next to the destination, renamed when complete.
// The header is padded with spaces to a multiple of 8 so tensor data stays aligned.
#ifndef QPROF_RUNTIME_WEIGHTS_SAFETENSORS_H_
#define QPROF_RUNTIME_WEIGHTS_SAFETENSORS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/file_util.h"

namespace qprof::weights {

enum class Dtype {
  kBool, kU8, kI8, kU16, kI16, kU32, kI32, kU64, kI64,
  kF16, kBF16, kF32, kF64, kF8E4M3, kF8E5M2, kF8E8M0,
};

// "F32", "BF16", "F8_E4M3", ... as safetensors spells them.
const char* DtypeName(Dtype d);
// InvalidArgument for an unknown name.
absl::StatusOr<Dtype> ParseDtype(std::string_view name);
size_t DtypeSize(Dtype d);

struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::kU8;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets in the data section, [begin, end)
  uint64_t end = 0;
  int64_t NumElements() const;  // 1 for shape []
};

// "[4096, 4096]"
std::string ShapeString(const std::vector<int64_t>& shape);

// Parses and validates a whole safetensors image held in memory. `name_for_errors` is
// prefixed to every message (the file path). Exposed for tests and fuzzing; SafetensorsFile
// uses it on the mapped file.
struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;  // in header order
  std::map<std::string, std::string> metadata;
  uint64_t data_offset = 0;  // 8 + header length
};
absl::StatusOr<SafetensorsHeader> ParseSafetensors(const uint8_t* data, size_t size,
                                                   const std::string& name_for_errors);

// A memory-mapped, validated safetensors file. Movable.
class SafetensorsFile {
 public:
  static absl::StatusOr<SafetensorsFile> Open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<TensorInfo>& tensors() const { return header_.tensors; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  // nullptr when absent.
  const TensorInfo* Find(std::string_view name) const;
  // The tensor's bytes inside the mapping (valid while this object lives).
  const uint8_t* Data(const TensorInfo& t) const { return map_.data() + header_.data_offset + t.begin; }
  // NotFound naming the file when absent.
  absl::StatusOr<const TensorInfo*> Get(std::string_view name) const;
  // F32, BF16 and F16 tensors converted to F32 (exactly: both widen losslessly).
  // InvalidArgument for other dtypes.
  absl::StatusOr<std::vector<float>> ReadAsF32(const TensorInfo& t) const;

 private:
  std::string path_;
  MappedFile map_;
  SafetensorsHeader header_;
  std::map<std::string, size_t, std::less<>> index_;
};

// Widening conversions used by ReadAsF32 (exposed for tests).
float Bf16ToFloat(uint16_t bits);
float F16ToFloat(uint16_t bits);
// Round-to-nearest-even narrowing (NaN stays NaN), for writers of BF16/F16 test data.
uint16_t FloatToBf16(float f);
uint16_t FloatToF16(float f);

// Collects tensors and writes them in insertion order. Data is either owned (moved in) or
// borrowed (must outlive Write(), e.g. a tensor of an open SafetensorsFile).
class SafetensorsWriter {
 public:
  // InvalidArgument when the name is a duplicate or `bytes` does not match dtype x shape.
  absl::Status Add(const std::string& name, Dtype dtype, std::vector<int64_t> shape,
                   std::vector<uint8_t> bytes);
  absl::Status AddBorrowed(const std::string& name, Dtype dtype, std::vector<int64_t> shape,
                           const uint8_t* data, size_t size);
  void SetMetadata(const std::string& key, const std::string& value) { metadata_[key] = value; }
  size_t size() const { return entries_.size(); }
  // Writes the file atomically (temp + fsync + rename).
  absl::Status Write(const std::string& path) const;

 private:
  struct Entry {
    std::string name;
    Dtype dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> owned;
    const uint8_t* data = nullptr;
    size_t size = 0;
  };
  absl::Status Check(const std::string& name, Dtype dtype, const std::vector<int64_t>& shape,
                     size_t size) const;
  std::vector<Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace qprof::weights

#endif  // QPROF_RUNTIME_WEIGHTS_SAFETENSORS_H_
