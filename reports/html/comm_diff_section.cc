// The Diff page's "Communication and copies" section: the exposed time on each side and the
// collectives and copy kinds matched across the sides, per unit of work, with their rates.
#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/html/html_util.h"
#include "reports/html/profile_sections.h"

namespace qprof::reports::html {

std::string CommDiffSection(const proto::Diff& d) {
  if (d.comm_size() == 0) return "";
  const std::string unit = d.unit().empty() ? "call" : d.unit();
  std::string out = fmt::format(
      "<section id=\"comm-diff\"><h2>Communication and copies</h2><p class=\"small\">Exposed "
      "communication (no compute kernel running on the same GPU) {} in A, {} in B; exposed "
      "copies {} and {} (unions per GPU, summed over GPUs, whole captures).</p>"
      "<div class=\"tablewrap\"><table class=\"sortable\" id=\"diff-comm\"><thead><tr><th>"
      "collective / copy</th><th>kind</th><th class=\"num\">A calls</th><th class=\"num\">B calls"
      "</th><th class=\"num\">A per {}</th><th class=\"num\">B per {}</th><th class=\"num\">B/A"
      "</th><th class=\"num\">A rate</th><th class=\"num\">B rate</th></tr></thead><tbody>",
      FormatNs(static_cast<double>(d.a().comm_exposed_ns())),
      FormatNs(static_cast<double>(d.b().comm_exposed_ns())),
      FormatNs(static_cast<double>(d.a().copy_exposed_ns())),
      FormatNs(static_cast<double>(d.b().copy_exposed_ns())), Escape(unit), Escape(unit));
  for (const auto& r : d.comm()) {
    auto rate = [&r](bool has, double v) {
      return has ? NumCell(FormatSig3(v) + " GB/s " + r.rate(), v) : std::string("<td class=\"num\">-</td>");
    };
    out += fmt::format(
        "<tr data-key=\"{}\" data-status=\"{}\"><td>{}</td><td>{}</td>{}{}{}{}{}{}{}</tr>",
        Escape(r.key()), Escape(r.status()), Escape(r.key()), Escape(r.kind()),
        NumCell(std::to_string(r.a_calls()), static_cast<double>(r.a_calls())),
        NumCell(std::to_string(r.b_calls()), static_cast<double>(r.b_calls())),
        NumCell(r.a_calls() ? FormatNs(r.a_per_unit_ns()) : "-", r.a_per_unit_ns()),
        NumCell(r.b_calls() ? FormatNs(r.b_per_unit_ns()) : "-", r.b_per_unit_ns()),
        NumCell(r.has_per_unit_ratio() ? FormatRatio(r.per_unit_ratio()) : "-", r.per_unit_ratio()),
        rate(r.has_a_gbps(), r.a_gbps()), rate(r.has_b_gbps(), r.b_gbps()));
  }
  return out + "</tbody></table></div></section>\n";
}

}  // namespace qprof::reports::html
