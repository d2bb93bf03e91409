// What each launch adds for communication and copies (accumulator.h, "Communication and
// copies"): the copy rows and unions, the collective rows, and the ingest's comm decision.
#include "analysis/aggregate/accumulator.h"
#include "analysis/classify/name_rules.h"
#include "proto/vocabulary.h"

namespace qprof::aggregate {

// A memcpy or memset: the device's copy unions and its row by kind and memory pair.
void TraceAccumulator::AddCopy(const proto::Activity& a, int64_t d) {
  DeviceAcc& dev = DeviceUnion(a.device_id());
  dev.copy.Add(a.start_ns(), a.end_ns());
  dev.all.Add(a.start_ns(), a.end_ns());
  if (last_copy_acc_ == nullptr || a.kind() != last_copy_activity_ ||
      a.copy_kind() != last_copy_kind_ || a.src_memory() != last_src_memory_ ||
      a.dst_memory() != last_dst_memory_) {
    last_copy_acc_ = &state_->copies[CopyKeyOf(a)];  // map nodes do not move
    last_copy_activity_ = a.kind();
    last_copy_kind_ = a.copy_kind();
    last_src_memory_ = a.src_memory();
    last_dst_memory_ = a.dst_memory();
  }
  CopyAcc& c = *last_copy_acc_;
  ++c.calls;
  c.bytes += a.bytes();
  c.time_ns += static_cast<uint64_t>(d);
  c.graph_calls += a.graph_id() != 0 || a.launch_context().graph_launch();
  c.devices.emplace(trace_, a.device_id());
}

// A comm kernel's launch into the row of its collective type and process group.
void TraceAccumulator::AddCollective(const KernelGroup& g, const proto::Activity& a, uint64_t d) {
  CollectiveLaunch l = DescribeCollective(a, g.name, state_->traces[trace_].header);
  CollectiveAcc& c = state_->collectives[l.key];
  ++c.calls;
  c.time_ns += d;
  if (a.graph_id() != 0 || a.launch_context().graph_launch()) {
    ++c.graph_calls;
    c.graph_time_ns += d;
  }
  if (l.bytes) {
    if (c.calls_with_bytes == 0) c.bytes_source = l.bytes_source;
    c.bytes += *l.bytes;
    ++c.calls_with_bytes;
    c.time_with_bytes_ns += d;
  } else if (c.bytes_source.empty()) {
    c.bytes_source = l.bytes_source;
  }
  c.devices.emplace(trace_, a.device_id());
}

bool IsCommLaunch(const proto::Activity& a, const std::string& normalised, int8_t* by_name) {
  const proto::Attribution& at = a.attribution();
  if ((at.evidence() == evidence::kRegistry || at.evidence() == evidence::kModelled) &&
      !at.pipe_class().empty()) {
    return at.pipe_class() == pipe::kComm;
  }
  if (*by_name < 0) *by_name = classify::MatchNameRules(normalised).pipe_class == pipe::kComm;
  return *by_name == 1;
}

bool IsCommLaunch(const proto::Activity& a, const std::string& normalised) {
  int8_t unknown = -1;
  return IsCommLaunch(a, normalised, &unknown);
}

}  // namespace qprof::aggregate
