#include "reports/terminal/terminal_launch.h"

#include <algorithm>

#include "fmt/format.h"
#include "reports/common/format.h"

namespace qprof::reports {

std::string Dim3Text(const proto::Dim3& d) {
  if (d.y() <= 1 && d.z() <= 1) return std::to_string(d.x());
  return fmt::format("{}x{}x{}", d.x(), d.y(), d.z());
}

void ProfileLaunches(const proto::Profile& p, TermCtx& c) {
  const int n = std::min<int>(c.o.top_kernels, p.kernels_size());
  bool any = false;
  for (int i = 0; i < n; ++i) any |= p.kernels(i).has_launch() || !p.kernels(i).launch_context().empty();
  if (!any) return;
  c.Heading("Launches of the top kernels (launch context, shape, occupancy, waves)");
  // Fixed columns ~62; the context gets what is left.
  const size_t ctx_w = static_cast<size_t>(std::max(18, c.width - 64));
  TextTable t({{"#", TextTable::kRight}, {"launched from", TextTable::kLeft, ctx_w},
               {"grid", TextTable::kRight}, {"block", TextTable::kRight},
               {"regs", TextTable::kRight}, {"smem", TextTable::kRight},
               {"occ%", TextTable::kRight}, {"est%", TextTable::kRight},
               {"waves", TextTable::kRight}, {"flag"}});
  for (int i = 0; i < n; ++i) {
    const auto& k = p.kernels(i);
    const auto& l = k.launch();
    const bool shape = k.has_launch() && l.launches() > 0;
    const bool occ = shape && l.launches_with_occupancy() > 0;
    std::string smem = "-";
    if (shape) {
      smem = l.shared_mem_bytes() == 0 ? "0" : fmt::format("{:.0f}K", l.shared_mem_bytes() / 1024.0);
      if (l.shared_mem_optin()) smem += "*";
    }
    std::string flag;
    if (k.has_diagnosis()) {
      flag = k.diagnosis().kind() == "parallelism_bound" ? "<1 wave" : "latency";
      if (k.diagnosis().hypothesis()) flag += "?";
    }
    t.AddRow({{std::to_string(i + 1)},
              {k.launch_context().empty() ? "-" : k.launch_context()},
              {shape ? Dim3Text(l.grid()) : "-"},
              {shape ? Dim3Text(l.block()) : "-"},
              {shape ? std::to_string(l.registers_per_thread()) : "-"},
              {smem},
              {occ ? fmt::format("{:.0f}", l.theoretical_occupancy_pct()) : "-"},
              {occ ? fmt::format("{:.1f}", l.est_occupancy_pct()) : "-"},
              {occ ? fmt::format("{:.2f}", l.waves()) : "-"},
              {flag}});
  }
  c.out += t.Render(c.o.color);
  const auto& s = p.launch_summary();
  std::string foot = fmt::format(
      "# as in the top-kernels table. grid, block, regs, smem: the launch that takes most of the "
      "kernel's time; occ% = "
      "theoretical occupancy, est% = Kineto-style estimate min(blocks/SM fit, blocks/SMs) x "
      "threads / max threads per SM, waves = blocks / (SMs x blocks per SM), time-weighted over "
      "the launches: computed by the CUDA occupancy rules of the device; * = shared memory "
      "above 48 KiB (opt-in). Launch context for {} of {} launches",
      s.launches_with_context(), s.launches());
  if (s.graph_launches() > 0) foot += fmt::format(" ({} from CUDA-graph launches)", s.graph_launches());
  foot += ".";
  for (const std::string& g : s.graph_capture()) foot += " Graph capture: " + g + ".";
  if (s.reported_compared() > 0 || s.reported_zero_optin() > 0) {
    foot += fmt::format(
        " Beside the trace's own estimate: {} launches compared, max difference {:.2f} "
        "points",
        s.reported_compared(), s.reported_max_abs_diff_pct());
    if (s.reported_zero_optin() > 0) {
      foot += fmt::format("; {} launches the trace reports as 0% opted into more than 48 KiB "
                          "of shared memory (its calculator ignores the opt-in)",
                          s.reported_zero_optin());
    }
    foot += ".";
  }
  if (s.launches_with_occupancy() == 0 && !s.occupancy_unavailable().empty()) {
    foot += " No occupancy: " + s.occupancy_unavailable() + ".";
  }
  c.out += Wrap(foot, static_cast<size_t>(c.width), "  ");
}

namespace {

// The flagged kernels of one kind (confirmed or hypotheses), the top ones by time; those under
// 0.5% of kernel time or beyond the top 5 are only counted.
void ListDiagnosed(const proto::Profile& p, bool hypotheses, TermCtx& c) {
  int shown = 0, small = 0;
  for (const auto& k : p.kernels()) {
    if (!k.has_diagnosis() || k.diagnosis().hypothesis() != hypotheses) continue;
    if (k.share() < 0.005 || shown >= 5) {
      ++small;
      continue;
    }
    ++shown;
    const auto& d = k.diagnosis();
    const char* what = d.kind() == "parallelism_bound" ? "under one wave" : "latency-bound";
    c.Line(fmt::format("  {}. {}  {}  {} ({}{})", shown,
                       ShortKernelName(k.name(), static_cast<size_t>(std::max(20, c.width - 40))),
                       FormatShare(k.share()), k.role(), what, hypotheses ? "?" : ""));
    c.out += Wrap(d.evidence(), static_cast<size_t>(c.width), "     ");
    c.out += Wrap((hypotheses ? "if so, lift: " : "lift: ") + d.remedy(),
                  static_cast<size_t>(c.width), "     ");
  }
  if (small > 0) {
    c.Line(fmt::format("  ({} more, each under 0.5% of kernel time or beyond the top 5: see "
                       "--json or --html)", small));
  }
}

}  // namespace

void ProfileLatency(const proto::Profile& p, TermCtx& c) {
  const auto& s = p.launch_summary();
  if (s.latency_bound_kernels() > 0) {
    c.Heading(fmt::format("Latency- and parallelism-bound kernels ({}, {} of kernel time)",
                          s.latency_bound_kernels(), FormatShare(s.latency_bound_time_share())));
    ListDiagnosed(p, false, c);
  }
  if (s.latency_hypothesis_kernels() > 0) {
    c.Heading(fmt::format("Parallelism-bound? ({} kernels, {} of kernel time)",
                          s.latency_hypothesis_kernels(),
                          FormatShare(s.latency_hypothesis_time_share())));
    std::string settle;
    for (const auto& k : p.kernels()) {
      if (k.has_diagnosis() && k.diagnosis().hypothesis()) {
        settle = k.diagnosis().settle();
        break;
      }
    }
    c.out += Wrap(fmt::format("Their launches leave SMs without a block, but nothing places "
                              "them on the roofline, so this is a question, not a verdict. "
                              "What settles it: {}.", settle),
                  static_cast<size_t>(c.width), "  ");
    ListDiagnosed(p, true, c);
  }
}

}  // namespace qprof::reports
