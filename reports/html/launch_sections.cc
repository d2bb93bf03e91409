#include "reports/html/launch_sections.h"

#include <algorithm>
#include <vector>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/html/html_util.h"

namespace qprof::reports::html {
namespace {

std::string Dim(const proto::Dim3& d) {
  if (d.y() <= 1 && d.z() <= 1) return std::to_string(d.x());
  return fmt::format("{}&times;{}&times;{}", d.x(), d.y(), d.z());
}

std::string EvidenceWord(const std::string& e) {
  if (e == "name_rule") return "name rule";
  if (e == "launch_context") return "launch context";
  if (e == "work_rate") return "rate above the CUDA-core roof";
  if (e == "sass") return "static SASS";
  return e.empty() ? "unknown" : e;
}

}  // namespace

std::string KernelLaunchLines(const proto::KernelRow& k) {
  const auto& l = k.launch();
  const bool shape = k.has_launch() && l.launches() > 0;
  if (k.launch_context().empty() && !shape) return "";
  // The summary line: launch shape, occupancy and the flag, which a reader scans for.
  std::string line;
  if (shape) {
    line = fmt::format("{} &times; {}", Dim(l.grid()), Dim(l.block()));
    if (l.launches_with_occupancy() > 0) {
      line += fmt::format(" &middot; occ {:.0f}% / est {:.1f}% &middot; {:.2f} waves",
                          l.theoretical_occupancy_pct(), l.est_occupancy_pct(), l.waves());
    }
  } else {
    line = "launched from " + Escape(k.launch_context());
  }
  if (k.has_diagnosis()) {
    line += fmt::format(" <span class=\"lflag\">{}{}</span>",
                        k.diagnosis().kind() == "parallelism_bound" ? "under one wave"
                                                                    : "latency-bound",
                        k.diagnosis().hypothesis() ? "?" : "");
  }
  // The rest, one click away: where it was launched from, resources, what limits the fit.
  std::string more;
  if (shape && !k.launch_context().empty()) {
    more += "<div>launched from " + Escape(k.launch_context()) + "</div>";
  }
  if (shape) {
    more += fmt::format("<div>{} regs, {:.1f} KiB smem{} (the launch that takes most of the "
                        "time)</div>",
                        l.registers_per_thread(), l.shared_mem_bytes() / 1024.0,
                        l.shared_mem_optin() ? " (opt-in)" : "");
    more += l.launches_with_occupancy() > 0
                ? fmt::format("<div>{} blocks/SM fit (limited by {}) on {} SMs; {}{}</div>",
                              l.active_blocks_per_sm(), Escape(l.limited_by()), l.sm_count(),
                              Escape(l.limits_source()),
                              l.note().empty() ? "" : "; " + Escape(l.note()))
                : "<div>occupancy not computed</div>";
    if (l.has_reported_est_occupancy_pct()) {
      more += fmt::format("<div>trace's own occupancy estimate {:.0f}%</div>",
                          l.reported_est_occupancy_pct());
    }
  }
  if (more.empty()) return fmt::format("<div class=\"klaunch\">{}</div>", line);
  return fmt::format("<details class=\"klaunch\"><summary>{}</summary>{}</details>", line, more);
}

std::string RoleEvidenceText(const proto::RoleRow& r) {
  std::vector<std::pair<uint64_t, std::string>> parts;
  for (const auto& [e, ns] : r.evidence_time_ns()) parts.push_back({ns, e});
  std::sort(parts.rbegin(), parts.rend());
  std::string out;
  for (const auto& [ns, e] : parts) {
    if (r.time_ns() == 0) break;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", EvidenceWord(e),
                       FormatShare(static_cast<double>(ns) / static_cast<double>(r.time_ns())));
  }
  return out;
}

std::string RoleCellWithKernels(const proto::Profile& p, const proto::RoleRow& r) {
  // A list, not a nested table: the roles table stays one sortable table.
  std::string items;
  int n = 0, total = 0;
  for (const auto& k : p.kernels()) {
    if (k.role() != r.role()) continue;
    ++total;
    if (++n > 15) continue;
    items += fmt::format(
        "<li><code>{}</code> {} ({} of the role) {} <span class=\"small muted\">role from {}; "
        "launched from {}</span></li>",
        Escape(k.name()), FormatNs(static_cast<double>(k.time_ns())),
        FormatShare(r.time_ns() ? static_cast<double>(k.time_ns()) / r.time_ns() : 0),
        ClassPill(k.class_()), Escape(EvidenceWord(k.evidence())),
        Escape(k.launch_context().empty() ? "-" : k.launch_context()));
  }
  std::string more = total > 15 ? fmt::format("<li class=\"small muted\">{} more in the kernels "
                                              "table (filter by the role)</li>",
                                              total - 15)
                                : "";
  return fmt::format(
      "<td data-sort=\"{}\"><details class=\"rolek\"><summary>{}</summary><ol>{}{}</ol>"
      "</details></td>",
      Escape(r.role()), Escape(r.role()), items, more);
}

