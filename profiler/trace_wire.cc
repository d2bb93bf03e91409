#include "profiler/trace_wire.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace qprof::profiler {
namespace {

// Wire types (protobuf encoding spec).
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLen = 2;

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutTag(uint32_t field, int type, std::string* out) {
  PutVarint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(type), out);
}

// proto3 scalars are written only when nonzero; int64 is the two's complement varint.
void Uint(uint32_t field, uint64_t v, std::string* out) {
  if (v == 0) return;
  PutTag(field, kVarint, out);
  PutVarint(v, out);
}
void Int(uint32_t field, int64_t v, std::string* out) { Uint(field, static_cast<uint64_t>(v), out); }
// A proto3 `optional` scalar: written whenever it is set, zero included.
void IntAlways(uint32_t field, int64_t v, std::string* out) {
  PutTag(field, kVarint, out);
  PutVarint(static_cast<uint64_t>(v), out);
}
void Bool(uint32_t field, bool v, std::string* out) { Uint(field, v ? 1 : 0, out); }

void DoubleAlways(uint32_t field, double v, std::string* out) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  PutTag(field, kFixed64, out);
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}
// protobuf compares the raw bits with zero (so -0.0 is written).
void Double(uint32_t field, double v, std::string* out) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  if (bits != 0) DoubleAlways(field, v, out);
}

void BytesAlways(uint32_t field, const std::string& s, std::string* out) {
  PutTag(field, kLen, out);
  PutVarint(s.size(), out);
  out->append(s);
}
void String(uint32_t field, const std::string& s, std::string* out) {
  if (!s.empty()) BytesAlways(field, s, out);
}

void Raw(uint32_t field, const std::string& bytes, std::string* out) { BytesAlways(field, bytes, out); }

}  // namespace

// Per-message encoders, each appending one message's fields to `out`. A nested message is
// first encoded into a scratch string (one per nesting depth, reused between calls) and
// then appended with its length.
class FrameEncoderImpl {
 public:
  // Sized once up front: a pointer to one depth's scratch must survive taking the next.
  static constexpr int kMaxDepth = 6;
  explicit FrameEncoderImpl(std::vector<std::string>* scratch) : scratch_(scratch) {
    if (scratch_->size() < kMaxDepth) scratch_->resize(kMaxDepth);
  }

  std::string* S(int depth) {
    (*scratch_)[depth].clear();
    return &(*scratch_)[depth];
  }

  void StringMap(uint32_t field, const std::map<std::string, std::string>& m, int depth,
                 std::string* out) {
    for (const auto& [k, v] : m) {
      std::string* e = S(depth);
      BytesAlways(1, k, e);
      BytesAlways(2, v, e);
      Raw(field, *e, out);
    }
  }

  void Dim3(uint32_t field, const Dim3Data& d, int depth, std::string* out) {
    std::string* m = S(depth);
    Uint(1, d.x, m);
    Uint(2, d.y, m);
    Uint(3, d.z, m);
    Raw(field, *m, out);
  }

  void Metrics(uint32_t field, const MetricsData& k, int depth, std::string* out) {
    std::string* m = S(depth);
    if (k.tensor_pipe_pct) DoubleAlways(1, *k.tensor_pipe_pct, m);
    if (k.fma_pipe_pct) DoubleAlways(2, *k.fma_pipe_pct, m);
    if (k.dram_throughput_pct) DoubleAlways(3, *k.dram_throughput_pct, m);
    if (k.sm_throughput_pct) DoubleAlways(4, *k.sm_throughput_pct, m);
    for (const auto& [name, value] : k.raw) {
      std::string* e = S(depth + 1);
      BytesAlways(1, name, e);
      DoubleAlways(2, value, e);
      Raw(5, *e, m);
    }
    String(6, k.source, m);
    Raw(field, *m, out);
  }

  void Activity(const ActivityData& a, int depth, std::string* out) {
    Uint(1, static_cast<uint64_t>(a.kind), out);
    Uint(2, a.device_id, out);
    Uint(3, a.stream_id, out);
    Int(4, a.start_ns, out);
    Int(5, a.end_ns, out);
    Uint(6, a.correlation_id, out);
    String(7, a.name, out);
    String(8, a.mangled_name, out);
    if (a.grid) Dim3(9, *a.grid, depth, out);
    if (a.block) Dim3(10, *a.block, depth, out);
    Uint(11, a.registers_per_thread, out);
    Uint(12, a.static_shared_bytes, out);
    Uint(13, a.dynamic_shared_bytes, out);
    String(14, a.nvtx_path, out);
    Uint(15, a.bytes, out);
    String(16, a.copy_kind, out);
    Uint(17, a.graph_id, out);
    Uint(18, a.graph_node_id, out);
    Uint(19, a.pid, out);
    Uint(20, a.tid, out);
    if (a.metrics) Metrics(21, *a.metrics, depth, out);
    StringMap(25, a.args, depth, out);
    StringMap(32, a.nvtx_domain_paths, depth, out);
    if (a.launch_ns) IntAlways(80, *a.launch_ns, out);
  }

