// Per-kernel table and pass/fail checks over .qtrace files from the CUPTI collector, for
// the device-check script: time per kernel, measured tensor-pipe / FMA-pipe / DRAM %,
// and the SIMT/tensor split of GPU time.
//
// usage: qprof_cupti_trace_check TRACE... [--expect-tensor REGEX=MIN_PCT]...
//                                [--expect-simt REGEX=MAX_PCT]... [--tensor-threshold PCT]
// A kernel name matching REGEX (ECMAScript, searched in the demangled name) must exist;
// its time-weighted tensor-pipe % must be >= MIN (tensor) or <= MAX (simt). Kernels with a
// measured tensor-pipe % at or above the threshold (default 5) count as tensor time,
// measured below it as SIMT, unmeasured as "unmeasured". Exit 1 when a check fails.
#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "base/absl_fmt.h"
#include "fmt/core.h"
#include "proto/trace_io.h"

namespace {

struct KernelRow {
  int launches = 0;
  double ns = 0;
  double tensor_ns_weighted = 0, fma_ns_weighted = 0, dram_ns_weighted = 0;
  double measured_ns = 0;
  std::string path;
};

struct Expect {
  std::string regex;
  double pct;
  bool tensor;
};

std::string Shorten(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n / 2 - 2) + "..." + s.substr(s.size() - (n / 2 - 1));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  std::vector<Expect> expects;
  double threshold = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--expect-tensor" || a == "--expect-simt") && i + 1 < argc) {
      std::string v = argv[++i];
      const size_t eq = v.rfind('=');
      if (eq == std::string::npos) {
        fmt::print(stderr, "cupti_trace_check: {} needs REGEX=PCT\n", a);
        return 2;
      }
      expects.push_back({v.substr(0, eq), std::atof(v.substr(eq + 1).c_str()), a == "--expect-tensor"});
    } else if (a == "--tensor-threshold" && i + 1 < argc) {
      threshold = std::atof(argv[++i]);
    } else {
      files.push_back(a);
    }
  }
  std::map<std::string, KernelRow> rows;
  std::map<std::string, int> raw_metrics;  // every metric name seen, for the record
  double tensor_ns = 0, simt_ns = 0, unmeasured_ns = 0;
  for (const std::string& f : files) {
    auto trace = qprof::ReadTrace(f);
    if (!trace.ok()) {
      fmt::print(stderr, "cupti_trace_check: {}\n", trace.status().message());
      return 2;
    }
    const auto& c = trace->header().collector();
    fmt::print("{}: collector {}, dropped {}, invalid {}, metrics {}{}\n", f, c.collector(),
               c.records_dropped(), c.records_invalid(),
               c.metrics_available() ? "measured" : "not measured",
               c.metrics_unavailable_reason().empty() ? "" : " (" + c.metrics_unavailable_reason() + ")");
    for (const auto& a : trace->activities()) {
      if (a.kind() != qprof::proto::ACTIVITY_KIND_KERNEL) continue;
      const double ns = static_cast<double>(a.end_ns() - a.start_ns());
      KernelRow& r = rows[a.name()];
      if (r.launches++ == 0) r.path = a.nvtx_path();
      r.ns += ns;
      for (const auto& [metric, value] : a.metrics().raw()) raw_metrics[metric]++;
      if (a.has_metrics() && a.metrics().has_tensor_pipe_pct()) {
        r.measured_ns += ns;
        r.tensor_ns_weighted += ns * a.metrics().tensor_pipe_pct();
        r.fma_ns_weighted += ns * a.metrics().fma_pipe_pct();
        r.dram_ns_weighted += ns * a.metrics().dram_throughput_pct();
        (a.metrics().tensor_pipe_pct() >= threshold ? tensor_ns : simt_ns) += ns;
      } else {
        unmeasured_ns += ns;
      }
    }
  }
  std::vector<std::pair<std::string, KernelRow>> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  fmt::print("{:<60} {:>8} {:>10} {:>9} {:>8} {:>8} {:>8}  {}\n", "kernel", "launches",
             "total ms", "avg us", "tensor%", "fma%", "dram%", "nvtx (first launch)");
  for (const auto& [name, r] : sorted) {
    auto pct = [&](double w) {
      return r.measured_ns > 0 ? fmt::format("{:.1f}", w / r.measured_ns) : std::string("-");
    };
    fmt::print("{:<60} {:>8} {:>10.3f} {:>9.2f} {:>8} {:>8} {:>8}  {}\n", Shorten(name, 60),
               r.launches, r.ns / 1e6, r.ns / r.launches / 1e3, pct(r.tensor_ns_weighted),
               pct(r.fma_ns_weighted), pct(r.dram_ns_weighted), r.path);
  }
  const double total = tensor_ns + simt_ns + unmeasured_ns;
  if (total > 0) {
    fmt::print("split: tensor {:.1f}%  simt {:.1f}%  unmeasured {:.1f}%  (threshold {}% "
               "tensor-pipe; measured by CUPTI range profiler)\n",
               100 * tensor_ns / total, 100 * simt_ns / total, 100 * unmeasured_ns / total,
               threshold);
  }
  if (!raw_metrics.empty()) {
    fmt::print("metrics collected (kernels with a value):");
    for (const auto& [metric, n] : raw_metrics) fmt::print(" {} ({})", metric, n);
    fmt::print("\n");
  }
  int failures = 0;
  for (const Expect& e : expects) {
    std::regex re(e.regex);
    double ns = 0, weighted = 0;
    int matched = 0;
    for (const auto& [name, r] : rows) {
      if (!std::regex_search(name, re)) continue;
      ++matched;
      ns += r.measured_ns;
      weighted += r.tensor_ns_weighted;
    }
    const bool have = matched > 0 && ns > 0;
    const double pct = have ? weighted / ns : 0;
    const bool pass = have && (e.tensor ? pct >= e.pct : pct <= e.pct);
    fmt::print("check {} /{}/ tensor-pipe {} {}%: {} ({})\n", e.tensor ? "tensor" : "simt", e.regex,
               e.tensor ? ">=" : "<=", e.pct, pass ? "PASS" : "FAIL",
               have ? fmt::format("{:.1f}% over {} kernel names", pct, matched)
                    : std::string("no measured kernel matched"));
    failures += !pass;
  }
  return failures == 0 ? 0 : 1;
}
