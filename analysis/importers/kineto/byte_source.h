// Sequential byte sources for the streaming JSON reader: a plain file, a gzip file
// (inflated as a stream, several members allowed, as `gzip -c a b > c` writes), or bytes
// in memory (fuzzers, tests). Read() returns 0 only at the end of the data.
#ifndef QPROF_ANALYSIS_IMPORTERS_KINETO_BYTE_SOURCE_H_
#define QPROF_ANALYSIS_IMPORTERS_KINETO_BYTE_SOURCE_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace qprof::importers {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `n` bytes into `out`; 0 = end of data. Errors name the source.
  virtual absl::StatusOr<size_t> Read(char* out, size_t n) = 0;
  // Bytes consumed from the underlying file (compressed bytes for gzip), for progress.
  virtual uint64_t consumed() const = 0;
  // Size of the underlying file, 0 if unknown.
  virtual uint64_t total() const = 0;
};

// Opens `path`, inflating it when it starts with the gzip magic. `label` names errors.
absl::StatusOr<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path);

// Bytes in memory, inflated when they start with the gzip magic. `data` must outlive it.
std::unique_ptr<ByteSource> MemoryByteSource(std::string_view data, const std::string& label);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_KINETO_BYTE_SOURCE_H_
