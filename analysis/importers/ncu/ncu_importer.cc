#include "analysis/importers/ncu/ncu_importer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analysis/importers/common/import_util.h"
#include "analysis/importers/ncu/ncu_csv.h"
#include "base/file_util.h"
#include "base/status_macros.h"

namespace qprof::importers {
namespace {

constexpr double kMaxKernelDurationNs = 86400e9;  // one day

void SetMetrics(const NcuKernel& k, const std::string& source, proto::KernelMetrics* m) {
  if (k.tensor_pipe_pct) m->set_tensor_pipe_pct(*k.tensor_pipe_pct);
  if (k.fma_pipe_pct) m->set_fma_pipe_pct(*k.fma_pipe_pct);
  if (k.dram_pct) m->set_dram_throughput_pct(*k.dram_pct);
  if (k.sm_pct) m->set_sm_throughput_pct(*k.sm_pct);
  if (k.tensor_count) {
    m->set_tensor_count(*k.tensor_count);
    m->set_tensor_count_metric(k.tensor_count_metric);
  }
  if (k.dram_bytes) m->set_dram_bytes(*k.dram_bytes);
  for (const auto& [name, v] : k.metrics) (*m->mutable_raw())[name] = v;
  m->set_source(source);
}

// Whitespace collapsed, so "a<int, int>" and "a<int,  int>" compare equal.
std::string NormaliseName(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

absl::StatusOr<std::string> ReadText(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  if (text.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
  return text;
}

// ncu names no GPU model in its CSV, only the device index and the compute capability
// ("CC" column, "12.0"): the device gets the architecture that implies (sm_120) and a name
// that says what is known, so the analysis can list the spec-table GPUs of that
// architecture instead of calling the device unknown.
void DescribeNcuDevice(uint32_t id, const std::string& cc, proto::DeviceInfo* d) {
  d->set_id(id);
  d->set_kind("gpu");
  uint32_t major = 0, minor = 0;
  const size_t dot = cc.find('.');
  const bool parsed = dot != std::string::npos && dot > 0 && dot + 1 < cc.size() &&
                      absl::SimpleAtoi(cc.substr(0, dot), &major) &&
                      absl::SimpleAtoi(cc.substr(dot + 1), &minor) && major > 0 && major < 100 &&
                      minor < 10;
  if (!parsed) {
    d->set_name("unknown");
    return;
  }
  d->set_vendor("NVIDIA");  // compute capabilities are CUDA's
  d->set_cc_major(major);
  d->set_cc_minor(minor);
  d->set_arch(absl::StrCat("sm_", major, minor));
  d->set_name(absl::StrCat("NVIDIA GPU of compute capability ", major, ".", minor));
}

}  // namespace

std::string NcuMatchKey(std::string_view name) {
  std::string_view s = name;
  // Cut the parameter list: the first '(' at template depth 0.
  int depth = 0;
  size_t end = s.size();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    if (s[i] == '>' && depth > 0) --depth;
    if (s[i] == '(' && depth == 0) {
      end = i;
      break;
    }
  }
  s = s.substr(0, end);
  // Drop template arguments at the end: "k<4, x>" -> "k".
  std::string flat;
  depth = 0;
  for (char c : s) {
    if (c == '<') {
      ++depth;
      continue;
    }
    if (c == '>') {
      if (depth > 0) --depth;
      continue;
    }
    if (depth == 0) flat += c;
  }
  // Last identifier after "::" and after the return type ("void ").
  size_t colon = flat.rfind("::");
  if (colon != std::string::npos) flat = flat.substr(colon + 2);
  size_t sp = flat.find_last_of(' ');
  if (sp != std::string::npos) flat = flat.substr(sp + 1);
  return flat;
}

absl::StatusOr<proto::Trace> ImportNcuCsvText(std::string_view text, const std::string& label) {
  ASSIGN_OR_RETURN(NcuReport report, ParseNcuCsv(text, label));
  proto::Trace trace;
  FillImportedHeader(&trace, label, "ncu-csv");
  trace.mutable_header()->set_no_timeline(
      "Nsight Compute serialises and replays each kernel it profiles, so its CSV holds "
      "durations, not when the kernels ran: idle time, overlap and steps are unknown");
  trace.mutable_header()->add_notes(
      "ncu-csv: Nsight Compute serialises and replays kernels; start times are the durations "
      "laid end to end in profiling order, not a measured timeline");
  const std::string source = absl::StrCat("ncu: ", Utf8Clean(label));
  int64_t t = 0;
  int without_duration = 0;
  std::map<uint32_t, std::string> devices;  // id -> compute capability
  for (const NcuKernel& k : report.kernels) {
    proto::Activity* a = trace.add_activities();
    a->set_kind(proto::ACTIVITY_KIND_KERNEL);
    a->set_name(k.name);
    a->set_device_id(k.device);
    a->set_stream_id(k.stream);
    a->set_pid(k.pid);
    a->mutable_grid()->set_x(k.grid[0]);
    a->mutable_grid()->set_y(k.grid[1]);
    a->mutable_grid()->set_z(k.grid[2]);
    a->mutable_block()->set_x(k.block[0]);
    a->mutable_block()->set_y(k.block[1]);
    a->mutable_block()->set_z(k.block[2]);
    // The duration is user text: a NaN, negative or absurd value (over a day) would
    // overflow the int64 timeline, so such a kernel keeps no duration and is counted.
    const bool usable = k.duration_ns && std::isfinite(*k.duration_ns) &&
                        *k.duration_ns >= 0 && *k.duration_ns <= kMaxKernelDurationNs;
    const int64_t dur = usable ? static_cast<int64_t>(*k.duration_ns + 0.5) : 0;
    if (!usable) ++without_duration;
    a->set_start_ns(t);
    a->set_end_ns(t + dur);
    t += dur;
    if (!k.id.empty()) (*a->mutable_args())["ncu_id"] = k.id;
    SetMetrics(k, source, a->mutable_metrics());
    std::string& cc = devices[k.device];
    if (cc.empty()) cc = k.cc;
  }
  for (const auto& [id, cc] : devices) DescribeNcuDevice(id, cc, trace.mutable_header()->add_devices());
  proto::CollectorStats* c = trace.mutable_header()->mutable_collector();
  c->set_records_total(static_cast<uint64_t>(report.kernels.size()));
  c->set_metrics_requested(true);
  c->set_metrics_available(!report.kernels.empty());
  if (without_duration > 0) {
    c->add_warnings(absl::StrCat(without_duration, " kernels have no usable duration metric "
                                                   "(gpu__time_duration.sum): zero length"));
  }
  return trace;
}

absl::StatusOr<proto::Trace> ImportNcuCsv(const std::string& path, const ImportOptions& options) {
  ASSIGN_OR_RETURN(std::string text, ReadText(path));
  return ImportNcuCsvText(text, path);
}

absl::Status JoinNcuMetrics(proto::Trace* trace, const std::string& ncu_csv_path,
                            NcuJoinStats* stats, const ImportOptions& options) {
  ASSIGN_OR_RETURN(std::string text, ReadText(ncu_csv_path));
  ASSIGN_OR_RETURN(NcuReport report, ParseNcuCsv(text, ncu_csv_path));
  // Trace kernels in launch (start) order, pooled by full name and by match key.
  std::vector<int> order;
  for (int i = 0; i < trace->activities_size(); ++i) {
    if (trace->activities(i).kind() == proto::ACTIVITY_KIND_KERNEL) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [trace](int a, int b) {
    return trace->activities(a).start_ns() < trace->activities(b).start_ns();
  });
  struct Pool {
    std::vector<int> kernels;
    size_t next = 0;
  };
  std::unordered_map<std::string, Pool> by_name, by_key;
  for (int i : order) {
    const std::string& n = trace->activities(i).name();
    by_name[NormaliseName(n)].kernels.push_back(i);
    by_key[NcuMatchKey(n)].kernels.push_back(i);
  }
  std::vector<char> taken(static_cast<size_t>(trace->activities_size()), 0);
  auto take = [&taken](Pool& p) -> int {
    while (p.next < p.kernels.size()) {
      int i = p.kernels[p.next++];
      if (!taken[static_cast<size_t>(i)]) {
        taken[static_cast<size_t>(i)] = 1;
        return i;
      }
    }
    return -1;
  };
  const std::string source = absl::StrCat("ncu: ", Utf8Clean(ncu_csv_path));
  NcuJoinStats s;
  s.ncu_kernels = static_cast<int>(report.kernels.size());
  s.trace_kernels = static_cast<int>(order.size());
  for (const NcuKernel& k : report.kernels) {
    int target = -1;
    auto it = by_name.find(NormaliseName(k.name));
    if (it != by_name.end()) target = take(it->second);
    if (target < 0) {
      auto kt = by_key.find(NcuMatchKey(k.name));
      if (kt != by_key.end()) target = take(kt->second);
    }
    if (target < 0) {
      ++s.unmatched_ncu;
      continue;
    }
    ++s.matched;
    SetMetrics(k, source, trace->mutable_activities(target)->mutable_metrics());
  }
  proto::CollectorStats* c = trace->mutable_header()->mutable_collector();
  if (s.matched > 0) c->set_metrics_available(true);
  if (s.unmatched_ncu > 0 || s.matched < s.trace_kernels) {
    c->add_warnings(absl::StrCat(ncu_csv_path, ": ncu metrics joined onto ", s.matched, " of ",
                                 s.trace_kernels, " kernels; ", s.unmatched_ncu, " of ",
                                 s.ncu_kernels, " ncu rows matched no kernel by name and order"));
  }
  if (stats != nullptr) *stats = s;
  return absl::OkStatus();
}

}  // namespace qprof::importers
