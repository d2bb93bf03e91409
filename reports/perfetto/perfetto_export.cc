#include "reports/perfetto/perfetto_export.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <tuple>
#include <vector>

#include "base/file_util.h"
#include "base/text.h"
#include "fmt/format.h"

namespace qprof::reports {
namespace {

// Tracks of one stream (or NVTX thread). Each lane keeps the stack of intervals still
// open at the last placement; an event fits a lane when, after closing intervals that end
// before it starts, the lane is empty or the innermost open interval contains it.
class LanePacker {
 public:
  int Place(int64_t start, int64_t end) {
    for (size_t l = 0; l < lanes_.size(); ++l) {
      auto& st = lanes_[l];
      while (!st.empty() && st.back().second <= start) st.pop_back();
      if (st.empty() || (st.back().first <= start && end <= st.back().second)) {
        st.emplace_back(start, end);
        return static_cast<int>(l);
      }
    }
    lanes_.push_back({{start, end}});
    return static_cast<int>(lanes_.size() - 1);
  }
  int lanes() const { return static_cast<int>(lanes_.size()); }

 private:
  std::vector<std::vector<std::pair<int64_t, int64_t>>> lanes_;
};

std::string Us(int64_t ns) {
  // Exact decimal microseconds from integer nanoseconds (no floating point rounding).
  const char* sign = ns < 0 ? "-" : "";
  const uint64_t a = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03d}", sign, a / 1000, static_cast<int>(a % 1000));
}

const char* KindName(proto::ActivityKind k) {
  switch (k) {
    case proto::ACTIVITY_KIND_KERNEL: return "kernel";
    case proto::ACTIVITY_KIND_MEMCPY: return "memcpy";
    case proto::ACTIVITY_KIND_MEMSET: return "memset";
    default: return "activity";
  }
}

void AppendArg(std::string& out, bool& first, const char* key, const std::string& value) {
  if (value.empty()) return;
  out += first ? "" : ",";
  first = false;
  AppendJsonString(out, key);
  out += ':';
  AppendJsonString(out, value);
}

void AppendNumArg(std::string& out, bool& first, const char* key, uint64_t v) {
  if (v == 0) return;
  out += first ? "" : ",";
  first = false;
  AppendJsonString(out, key);
  out += fmt::format(":{}", v);
}

void AppendMeta(std::string& out, const char* what, uint32_t pid, uint64_t tid,
                const std::string& name) {
  out += fmt::format("{{\"ph\":\"M\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":",
                     what, pid, tid);
  AppendJsonString(out, name);
  out += "}},\n";
}

}  // namespace


namespace {

struct TraceStats {
  int64_t origin = 0;
  uint64_t invalid = 0;
  uint64_t open_ranges = 0;
};

// Start order; on equal starts the longer event first so it encloses the shorter.
template <typename T>
bool ByStart(const T* x, const T* y) {
  if (x->start_ns() != y->start_ns()) return x->start_ns() < y->start_ns();
  return x->end_ns() > y->end_ns();
}

// The earliest valid start among activities and ranges (0 when there is none).
int64_t TraceOrigin(const proto::Trace& trace) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const auto& a : trace.activities())
    if (a.end_ns() > a.start_ns()) origin = std::min(origin, a.start_ns());
  for (const auto& r : trace.ranges())
    if (r.end_ns() >= r.start_ns()) origin = std::min(origin, r.start_ns());
  return origin == std::numeric_limits<int64_t>::max() ? 0 : origin;
}

void AppendSortIndex(std::string& out, const char* what, uint32_t pid, uint64_t tid,
                     uint64_t index) {
  out += fmt::format("{{\"ph\":\"M\",\"name\":\"{}\",\"pid\":{},\"tid\":{},"
                     "\"args\":{{\"sort_index\":{}}}}},\n",
                     what, pid, tid, index);
}

