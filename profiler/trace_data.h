// The trace records a collector produces, as plain C++ structs: no protobuf, no Abseil.
//
// Why not proto::Activity directly: the injection library (profiler/inject) runs inside
// someone else's process and must not carry protobuf or Abseil (Debian ships neither as
// position-independent static archives, and the shared ones could clash with the host's
// copies). So the collector core builds these structs; the injection library serialises
// them with profiler/trace_wire.h (a hand-written encoder of the same wire format, tested
// byte for byte against protobuf's), and in-process users convert them with
// profiler/trace_data_proto.h.
//
// Each struct mirrors the proto message of the same role in proto/trace.proto, field for
// field, for the fields a collector fills. Field comments live there.
#ifndef QPROF_PROFILER_TRACE_DATA_H_
#define QPROF_PROFILER_TRACE_DATA_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace qprof::profiler {

// proto::ActivityKind values.
enum class ActivityKindData : int { kUnspecified = 0, kKernel = 1, kMemcpy = 2, kMemset = 3 };

struct Dim3Data {
  uint32_t x = 0, y = 0, z = 0;
};

struct MetricsData {  // proto::KernelMetrics
  std::optional<double> tensor_pipe_pct;
  std::optional<double> fma_pipe_pct;
  std::optional<double> dram_throughput_pct;
  std::optional<double> sm_throughput_pct;
  std::map<std::string, double> raw;
  std::string source;
};

struct ActivityData {  // proto::Activity
  ActivityKindData kind = ActivityKindData::kUnspecified;
  uint32_t device_id = 0;
  uint64_t stream_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = 0;
  std::string name;
  std::string mangled_name;
  std::optional<Dim3Data> grid;   // set for kernels
  std::optional<Dim3Data> block;
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  std::string nvtx_path;
  uint64_t bytes = 0;
  std::string copy_kind;
  uint64_t graph_id = 0;
  uint64_t graph_node_id = 0;
  uint32_t pid = 0;
  uint64_t tid = 0;
  std::optional<MetricsData> metrics;
  std::map<std::string, std::string> args;
  std::map<std::string, std::string> nvtx_domain_paths;
  std::optional<int64_t> launch_ns;  // the API call's start (proto field 80, optional)
};

struct RangeData {  // proto::NvtxRange
  std::string path;
  std::string name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t pid = 0;
  uint64_t tid = 0;
  uint32_t depth = 0;
};

struct DeviceData {  // proto::DeviceInfo
  uint32_t id = 0;
  std::string name;
  std::string arch;
  std::string kind;
  uint32_t sm_count = 0;
  uint64_t memory_bytes = 0;
  double memory_bandwidth_gbps = 0;
  uint32_t cc_major = 0;
  uint32_t cc_minor = 0;
  double clock_mhz = 0;
};

struct CuptiDetailData {  // proto::CuptiCollectionDetail
  std::string metric_set;
  uint32_t metric_passes = 0;
  uint64_t metric_ranges = 0;
  uint64_t metric_ranges_refused = 0;
  uint64_t launches_captured = 0;
  uint64_t graph_launches = 0;
  uint64_t graph_kernels_capture_path = 0;
  uint64_t graph_kernels_unmapped = 0;
  uint64_t records_incomplete = 0;
  uint64_t buffers_not_returned = 0;
  uint64_t metric_launches_past_limit = 0;
  std::vector<std::string> contexts_not_profiled;
};

struct CollectorStatsData {  // proto::CollectorStats
  std::string collector;
  uint64_t records_dropped = 0;
  uint64_t records_invalid = 0;
  uint64_t buffers_allocated = 0;
  uint64_t buffer_bytes = 0;
  uint64_t overhead_ns = 0;
  uint64_t records_total = 0;
  bool metrics_requested = false;
  bool metrics_available = false;
  std::string metrics_unavailable_reason;
  std::vector<std::string> warnings;
  uint64_t buffers_requested = 0;
  uint64_t buffers_refused = 0;
  uint64_t buffers_completed = 0;
  uint64_t buffers_late = 0;
  uint64_t buffers_read_short = 0;
  uint64_t records_gpu = 0;
  uint64_t records_written = 0;
  uint64_t records_outside_window = 0;
  uint64_t records_over_cap = 0;
  uint64_t records_unattributed = 0;
  uint64_t records_unknown_kind = 0;
  uint32_t cupti_version = 0;
  uint32_t cupti_header_version = 0;
  std::string subscriber_conflict;
  uint64_t metrics_kernels_matched = 0;
  uint64_t metrics_kernels_unmatched = 0;
  std::vector<std::string> metrics_missing;
  std::string ended_by;
  std::optional<CuptiDetailData> cupti_detail;
};

struct RunData {  // proto::RunInfo (the fields a collector knows)
  std::string backend;
  std::string command_line;
  std::string hostname;
  uint64_t start_unix_ns = 0;
  std::string qprof_version;
  std::map<std::string, std::string> extra;
};

struct ProcessData {  // proto::ProcessInfo
  uint32_t pid = 0;
  uint32_t parent_pid = 0;
  std::string run_token;
  uint32_t forked_from_pid = 0;
};

struct HeaderData {  // proto::TraceHeader
  uint32_t schema_version = 0;
  int provenance = 0;  // proto::Provenance value
  std::optional<RunData> run;
  std::vector<DeviceData> devices;
  std::optional<CollectorStatsData> collector;
  std::string source_kind;
  std::vector<std::string> notes;
  std::optional<ProcessData> process;
};

struct FooterData {  // proto::TraceFooter
  std::optional<CollectorStatsData> collector;
  std::optional<RunData> run;
  uint64_t activity_count = 0;
};

}  // namespace qprof::profiler

#endif  // QPROF_PROFILER_TRACE_DATA_H_