  void Range(const RangeData& r, std::string* out) {
    String(1, r.path, out);
    String(2, r.name, out);
    Int(3, r.start_ns, out);
    Int(4, r.end_ns, out);
    Uint(5, r.pid, out);
    Uint(6, r.tid, out);
    Uint(7, r.depth, out);
  }

  void Device(const DeviceData& d, std::string* out) {
    Uint(1, d.id, out);
    String(2, d.name, out);
    String(3, d.arch, out);
    String(4, d.kind, out);
    Uint(5, d.sm_count, out);
    Uint(6, d.memory_bytes, out);
    Double(7, d.memory_bandwidth_gbps, out);
    Uint(8, d.cc_major, out);
    Uint(9, d.cc_minor, out);
    Double(10, d.clock_mhz, out);
  }

  void Run(uint32_t field, const RunData& r, int depth, std::string* out) {
    std::string* m = S(depth);
    String(4, r.backend, m);
    String(11, r.command_line, m);
    String(12, r.hostname, m);
    Uint(13, r.start_unix_ns, m);
    String(14, r.qprof_version, m);
    StringMap(16, r.extra, depth + 1, m);
    Raw(field, *m, out);
  }

  void Stats(uint32_t field, const CollectorStatsData& s, int depth, std::string* out) {
    std::string* m = S(depth);
    String(1, s.collector, m);
    Uint(2, s.records_dropped, m);
    Uint(3, s.records_invalid, m);
    Uint(4, s.buffers_allocated, m);
    Uint(5, s.buffer_bytes, m);
    Uint(6, s.overhead_ns, m);
    Uint(7, s.records_total, m);
    Bool(8, s.metrics_requested, m);
    Bool(9, s.metrics_available, m);
    String(10, s.metrics_unavailable_reason, m);
    for (const std::string& w : s.warnings) BytesAlways(11, w, m);
    Uint(12, s.buffers_requested, m);
    Uint(13, s.buffers_refused, m);
    Uint(14, s.buffers_completed, m);
    Uint(15, s.buffers_late, m);
    Uint(16, s.buffers_read_short, m);
    Uint(17, s.records_gpu, m);
    Uint(18, s.records_written, m);
    Uint(19, s.records_outside_window, m);
    Uint(20, s.records_over_cap, m);
    Uint(21, s.records_unattributed, m);
    Uint(22, s.records_unknown_kind, m);
    Uint(23, s.cupti_version, m);
    Uint(24, s.cupti_header_version, m);
    String(25, s.subscriber_conflict, m);
    Uint(26, s.metrics_kernels_matched, m);
    Uint(27, s.metrics_kernels_unmatched, m);
    for (const std::string& w : s.metrics_missing) BytesAlways(28, w, m);
    String(29, s.ended_by, m);
    if (s.cupti_detail) CuptiDetail(100, *s.cupti_detail, depth + 1, m);
    Raw(field, *m, out);
  }

  void CuptiDetail(uint32_t field, const CuptiDetailData& d, int depth, std::string* out) {
    std::string* m = S(depth);
    String(1, d.metric_set, m);
    Uint(2, d.metric_passes, m);
    Uint(3, d.metric_ranges, m);
    Uint(4, d.metric_ranges_refused, m);
    Uint(5, d.launches_captured, m);
    Uint(6, d.graph_launches, m);
    Uint(7, d.graph_kernels_capture_path, m);
    Uint(8, d.graph_kernels_unmapped, m);
    Uint(9, d.records_incomplete, m);
    Uint(10, d.buffers_not_returned, m);
    Uint(11, d.metric_launches_past_limit, m);
    for (const std::string& c : d.contexts_not_profiled) BytesAlways(12, c, m);
    Raw(field, *m, out);
  }

  void Process(uint32_t field, const ProcessData& p, int depth, std::string* out) {
    std::string* m = S(depth);
    Uint(1, p.pid, m);
    Uint(2, p.parent_pid, m);
    String(3, p.run_token, m);
    Uint(4, p.forked_from_pid, m);
    Raw(field, *m, out);
  }

  void Header(const HeaderData& h, int depth, std::string* out) {
    Uint(1, h.schema_version, out);
    Int(2, h.provenance, out);
    if (h.run) Run(3, *h.run, depth, out);
    for (const DeviceData& d : h.devices) {
      std::string* m = S(depth);
      Device(d, m);
      Raw(4, *m, out);
    }
    if (h.collector) Stats(5, *h.collector, depth, out);
    String(7, h.source_kind, out);
    for (const std::string& n : h.notes) BytesAlways(8, n, out);
    if (h.process) Process(12, *h.process, depth, out);
  }

  void Footer(const FooterData& f, int depth, std::string* out) {
    if (f.collector) Stats(1, *f.collector, depth, out);
    if (f.run) Run(2, *f.run, depth, out);
    Uint(3, f.activity_count, out);
  }