// One activity as a complete event with its launch facts and attribution as args.
void AppendActivity(std::string& out, const proto::Activity& a, uint32_t pid, uint64_t tid,
                    int64_t origin) {
  out += fmt::format("{{\"ph\":\"X\",\"cat\":\"{}\",\"name\":", KindName(a.kind()));
  AppendJsonString(out, a.name().empty() ? KindName(a.kind()) : a.name());
  out += fmt::format(",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{", pid, tid,
                     Us(a.start_ns() - origin), Us(a.end_ns() - a.start_ns()));
  bool first = true;
  AppendNumArg(out, first, "correlation_id", a.correlation_id());
  if (a.kind() == proto::ACTIVITY_KIND_KERNEL) {
    AppendArg(out, first, "grid", fmt::format("{},{},{}", a.grid().x(), a.grid().y(), a.grid().z()));
    AppendArg(out, first, "block",
              fmt::format("{},{},{}", a.block().x(), a.block().y(), a.block().z()));
    AppendNumArg(out, first, "registers_per_thread", a.registers_per_thread());
    AppendNumArg(out, first, "shared_bytes",
                 uint64_t{a.static_shared_bytes()} + a.dynamic_shared_bytes());
  }
  AppendNumArg(out, first, "bytes", a.bytes());
  AppendArg(out, first, "copy_kind", a.copy_kind());
  AppendArg(out, first, "nvtx", a.nvtx_path());
  AppendArg(out, first, "class", a.attribution().pipe_class());
  AppendArg(out, first, "role", a.attribution().role());
  AppendArg(out, first, "format", a.attribution().format());
  AppendArg(out, first, "evidence", a.attribution().evidence());
  AppendArg(out, first, "kernel_id", a.kernel_id());
  if (a.metrics().has_tensor_pipe_pct()) {
    AppendArg(out, first, "tensor_pipe_pct", fmt::format("{:.1f}", a.metrics().tensor_pipe_pct()));
  }
  AppendArg(out, first, "mangled_name", a.mangled_name());
  // Importer extras (Kineto collective args, the CPU kernel that ran, qprof's row name), in
  // key order so the file is the same on every run; the fixed keys above win.
  std::vector<std::pair<std::string, std::string>> extras(a.args().begin(), a.args().end());
  std::sort(extras.begin(), extras.end());
  static const std::set<std::string> kFixed = {
      "correlation_id", "grid",     "block",     "registers_per_thread", "shared_bytes",
      "bytes",          "copy_kind", "nvtx",     "class",                "role",
      "format",         "evidence", "kernel_id", "tensor_pipe_pct",      "mangled_name"};
  for (const auto& [key, value] : extras) {
    if (kFixed.count(key) == 0) AppendArg(out, first, key.c_str(), value);
  }
  out += "}},\n";
}

// Devices become processes pid_base + device id, each stream a thread (split into lanes
// where its events overlap without nesting). Returns the activities left out as invalid.
uint64_t AppendStreams(std::string& out, const proto::Trace& trace, uint32_t pid_base,
                       const std::string& prefix, int64_t origin, uint64_t& next_tid) {
  std::map<uint32_t, std::string> device_names;
  for (const auto& d : trace.header().devices()) {
    device_names[d.id()] = d.name().empty() ? d.arch() : d.name();
  }
  std::map<std::pair<uint32_t, uint64_t>, std::vector<const proto::Activity*>> streams;
  uint64_t invalid = 0;
  for (const auto& a : trace.activities()) {
    if (a.end_ns() <= a.start_ns()) {
      ++invalid;
      continue;
    }
    streams[{a.device_id(), a.stream_id()}].push_back(&a);
  }
  std::map<uint32_t, bool> device_named;
  for (auto& [key, acts] : streams) {
    const auto [device_id, stream] = key;
    const uint32_t device = pid_base + device_id;
    std::stable_sort(acts.begin(), acts.end(), ByStart<proto::Activity>);
    LanePacker packer;
    std::vector<int> lane_of(acts.size());
    for (size_t i = 0; i < acts.size(); ++i) {
      lane_of[i] = packer.Place(acts[i]->start_ns(), acts[i]->end_ns());
    }
    if (!device_named[device]) {
      device_named[device] = true;
      auto it = device_names.find(device_id);
      AppendMeta(out, "process_name", device, 0,
                 fmt::format("{}GPU {}{}", prefix, device_id,
                             it == device_names.end() || it->second.empty() ? ""
                                                                            : ": " + it->second));
      AppendSortIndex(out, "process_sort_index", device, 0, device);
    }
    std::vector<uint64_t> lane_tid(static_cast<size_t>(packer.lanes()));
    for (int l = 0; l < packer.lanes(); ++l) {
      const uint64_t tid = lane_tid[static_cast<size_t>(l)] = next_tid++;
      AppendMeta(out, "thread_name", device, tid,
                 l == 0 ? fmt::format("stream {}", stream)
                        : fmt::format("stream {} (overlap {})", stream, l + 1));
      AppendSortIndex(out, "thread_sort_index", device, tid, tid);
    }
    for (size_t i = 0; i < acts.size(); ++i) {
      AppendActivity(out, *acts[i], device, lane_tid[static_cast<size_t>(lane_of[i])], origin);
    }
  }
  return invalid;
}

