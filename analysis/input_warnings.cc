#include "analysis/input_warnings.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/devices/device_specs.h"

namespace qprof {
namespace {

void AddOnce(std::vector<std::string>* v, const std::string& s) {
  if (!s.empty() && std::find(v->begin(), v->end(), s) == v->end()) v->push_back(s);
}

// The ncu metrics that give the strongest evidence, as an ncu option (FACTS.md: tensor pipe
// on sm_70..sm_120, tcgen05's own pipe on sm_100, instruction counts on every chip).
constexpr char kNcuMetrics[] =
    "--metrics sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,"
    "sm__inst_executed_pipe_tensor.sum,gpu__time_duration.sum";

}  // namespace

std::string DeviceUnknownMessage(const std::vector<const proto::TraceHeader*>& headers) {
  std::vector<std::string> names, candidates, archs;
  bool all_stats = !headers.empty();
  for (const proto::TraceHeader* h : headers) all_stats &= h->source_kind() == "nsys-stats-csv";
  if (all_stats) {
    return "an nsys stats kernel summary names no GPU: pass --device NAME for ceilings on the "
           "profiled device";
  }
  for (const proto::TraceHeader* h : headers) {
    for (const proto::DeviceInfo& d : h->devices()) {
      AddOnce(&names, d.name());
      // A device named by its architecture only: the table's GPUs of that architecture.
      if (d.arch().empty() || d.cc_major() == 0 || devices::FindDevice(d.name()) != nullptr) {
        continue;
      }
      bool named_by_arch_only = d.name().find("compute capability") != std::string::npos;
      if (!named_by_arch_only) continue;
      AddOnce(&archs, d.arch());
      for (const devices::DeviceSpec& s : devices::AllDevices()) {
        if (s.arch == d.arch()) AddOnce(&candidates, s.key);
      }
    }
  }
  if (!archs.empty()) {
    return absl::StrCat(
        "the input names the GPU by its compute capability only (", absl::StrJoin(archs, ", "),
        "), not its model; ",
        candidates.empty() ? "the spec table has no GPU of that architecture"
                           : absl::StrCat("the spec table has ", absl::StrJoin(candidates, ", "),
                                          " of that architecture"),
        ": pass --device NAME for ceilings on the profiled device");
  }
  return absl::StrCat("device ", names.empty() ? "(not reported)" : absl::StrJoin(names, ", "),
                      " is not in the spec table; pass --device NAME for ceilings on the "
                      "profiled device");
}

std::string MetricsUnavailableMessage(const std::vector<const proto::TraceHeader*>& headers) {
  bool ncu = false, other = false;
  for (const proto::TraceHeader* h : headers) (h->source_kind() == "ncu-csv" ? ncu : other) = true;
  if (ncu && !other) {
    return absl::StrCat(
        "the Nsight Compute CSV carries no tensor-pipe metric (utilisation or instruction "
        "count); profile with ", kNcuMetrics,
        " for measured evidence; pipe classes come from SASS, the registry or name rules");
  }
  return absl::StrCat(
      "no per-kernel tensor-pipe metrics in the input (collect them with CUPTI metrics, or "
      "join an Nsight Compute CSV with --ncu: ncu --csv ", kNcuMetrics,
      "); pipe classes come from SASS, the registry or name rules");
}

std::string MixedVendorsMessage(const std::vector<const proto::TraceHeader*>& headers) {
  std::vector<std::string> vendors, examples;
  for (const proto::TraceHeader* h : headers) {
    for (const proto::DeviceInfo& d : h->devices()) {
      if (d.vendor().empty() || std::find(vendors.begin(), vendors.end(), d.vendor()) != vendors.end()) {
        continue;
      }
      vendors.push_back(d.vendor());
      const std::string& path = h->source_path();
      examples.push_back(absl::StrCat(path.substr(path.find_last_of('/') + 1), " on ", d.vendor(),
                                      " (", d.name(), ")"));
    }
  }
  if (vendors.size() < 2) return "";
  return absl::StrCat("the inputs ran on GPUs of different vendors (", absl::StrJoin(examples, "; "),
                      "): analysed together they are treated as ranks of one job, and their "
                      "rank and class figures mix two machines; compare them with `qprof diff` "
                      "instead");
}

std::string AttributeHint(const std::vector<const proto::TraceHeader*>& headers) {
  bool all_ncu = !headers.empty();
  for (const proto::TraceHeader* h : headers) all_ncu &= h->source_kind() == "ncu-csv";
  if (all_ncu) {
    return absl::StrCat("pass --sass, or profile with ncu ", kNcuMetrics, ", to attribute them");
  }
  return "pass --sass or --ncu to attribute them";
}

}  // namespace qprof