 private:
  std::vector<std::string>* scratch_;
};

namespace {

void AppendFrame(uint32_t oneof_field, const std::string& message, std::string* out) {
  // TraceFrame { oneof frame { ... = oneof_field } }: a oneof member is written even when
  // its message is empty.
  std::string frame;
  BytesAlways(oneof_field, message, &frame);
  PutVarint(frame.size(), out);
  out->append(frame);
}

}  // namespace

void FrameEncoder::Header(const HeaderData& header, std::string* out) {
  FrameEncoderImpl impl(&scratch_);
  std::string message;
  impl.Header(header, 0, &message);
  AppendFrame(1, message, out);
}

void FrameEncoder::Chunk(const ActivityData* activities, size_t n_activities,
                         const RangeData* ranges, size_t n_ranges, std::string* out) {
  FrameEncoderImpl impl(&scratch_);
  std::string chunk;
  std::string item;
  for (size_t i = 0; i < n_activities; ++i) {
    item.clear();
    impl.Activity(activities[i], 0, &item);
    BytesAlways(1, item, &chunk);
  }
  for (size_t i = 0; i < n_ranges; ++i) {
    item.clear();
    impl.Range(ranges[i], &item);
    BytesAlways(2, item, &chunk);
  }
  AppendFrame(2, chunk, out);
}

void FrameEncoder::Footer(const FooterData& footer, std::string* out) {
  FrameEncoderImpl impl(&scratch_);
  std::string message;
  impl.Footer(footer, 0, &message);
  AppendFrame(3, message, out);
}

std::string FrameEncoder::ActivityBytes(const ActivityData& a) {
  FrameEncoderImpl impl(&scratch_);
  std::string out;
  impl.Activity(a, 0, &out);
  return out;
}

std::string FrameEncoder::HeaderBytes(const HeaderData& h) {
  FrameEncoderImpl impl(&scratch_);
  std::string out;
  impl.Header(h, 0, &out);
  return out;
}

namespace {

CoreStatus IoError(const std::string& what, const std::string& path, int err) {
  return CoreStatus(CoreCode::kInternal, path + ": " + what + ": " + std::strerror(err));
}

}  // namespace

CoreStatus WireTraceWriter::Open(const std::string& path, std::unique_ptr<WireTraceWriter>* out) {
  const std::string partial = path + ".partial";
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create", partial, errno);
  out->reset(new WireTraceWriter(path, fd));
  return (*out)->WriteAll(std::string(kWireTraceMagic, sizeof(kWireTraceMagic) - 1));
}

WireTraceWriter::~WireTraceWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void WireTraceWriter::Abandon() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

CoreStatus WireTraceWriter::WriteAll(const std::string& bytes) {
  if (fd_ < 0) return CoreStatus(CoreCode::kFailedPrecondition, path_ + ": trace writer is closed");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("write failed", path_ + ".partial", errno);
    done += static_cast<size_t>(n);
  }
  return OkCore();
}

CoreStatus WireTraceWriter::WriteHeader(const HeaderData& header) {
  if (header_written_) {
    return CoreStatus(CoreCode::kFailedPrecondition, path_ + ": trace header written twice");
  }
  frame_.clear();
  encoder_.Header(header, &frame_);
  QPROF_CORE_RETURN_IF_ERROR(WriteAll(frame_));
  header_written_ = true;
  return OkCore();
}

CoreStatus WireTraceWriter::WriteChunk(const std::vector<ActivityData>& activities,
                                       const std::vector<RangeData>& ranges) {
  if (!header_written_) {
    return CoreStatus(CoreCode::kFailedPrecondition,
                      path_ + ": trace chunk written before the header");
  }
  if (activities.empty() && ranges.empty()) return OkCore();
  frame_.clear();
  encoder_.Chunk(activities.data(), activities.size(), ranges.data(), ranges.size(), &frame_);
  QPROF_CORE_RETURN_IF_ERROR(WriteAll(frame_));
  activities_written_ += activities.size();
  return OkCore();
}

CoreStatus WireTraceWriter::Close(FooterData footer) {
  if (!header_written_) {
    return CoreStatus(CoreCode::kFailedPrecondition,
                      path_ + ": trace closed before the header was written");
  }
  footer.activity_count = activities_written_;
  frame_.clear();
  encoder_.Footer(footer, &frame_);
  QPROF_CORE_RETURN_IF_ERROR(WriteAll(frame_));
  const std::string partial = path_ + ".partial";
  const bool synced = ::fsync(fd_) == 0;
  const int sync_err = errno;
  const bool closed = ::close(fd_) == 0;
  fd_ = -1;
  if (!synced || !closed) return IoError("flush failed", partial, synced ? errno : sync_err);
  if (std::rename(partial.c_str(), path_.c_str()) != 0) return IoError("rename failed", path_, errno);
  return OkCore();
}

}  // namespace qprof::profiler