// NVTX ranges: one process (pid_base + 1000000), one track per (pid, tid) of the
// annotating thread, split into lanes where ranges overlap without nesting (start/end
// ranges may). Returns the ranges left out as never closed.
uint64_t AppendRanges(std::string& out, const proto::Trace& trace, uint32_t pid_base,
                      const std::string& prefix, int64_t origin, uint64_t& next_tid) {
  const uint32_t kNvtxPid = pid_base + 1000000;
  std::map<std::pair<uint32_t, uint64_t>, std::vector<const proto::NvtxRange*>> threads;
  uint64_t open_ranges = 0;
  for (const auto& r : trace.ranges()) {
    if (r.end_ns() < r.start_ns()) {
      ++open_ranges;
      continue;
    }
    threads[{r.pid(), r.tid()}].push_back(&r);
  }
  if (!threads.empty()) {
    AppendMeta(out, "process_name", kNvtxPid, 0, prefix + "NVTX ranges");
    AppendSortIndex(out, "process_sort_index", kNvtxPid, 0, kNvtxPid);
  }
  for (auto& [key, ranges] : threads) {
    std::stable_sort(ranges.begin(), ranges.end(), ByStart<proto::NvtxRange>);
    LanePacker packer;
    std::vector<int> lane_of(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i) {
      lane_of[i] = packer.Place(ranges[i]->start_ns(), ranges[i]->end_ns());
    }
    std::vector<uint64_t> lane_tid(static_cast<size_t>(packer.lanes()));
    for (int l = 0; l < packer.lanes(); ++l) {
      lane_tid[static_cast<size_t>(l)] = next_tid++;
      std::string name = fmt::format("thread {}", key.second);
      if (key.first) name = fmt::format("pid {} {}", key.first, name);
      if (l > 0) name += fmt::format(" (overlap {})", l + 1);
      AppendMeta(out, "thread_name", kNvtxPid, lane_tid[static_cast<size_t>(l)], name);
    }
    for (size_t i = 0; i < ranges.size(); ++i) {
      const auto& r = *ranges[i];
      out += "{\"ph\":\"X\",\"cat\":\"nvtx\",\"name\":";
      AppendJsonString(out, r.name().empty() ? r.path() : r.name());
      out += fmt::format(",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{\"path\":",
                         kNvtxPid, lane_tid[static_cast<size_t>(lane_of[i])],
                         Us(r.start_ns() - origin), Us(r.end_ns() - r.start_ns()));
      AppendJsonString(out, r.path());
      out += "}},\n";
    }
  }
  return open_ranges;
}

// Appends the events of one trace; `prefix` goes before every process name.
TraceStats AppendTrace(std::string& out, const proto::Trace& trace, uint32_t pid_base,
                       const std::string& prefix, uint64_t& next_tid) {
  TraceStats stats;
  stats.origin = TraceOrigin(trace);
  stats.invalid = AppendStreams(out, trace, pid_base, prefix, stats.origin, next_tid);
  stats.open_ranges = AppendRanges(out, trace, pid_base, prefix, stats.origin, next_tid);
  return stats;
}

}  // namespace

std::string TracesToPerfettoJson(const std::vector<const proto::Trace*>& traces) {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  uint64_t next_tid = 1;
  std::vector<TraceStats> stats;
  for (size_t i = 0; i < traces.size(); ++i) {
    const proto::Trace& t = *traces[i];
    std::string prefix;
    if (traces.size() > 1) {
      std::string src = t.header().source_path();
      if (src.empty()) src = "trace " + std::to_string(i + 1);
      prefix = src.substr(src.find_last_of('/') == std::string::npos ? 0
                                                                      : src.find_last_of('/') + 1) +
               ": ";
    }
    stats.push_back(AppendTrace(out, t, static_cast<uint32_t>(i) * 2000000, prefix, next_tid));
  }
  // Every event above ends with ",\n"; JSON wants no comma after the last one.
  if (out.size() >= 2 && out.compare(out.size() - 2, 2, ",\n") == 0) out.erase(out.size() - 2, 1);
  out += "],";
  // otherData: the time origin (of the first trace) and what was left out, per input.
  uint64_t invalid = 0, open_ranges = 0;
  bool truncated = false;
  std::string inputs;
  for (size_t i = 0; i < stats.size(); ++i) {
    invalid += stats[i].invalid;
    open_ranges += stats[i].open_ranges;
    truncated |= traces[i]->truncated();
    inputs += fmt::format("{}{{\"pid_base\":{},\"time_origin_ns\":{},\"source\":", i ? "," : "",
                          i * 2000000, stats[i].origin);
    AppendJsonString(inputs, traces[i]->header().source_path());
    inputs += "}";
  }
  out += fmt::format(
      "\"otherData\":{{\"producer\":\"qprof\",\"time_origin_ns\":{},\"invalid_records\":{},"
      "\"open_ranges\":{},\"truncated\":{},\"inputs\":[{}]}}}}\n",
      stats.empty() ? 0 : stats[0].origin, invalid, open_ranges, truncated ? "true" : "false",
      inputs);
  return out;
}

std::string TraceToPerfettoJson(const proto::Trace& trace) {
  return TracesToPerfettoJson({&trace});
}

absl::Status WritePerfettoJson(const std::vector<const proto::Trace*>& traces,
                               const std::string& path) {
  return WriteFileAtomic(path, TracesToPerfettoJson(traces));
}

absl::Status WritePerfettoJson(const proto::Trace& trace, const std::string& path) {
  return WriteFileAtomic(path, TraceToPerfettoJson(trace));
}

}  // namespace qprof::reports
