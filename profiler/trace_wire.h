// .qtrace files written without protobuf: a hand-written encoder of the TraceFrame wire
// format (proto/trace.proto) for the structs of trace_data.h, and a streaming writer.
//
// Why: the injection library must not link protobuf (trace_data.h says why). The bytes
// are those protobuf's own serializer produces for the same message (fields in number
// order, proto3 defaults omitted, optional and message fields emitted when set, map
// entries with both key and value, map keys in sorted order as with deterministic
// serialization); tests/profiler/cupti/trace_wire_test.cc checks that byte for byte, so
// ReadTrace() (proto/trace_io.h) reads these files like any other.
//
// WireTraceWriter streams like TraceWriter: "<path>.partial" with the magic, the header
// frame, chunk frames (each written with one write(2) call, no stdio buffering, so a
// process killed between chunks leaves whole frames only, and a forked child can drop
// the inherited descriptor without flushing the parent's data twice), then the footer,
// fsync and a rename to <path>.
//
// Thread-safety: none; the caller serialises. Never throws; errors come back as status.
#ifndef QPROF_PROFILER_TRACE_WIRE_H_
#define QPROF_PROFILER_TRACE_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "profiler/core_status.h"
#include "profiler/trace_data.h"

namespace qprof::profiler {

// As proto/vocabulary.h's kTraceMagic and kTraceSchemaVersion (a test checks they agree).
inline constexpr char kWireTraceMagic[] = "QPROFTR1";
inline constexpr uint32_t kWireSchemaVersion = 1;
// proto::Provenance values a collector writes.
inline constexpr int kProvenanceMeasuredGpu = 1;

// Encodes TraceFrame messages. Each method appends one frame, preceded by its length as
// a varint (the .qtrace framing), to *out. Reuses internal scratch space between calls.
class FrameEncoder {
 public:
  void Header(const HeaderData& header, std::string* out);
  void Chunk(const ActivityData* activities, size_t n_activities, const RangeData* ranges,
             size_t n_ranges, std::string* out);
  void Footer(const FooterData& footer, std::string* out);

  // The bare message bytes (no frame length, no TraceFrame wrapper), for tests.
  std::string ActivityBytes(const ActivityData& a);
  std::string HeaderBytes(const HeaderData& h);

 private:
  std::vector<std::string> scratch_;  // one per nesting depth
};

class WireTraceWriter {
 public:
  // Creates "<path>.partial" and writes the magic.
  static CoreStatus Open(const std::string& path, std::unique_ptr<WireTraceWriter>* out);
  ~WireTraceWriter();  // without Close(): leaves the .partial file as it is
  WireTraceWriter(const WireTraceWriter&) = delete;
  WireTraceWriter& operator=(const WireTraceWriter&) = delete;

  CoreStatus WriteHeader(const HeaderData& header);
  CoreStatus WriteChunk(const std::vector<ActivityData>& activities,
                        const std::vector<RangeData>& ranges);
  // Writes the footer (activity_count = activities written), fsyncs, closes and renames.
  CoreStatus Close(FooterData footer);
  // Closes the descriptor without writing anything (a forked child's inherited copy).
  void Abandon();

  bool header_written() const { return header_written_; }
  uint64_t activities_written() const { return activities_written_; }
  const std::string& path() const { return path_; }

 private:
  WireTraceWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  CoreStatus WriteAll(const std::string& bytes);

  std::string path_;
  int fd_ = -1;
  bool header_written_ = false;
  uint64_t activities_written_ = 0;
  FrameEncoder encoder_;
  std::string frame_;
};

}  // namespace qprof::profiler

#endif  // QPROF_PROFILER_TRACE_WIRE_H_
