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
  if (e == "sass") return "static SASS";
  return e.empty() ? "unknown" : e;
}

}  // namespace

bool HasLaunchColumns(const proto::Profile& p) {
  for (const auto& k : p.kernels()) {
    if (!k.launch_context().empty() || (k.has_launch() && k.launch().launches() > 0)) return true;
  }
  return false;
}

std::string LaunchHeaderCells() {
  return "<th>launched from</th><th class=\"num\" title=\"grid x block of the launch that takes most of the time; "
         "theoretical / estimated occupancy and waves, time-weighted\">launch</th>";
}

std::string LaunchCells(const proto::KernelRow& k) {
  std::string out = k.launch_context().empty()
                        ? "<td class=\"muted\">-</td>"
                        : fmt::format("<td class=\"small\">{}</td>", Escape(k.launch_context()));
  const auto& l = k.launch();
  if (!k.has_launch() || l.launches() == 0) return out + "<td class=\"num muted\" data-sort=\"-1\">-</td>";
  std::string detail = fmt::format("{} regs, {:.1f} KiB smem{}", l.registers_per_thread(),
                                   l.shared_mem_bytes() / 1024.0,
                                   l.shared_mem_optin() ? " (opt-in)" : "");
  std::string occ = "occupancy not computed";
  double sort = -1;
  if (l.launches_with_occupancy() > 0) {
    occ = fmt::format("occ {:.0f}% / est {:.1f}%, {:.2f} waves", l.theoretical_occupancy_pct(),
                      l.est_occupancy_pct(), l.waves());
    sort = l.waves();
  }
  std::string tip = fmt::format("{} blocks/SM fit (limited by {}) on {} SMs; {}{}",
                                l.active_blocks_per_sm(), l.limited_by(), l.sm_count(),
                                l.limits_source(), l.note().empty() ? "" : "; " + l.note());
  std::string flag;
  if (k.has_diagnosis()) {
    flag = fmt::format("<div class=\"lflag\">{}</div>", k.diagnosis().kind() == "parallelism_bound"
                                                          ? "under one wave"
                                                          : "latency-bound");
  }
  std::string kineto;
  if (l.has_reported_est_occupancy_pct()) {
    kineto = fmt::format("<div class=\"small muted\">trace's own estimate {:.0f}%</div>",
                         l.reported_est_occupancy_pct());
  }
  return out + fmt::format(
                   "<td class=\"num\" data-sort=\"{}\" title=\"{}\">{} &times; {}<div "
                   "class=\"small muted\">{}</div><div class=\"small\">{}</div>{}{}</td>",
                   Num(sort, 3), Escape(tip), Dim(l.grid()), Dim(l.block()), Escape(detail),
                   Escape(occ), kineto, flag);
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

std::string LatencySection(const proto::Profile& p) {
  const auto& s = p.launch_summary();
  if (s.launches_with_context() == 0 && s.launches_with_occupancy() == 0 &&
      s.latency_bound_kernels() == 0) {
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
  if (s.latency_bound_kernels() == 0) {
    out += "<p>No kernel is flagged as latency- or parallelism-bound.</p></section>\n";
    return out;
  }
  out += fmt::format(
      "<p>{} kernels ({} of kernel time) look latency- or parallelism-bound: under one wave "
      "of blocks, or low occupancy far from the memory roofline. More bandwidth does not help "
      "them; more parallelism does.</p><ol id=\"latency-list\">",
      s.latency_bound_kernels(), FormatShare(s.latency_bound_time_share()));
  int shown = 0, small = 0;
  for (const auto& k : p.kernels()) {
    if (!k.has_diagnosis()) continue;
    if (k.share() < 0.005 || shown >= 10) {  // listed in the kernels table, counted here
      ++small;
      continue;
    }
    ++shown;
    const auto& d = k.diagnosis();
    out += fmt::format(
        "<li data-kind=\"{}\"><code>{}</code> &middot; {} &middot; {} of kernel time &middot; "
        "{}<div>{}</div><div class=\"small\"><b>Lift it:</b> {}</div></li>",
        Escape(d.kind()), Escape(k.name()), Escape(k.role()), FormatShare(k.share()),
        d.kind() == "parallelism_bound" ? "under one wave" : "latency-bound",
        Escape(d.evidence()), Escape(d.remedy()));
  }
  out += "</ol>";
  if (small > 0) {
    out += fmt::format("<p class=\"small muted\">{} more flagged kernels, each under 0.5% of "
                       "kernel time or beyond the top 10: marked in the kernels table.</p>",
                       small);
  }
  out += "</section>\n";
  return out;
}

}  // namespace qprof::reports::html
