// The Profile page's "GPU timeline" section: span, busy and idle, the gaps between kernels
// by length, the host's runtime calls, the launch-bound verdict, and Amdahl against the span
// next to Amdahl against kernel time.
#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/html/html_util.h"
#include "reports/html/profile_sections.h"

namespace qprof::reports::html {
namespace {

double Of(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string GapTable(const proto::IdleSummary& s) {
  if (s.gap_count() == 0) return "";
  std::string out =
      "<div class=\"tablewrap\"><table id=\"idle-gaps\"><thead><tr><th>gap between kernels</th>"
      "<th class=\"num\">gaps</th><th class=\"num\">idle time</th><th class=\"num\">of idle"
      "</th></tr></thead><tbody>";
  for (const auto& b : s.gaps()) {
    if (b.count() == 0) continue;
    out += fmt::format("<tr data-min-ns=\"{}\"><td>{}</td>{}{}{}</tr>", b.min_ns(),
                       Escape(b.label()),
                       NumCell(std::to_string(b.count()), static_cast<double>(b.count())),
                       NumCell(FormatNs(static_cast<double>(b.time_ns())),
                               static_cast<double>(b.time_ns())),
                       NumCell(FormatShare(Of(b.time_ns(), s.idle_ns())), Of(b.time_ns(), s.idle_ns())));
  }
  return out + "</tbody></table></div>";
}

std::string AmdahlSpanTable(const proto::Profile& p) {
  std::string rows;
  for (const auto& a : p.ceilings().amdahl()) {
    if (a.scope() != "role" || a.span_share() <= 0) continue;
    rows += fmt::format(
        "<tr data-role=\"{}\"><td>{}</td>{}{}{}{}</tr>", Escape(a.name()),
        Escape(a.name() + (a.time_basis().empty() ? "" : " (exposed communication)")),
        NumCell(FormatShare(a.share()), a.share()),
        NumCell(FormatRatio(a.speedup_if_vanished()), a.speedup_if_vanished()),
        NumCell(FormatShare(a.span_share()), a.span_share()),
        NumCell(a.speedup_if_vanished_span() > 0 ? FormatRatio(a.speedup_if_vanished_span())
                                                 : "inf",
                a.speedup_if_vanished_span()));
  }
  if (rows.empty()) return "";
  return "<h3>If a role vanished: kernel time and wall time</h3><div class=\"tablewrap\">"
         "<table id=\"amdahl-span\"><thead><tr><th>role</th><th class=\"num\">of kernel time"
         "</th><th class=\"num\">bound 1/(1-f)</th><th class=\"num\">of span</th>"
         "<th class=\"num\">bound in wall time</th></tr></thead><tbody>" +
         rows +
         "</tbody></table></div><p class=\"small muted\">Against the span the GPUs' idle time "
         "stays when a kernel vanishes: the wall-time bound is what a user would see.</p>";
}

}  // namespace

std::string IdleSection(const proto::Profile& p) {
  const proto::IdleSummary& s = p.idle();
  if (s.span_ns() == 0) return "";
  const std::string prov = s.provenance().empty() ? ProfileProvenance(p) : s.provenance();
  std::string out = fmt::format(
      "<section id=\"idle\"><h2>GPU timeline: busy and idle</h2><div class=\"cards\">"
      "<div class=\"card\"><div class=\"k\">span</div><div class=\"v\" id=\"idle-span\" "
      "data-ns=\"{}\">{}</div><div class=\"p\">{}</div></div>"
      "<div class=\"card\"><div class=\"k\">busy</div><div class=\"v\" id=\"idle-busy\" "
      "data-ns=\"{}\">{}</div><div class=\"p\">{} of the span</div></div>"
      "<div class=\"card\"><div class=\"k\">idle</div><div class=\"v\" id=\"idle-idle\" "
      "data-ns=\"{}\" data-share=\"{}\">{}</div><div class=\"p\">{} of the span, {} gaps</div>"
      "</div></div>",
      s.span_ns(), FormatNs(static_cast<double>(s.span_ns())), Badge(BadgeKindFor(prov), prov),
      s.busy_ns(), FormatNs(static_cast<double>(s.busy_ns())),
      FormatShare(Of(s.busy_ns(), s.span_ns())), s.idle_ns(), Num(s.idle_share(), 6),
      FormatNs(static_cast<double>(s.idle_ns())), FormatShare(s.idle_share()), s.gap_count());
  out += fmt::format("<p id=\"idle-verdict\" data-verdict=\"{}\"><b>{}</b>: {}</p>",
                     Escape(s.verdict()), Escape(s.verdict()), Escape(s.note()));
  out += fmt::format(
      "<p class=\"small muted\">Span = first kernel start to last kernel end on each GPU, "
      "{}; busy = the union of kernel intervals; idle = span - busy, cut into the gaps between "
      "kernels below.</p>",
      s.device_timelines() > 1
          ? fmt::format("summed over {} GPU timelines (each GPU on its own row below)",
                        s.device_timelines())
          : "one GPU timeline");
  if (s.device_timelines() > 1) out += PerGpuTable(p);
  if (s.host().runtime_calls() > 0) {
    const auto& h = s.host();
    out += fmt::format(
        "<p id=\"idle-host\">Host: {} CUDA runtime/driver calls, {} inside them ({} of the GPU "
        "span); {} kernel launch calls, {}. {}</p>",
        h.runtime_calls(), FormatNs(static_cast<double>(h.runtime_ns())),
        FormatShare(Of(h.runtime_ns(), s.span_ns())), h.launch_calls(),
        FormatNs(static_cast<double>(h.launch_ns())), Badge(BadgeKindFor(prov), prov));
  }
  out += GapTable(s);
  out += AmdahlSpanTable(p);
  return out + "</section>\n";
}

}  // namespace qprof::reports::html

namespace qprof::reports::html {

std::string NvtxSummarySection(const proto::Profile& p) {
  if (p.nvtx_summary_size() == 0) return "";
  const std::string prov = ProfileProvenance(p);
  std::string out = fmt::format(
      "<section id=\"nvtx-summary\"><h2>NVTX ranges by name</h2><p class=\"small muted\">Host "
      "time inside the ranges (like nsys stats' nvtx_sum), names grouped with \", seq = N\" / "
      "\", op_id = N\" stripped and numbers folded. {}</p><div class=\"tablewrap\"><table "
      "class=\"sortable\" id=\"nvtx-sum\"><thead><tr><th>range</th><th class=\"num\">time</th>"
      "<th class=\"num\">share</th><th class=\"num\">count</th><th class=\"num\">mean</th>"
      "<th class=\"num\">min</th><th class=\"num\">max</th></tr></thead><tbody>",
      Badge(BadgeKindFor(prov), prov));
  for (const auto& r : p.nvtx_summary()) {
    out += fmt::format("<tr data-name=\"{}\" data-count=\"{}\" data-ns=\"{}\"><td>{}</td>{}{}{}"
                       "{}{}{}</tr>",
                       Escape(r.name()), r.count(), r.total_ns(), Escape(r.name()),
                       NumCell(FormatNs(static_cast<double>(r.total_ns())),
                               static_cast<double>(r.total_ns())),
                       NumCell(FormatShare(r.share()), r.share()),
                       NumCell(std::to_string(r.count()), static_cast<double>(r.count())),
                       NumCell(FormatNs(static_cast<double>(r.mean_ns())),
                               static_cast<double>(r.mean_ns())),
                       NumCell(FormatNs(static_cast<double>(r.min_ns())),
                               static_cast<double>(r.min_ns())),
                       NumCell(FormatNs(static_cast<double>(r.max_ns())),
                               static_cast<double>(r.max_ns())));
  }
  return out + "</tbody></table></div></section>\n";
}

}  // namespace qprof::reports::html
