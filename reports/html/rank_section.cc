// The per-rank section of the Profile page: one row per input trace (rank), compute time
// against the median rank's, communication share, busy and idle time; the slowest rank is
// marked. Only profiles of several traces have it.
#include <algorithm>
#include <string>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/html/html_util.h"
#include "reports/html/profile_sections.h"

namespace qprof::reports::html {

namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Compute time as a bar against the slowest rank, with a tick at the median.
std::string ComputeBar(const proto::RankRow& r, const proto::RankSummary& s) {
  const double max = static_cast<double>(std::max<uint64_t>(1, s.max_compute_ns()));
  const double w = 100.0 * static_cast<double>(r.compute_time_ns()) / max;
  const double m = 100.0 * static_cast<double>(s.median_compute_ns()) / max;
  return fmt::format(
      "<svg class=\"rankbar\" width=\"120\" height=\"12\" role=\"img\" aria-label=\"compute "
      "{} of the slowest rank's\"><rect x=\"0\" y=\"2\" width=\"{}\" height=\"8\" fill=\"{}\"/>"
      "<line x1=\"{}\" x2=\"{}\" y1=\"0\" y2=\"12\" stroke=\"#000\"/></svg>",
      FormatShare(w / 100), Num(1.2 * w), r.slowest() ? "#D55E00" : "#0072B2", Num(1.2 * m),
      Num(1.2 * m));
}

}  // namespace

std::string RankSection(const proto::Profile& p) {
  if (p.ranks_size() < 2) return "";
  const proto::RankSummary& s = p.rank_summary();
  std::string out = "<section id=\"ranks\"><h2>Ranks: who is the straggler</h2>";
  out += fmt::format("<p id=\"rank-summary\" data-slowest=\"{}\" data-imbalance=\"{}\">{}</p>",
                     s.slowest_rank(), Num(s.imbalance(), 4), Escape(s.note()));
  out += "<p class=\"small muted\">Compute is kernel time outside communication kernels: in a "
         "synchronous job the slowest rank has the most, and the others wait for it inside "
         "their collectives (their communication share grows). The bar is compute against the "
         "slowest rank; the tick marks the median.</p>";
  out += "<div class=\"tablewrap\"><table class=\"sortable\" id=\"rank-table\"><thead><tr>"
         "<th>rank</th><th>trace</th><th>compute</th><th>vs median</th><th></th>"
         "<th>comm share</th><th>kernel time</th><th>busy</th><th>idle</th><th>launches</th>"
         "</tr></thead><tbody>";
  for (const proto::RankRow& r : p.ranks()) {
    out += fmt::format("<tr{} data-rank=\"{}\">", r.slowest() ? " class=\"slowest\"" : "", r.rank());
    out += fmt::format("<td class=\"num\">{}{}</td>", r.rank(), r.slowest() ? " (slowest)" : "");
    out += fmt::format("<td title=\"{}\">{}</td>", Escape(r.source()), Escape(BaseName(r.source())));
    out += NumCell(FormatNs(static_cast<double>(r.compute_time_ns())),
                   static_cast<double>(r.compute_time_ns()));
    out += NumCell(FormatRatio(r.compute_vs_median()), r.compute_vs_median());
    out += "<td>" + ComputeBar(r, s) + "</td>";
    out += NumCell(FormatShare(r.comm_share()), r.comm_share());
    out += NumCell(FormatNs(static_cast<double>(r.kernel_time_ns())),
                   static_cast<double>(r.kernel_time_ns()));
    out += NumCell(FormatNs(static_cast<double>(r.busy_time_ns())),
                   static_cast<double>(r.busy_time_ns()));
    out += NumCell(FormatNs(static_cast<double>(r.idle_ns())), static_cast<double>(r.idle_ns()));
    out += NumCell(std::to_string(r.kernel_count()), static_cast<double>(r.kernel_count()));
    out += "</tr>";
  }
  out += "</tbody></table></div></section>\n";
  return out;
}

}  // namespace qprof::reports::html