namespace {

// The flagged kernels of one kind (with evidence, or hypotheses), the top 10 by time.
std::string DiagnosedList(const proto::Profile& p, bool hypotheses, const char* id) {
  std::string out = fmt::format("<ol id=\"{}\">", id);
  int shown = 0, small = 0;
  for (const auto& k : p.kernels()) {
    if (!k.has_diagnosis() || k.diagnosis().hypothesis() != hypotheses) continue;
    if (k.share() < 0.005 || shown >= 10) {  // listed in the kernels table, counted here
      ++small;
      continue;
    }
    ++shown;
    const auto& d = k.diagnosis();
    out += fmt::format(
        "<li data-kind=\"{}\"{}><code>{}</code> &middot; {} &middot; {} of kernel time &middot; "
        "{}{}<div>{}</div><div class=\"small\"><b>{}</b> {}</div></li>",
        Escape(d.kind()), hypotheses ? " data-hypothesis" : "", Escape(k.name()),
        Escape(k.role()), FormatShare(k.share()),
        d.kind() == "parallelism_bound" ? "under one wave" : "latency-bound",
        hypotheses ? "?" : "", Escape(d.evidence()), hypotheses ? "If so, lift it:" : "Lift it:",
        Escape(d.remedy()));
  }
  out += "</ol>";
  if (small > 0) {
    out += fmt::format("<p class=\"small muted\">{} more, each under 0.5% of kernel time or "
                       "beyond the top 10: marked in the kernels table.</p>",
                       small);
  }
  return out;
}

}  // namespace

std::string LatencySection(const proto::Profile& p) {
  const auto& s = p.launch_summary();
  if (s.launches_with_context() == 0 && s.launches_with_occupancy() == 0 &&
      s.latency_bound_kernels() == 0 && s.latency_hypothesis_kernels() == 0) {
    return "";
  }
  std::string out = "<section id=\"latency\"><h2>Launch shape, occupancy and latency</h2>";
  out += fmt::format(
      "<p class=\"small muted\">Launch context found for {} of {} kernel launches{}; occupancy "
      "and waves computed for {} (CUDA occupancy rules of the device: resident blocks per SM "
      "limited by warps, registers, shared memory and blocks; waves = blocks / (SMs &times; "
      "blocks per SM); est. occupancy = min(blocks per SM, blocks / SMs) &times; threads / max "
      "threads per SM, as Kineto estimates it).</p>",
      s.launches_with_context(), s.launches(),
      s.graph_launches() ? fmt::format(" ({} launched by CUDA graphs: their context is the "
                                       "graph launch's, unless a graph capture gave them theirs)",
                                       s.graph_launches())
                         : "",
      s.launches_with_occupancy());
  for (const std::string& g : s.graph_capture()) {
    out += fmt::format("<p class=\"small\" data-graph-capture>Graph capture: {}.</p>", Escape(g));
  }
  if (!s.graph_work().empty()) {
    out += fmt::format("<p class=\"small\" data-graph-work>Graph replays: {}.</p>",
                       Escape(s.graph_work()));
  }
  if (s.reported_compared() > 0 || s.reported_zero_optin() > 0) {
    out += fmt::format(
        "<p class=\"small\" id=\"occupancy-check\">Beside the trace's own estimate (Kineto "
        "\"est. achieved occupancy %\"): {} launches compared where it is above zero, largest "
        "difference {:.2f} percentage points.{}</p>",
        s.reported_compared(), s.reported_max_abs_diff_pct(),
        s.reported_zero_optin() > 0
            ? fmt::format(" {} launches it reports as 0% opted into more than 48 KiB of shared "
                          "memory: Kineto calls its calculator without the opt-in, so no block "
                          "fits there; the figures here include the opt-in.",
                          s.reported_zero_optin())
            : "");
  }
  if (s.launches_with_occupancy() == 0 && !s.occupancy_unavailable().empty()) {
    out += fmt::format("<p class=\"small muted\">No occupancy: {}.</p>",
                       Escape(s.occupancy_unavailable()));
  }
  if (s.latency_bound_kernels() == 0 && s.latency_hypothesis_kernels() == 0) {
    out += "<p>No kernel is flagged as latency- or parallelism-bound.</p></section>\n";
    return out;
  }
  if (s.latency_bound_kernels() > 0) {
    out += fmt::format(
        "<p>{} kernels ({} of kernel time) are latency- or parallelism-bound: under one wave "
        "of blocks, or low occupancy, far from the memory roofline by their work or measured "
        "DRAM throughput. More bandwidth does not help them; more parallelism does.</p>",
        s.latency_bound_kernels(), FormatShare(s.latency_bound_time_share()));
    out += DiagnosedList(p, false, "latency-list");
  }
  if (s.latency_hypothesis_kernels() > 0) {
    std::string settle;
    for (const auto& k : p.kernels()) {
      if (k.has_diagnosis() && k.diagnosis().hypothesis()) {
        settle = k.diagnosis().settle();
        break;
      }
    }
    out += fmt::format(
        "<p id=\"latency-hypotheses\">Parallelism-bound? {} kernels ({} of kernel time) launch "
        "under one wave with SMs left without a block, but nothing places them on the "
        "roofline: a question, not a verdict. What settles it: {}.</p>",
        s.latency_hypothesis_kernels(), FormatShare(s.latency_hypothesis_time_share()),
        Escape(settle));
    out += DiagnosedList(p, true, "latency-hypothesis-list");
  }
  out += "</section>\n";
  return out;
}

}  // namespace qprof::reports::html
