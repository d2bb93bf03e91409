// Reading and writing .qtrace files (layout in proto/trace.proto).
//
// TraceWriter streams: Open() writes to "<path>.partial", WriteHeader() once, then any
// number of WriteChunk(), and Close() writes the footer and renames the file to <path>.
// A writer that dies leaves "<path>.partial", which ReadTrace() reads up to the last whole
// frame (Trace.truncated = true, with the byte offset in truncation_detail).
//
// ReadTrace() rejects a file that is not a trace (bad magic) with InvalidArgument naming
// the file; a file cut inside the header gives DataLoss.
#ifndef QPROF_PROTO_TRACE_IO_H_
#define QPROF_PROTO_TRACE_IO_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/trace.pb.h"

namespace qprof {

class TraceWriter {
 public:
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Open(const std::string& path);
  ~TraceWriter();  // without Close(): leaves the .partial file as it is
  absl::Status WriteHeader(const proto::TraceHeader& header);
  absl::Status WriteChunk(const proto::TraceChunk& chunk);
  // Writes the footer, flushes, renames .partial -> path.
  absl::Status Close(const proto::TraceFooter& footer);
  const std::string& path() const { return path_; }

 private:
  TraceWriter(std::string path, std::FILE* f) : path_(std::move(path)), file_(f) {}
  absl::Status WriteFrame(const proto::TraceFrame& frame);
  std::string path_;
  std::FILE* file_ = nullptr;
  bool header_written_ = false;
  uint64_t activities_written_ = 0;  // the footer's activity_count
};

// Writes a whole in-memory trace (header, chunks of at most `chunk_size` activities, footer).
absl::Status WriteTrace(const proto::Trace& trace, const std::string& path,
                        int chunk_size = 4096);

// True when `data` starts with the .qtrace magic (for content-based detection).
bool LooksLikeQtrace(const std::string& first_bytes);

absl::StatusOr<proto::Trace> ReadTrace(const std::string& path);

}  // namespace qprof

#endif  // QPROF_PROTO_TRACE_IO_H_
