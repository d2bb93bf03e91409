// The Diff page: the story first (key role's class change, tokens/s, tensor share), then
// the two runs side by side, time per role, classes, kernels that came and went.
#include <algorithm>
#include <cstdlib>

#include "base/file_util.h"
#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/html/html_report.h"
#include "reports/html/html_util.h"
#include "reports/html/profile_sections.h"
#include "reports/html/svg_charts.h"

namespace qprof::reports {
namespace {

using html::Badge;
using html::BadgeKindFor;
using html::Escape;
using html::NumCell;

std::string Label(const proto::DiffSide& s, const char* fallback) {
  return s.label().empty() ? fallback : s.label();
}

// Escaped text with " -> " shown as an arrow: it reads better on a page (the terminal
// keeps ASCII).
std::string Arrows(const std::string& s) {
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = s.find(" -> ", pos)) != std::string::npos; pos = hit + 4) {
    out += Escape(s.substr(pos, hit - pos)) + " &rarr; ";
  }
  return out + Escape(s.substr(pos));
}

// Table headers and chart labels: the label when short, else "A"/"B" (the page says
// which is which right under the headline).
std::string ColumnName(const proto::DiffSide& s, const char* fallback) {
  return s.label().empty() || s.label().size() > 12 ? fallback : s.label();
}

bool KnownDevice(const std::string& d) { return !d.empty() && d != "unknown"; }

std::vector<html::Segment> SideSegments(const proto::DiffSide& s, const proto::Diff& d,
                                        bool is_a) {
  std::vector<html::Segment> segs;
  for (const auto& cls : html::ClassOrder()) {
    auto it = s.class_share().find(cls);
    if (it == s.class_share().end()) continue;
    uint64_t ns = 0;
    for (const auto& r : d.classes())
      if (r.key() == cls) ns = is_a ? r.a_time_ns() : r.b_time_ns();
    segs.push_back({cls, it->second, ns});
  }
  return segs;
}

std::string Hero(const proto::Diff& d) {
  const std::string a = Label(d.a(), "A"), b = Label(d.b(), "B");
  std::string out = fmt::format(
      "<header class=\"top\"><h1>qprof diff: {} <span class=\"sub\">vs</span> {} <span "
      "class=\"sub\">{}</span></h1></header>\n",
      Escape(a), Escape(b),
      Escape(!KnownDevice(d.a().device()) && !KnownDevice(d.b().device()) ? ""
             : d.a().device() == d.b().device() ? d.a().device()
                                                : d.a().device() + " / " + d.b().device()));
  const bool host = d.a().provenance().find("host") != std::string::npos ||
                    d.b().provenance().find("host") != std::string::npos;
  if (host) {
    out += "<div class=\"banner host\" id=\"provenance-banner\"><b>Measured on the host CPU, not "
           "on a GPU.</b> Both runs used the CPU backend: times show where the CPU reference "
           "kernels spend time. The classes say which GPU pipe each kernel would use; GPU "
           "numbers need a GPU run or the modelled ceilings.</div>\n";
  }
  const auto lines = DiffHeadlines(d);
  out += "<section id=\"story\">";
  if (!lines.empty()) out += "<p class=\"hero\" id=\"headline\">" + Arrows(lines[0]) + "</p>";
  out += "<ul class=\"story\">";
  for (size_t i = 1; i < lines.size(); ++i) out += "<li>" + Arrows(lines[i]) + "</li>";
  out += "</ul>";
  if (d.has_verdict()) {
    const proto::DiffVerdict& v = d.verdict();
    out += fmt::format(
        "<div class=\"banner {}\" id=\"verdict\"><b>Regression gate {}</b> (time per {}): "
        "{}<br><span class=\"small\">{}</span></div>",
        v.failed() ? "failed" : "passed", v.failed() ? "failed" : "passed", Escape(v.unit()),
        Escape(v.summary()), Escape(v.noise_note()));
  }
  if (ColumnName(d.a(), "A") != a || ColumnName(d.b(), "B") != b) {
    out += fmt::format("<p class=\"small muted\" id=\"side-names\">In the tables below, A = "
                       "{} and B = {}.</p>",
                       Escape(a), Escape(b));
  }
  // Side-by-side cards with the split bars.
  out += "<div class=\"grid2\">";
  for (int side = 0; side < 2; ++side) {
    const auto& s = side == 0 ? d.a() : d.b();
    const std::string id = side == 0 ? "a" : "b";
    const auto segs = SideSegments(s, d, side == 0);
    out += fmt::format(
        "<div class=\"side\" id=\"side-{}\"><h2>{}: {}</h2><div class=\"cards\">"
        "<div class=\"card\"><div class=\"k\">tokens/s</div><div class=\"v\" id=\"tps-{}\" "
        "data-value=\"{}\">{}</div><div class=\"p\">{}</div></div>"
        "<div class=\"card\"><div class=\"k\">kernel time</div><div class=\"v\" data-ns=\"{}\">"
        "{}</div></div>"
        "<div class=\"card\"><div class=\"k\">tensor share</div><div class=\"v\" "
        "id=\"tensor-{}\" data-value=\"{}\">{}</div></div></div>",
        id, side == 0 ? "A" : "B", Escape(Label(s, side == 0 ? "A" : "B")), id,
        html::Num(s.tokens_per_s(), 4),
        s.tokens_per_s() > 0 ? FormatSig3(s.tokens_per_s()) : "n/a",
        Badge(BadgeKindFor(s.provenance()), s.provenance().empty() ? "unspecified"
                                                                   : s.provenance()),
        s.kernel_time_ns(), FormatNs(static_cast<double>(s.kernel_time_ns())), id,
        html::Num(s.tensor_share(), 6), FormatShare(s.tensor_share()));
    std::string where = KnownDevice(s.device()) ? s.device() : "";
    if (!s.format().empty()) where += (where.empty() ? "format " : " · format ") + s.format();
    out += fmt::format("<p class=\"small muted\">{}</p>", Escape(where));
    std::string work = fmt::format("{} kernel calls", s.kernel_count());
    if (s.units() > 0 && d.unit() != "call") {
      work += fmt::format(", {} {}s", FormatSig3(s.units()), d.unit());
    }
    if (s.span_ns() > 0) {
      work += fmt::format("; GPU span {}, idle {}", FormatNs(static_cast<double>(s.span_ns())),
                          FormatShare(static_cast<double>(s.idle_ns()) / s.span_ns()));
    }
    out += fmt::format("<p class=\"small\" id=\"work-{}\" data-calls=\"{}\">{}</p>", id,
                       s.kernel_count(), Escape(work));
    out += html::SplitBarSvg(segs, "split-" + id,
                             "Share of kernel time by pipe class for " + Label(s, id.c_str()),
                             560);
    out += html::ClassLegend(segs) + "</div>";
  }
  out += "</div></section>\n";
  return out;
}

std::string ProjectionSection(const proto::Diff* m) {
  if (m == nullptr) return "";
  std::string out = fmt::format(
      "<section id=\"projection\"><h2>Modelled on {} {}</h2><p class=\"small muted\">The same "
      "two formats projected onto this GPU from the decode plan's work (bytes and FLOPs per "
      "kernel) and the device spec table. A model, not a measurement: the assumptions are in "
      "the modelled reports next to this file.</p><ul class=\"story\">",
      Escape(m->a().device()), Badge("modelled", "modelled"));
  for (const auto& line : DiffHeadlines(*m)) out += "<li>" + Arrows(line) + "</li>";
  out += "</ul>";
  if (std::string why = html::ModelRankingNote(m->a().format(), m->a().tokens_per_s(),
                                               m->b().format(), m->b().tokens_per_s());
      !why.empty()) {
    out += "<p class=\"small\" id=\"model-why\">" + Escape(why) + "</p>";
  }
  out += "<div class=\"grid2\">";
  for (int side = 0; side < 2; ++side) {
    const auto& s = side == 0 ? m->a() : m->b();
    const auto segs = SideSegments(s, *m, side == 0);
    out += fmt::format("<div><h3>{} <span class=\"muted\">{} tok/s (modelled)</span></h3>",
                       Escape(Label(s, side == 0 ? "A" : "B")),
                       s.tokens_per_s() > 0 ? FormatSig3(s.tokens_per_s()) : "n/a");
    out += html::SplitBarSvg(segs, side == 0 ? "model-split-a" : "model-split-b",
                             "Modelled share of kernel time by pipe class", 560);
    out += html::ClassLegend(segs) + "</div>";
  }
  out += "</div></section>\n";
  return out;
}

std::string RateCell(bool has, double v, const std::string& text) {
  return has ? NumCell(text, v) : "<td class=\"num\">-</td>";
}

// Both sides' achieved rates per role (the roles with work on either side).
std::string AchievedTable(const proto::Diff& d, const std::string& a, const std::string& b) {
  std::string rows;
  for (const auto& r : d.roles()) {
    const bool any = r.has_a_achieved_tflops() || r.has_b_achieved_tflops() ||
                     r.has_a_achieved_gbps() || r.has_b_achieved_gbps();
    if (!any) continue;
    rows += fmt::format(
        "<tr data-role=\"{}\"><td>{}</td>{}{}{}{}{}{}</tr>", Escape(r.key()), Escape(r.key()),
        RateCell(r.has_a_achieved_tflops(), r.a_achieved_tflops(), FormatSig3(r.a_achieved_tflops())),
        RateCell(r.has_b_achieved_tflops(), r.b_achieved_tflops(), FormatSig3(r.b_achieved_tflops())),
        RateCell(r.has_a_achieved_gbps(), r.a_achieved_gbps(), FormatSig3(r.a_achieved_gbps())),
        RateCell(r.has_b_achieved_gbps(), r.b_achieved_gbps(), FormatSig3(r.b_achieved_gbps())),
        RateCell(r.has_a_peak_fraction(), r.a_peak_fraction(), FormatShare(r.a_peak_fraction())),
        RateCell(r.has_b_peak_fraction(), r.b_peak_fraction(), FormatShare(r.b_peak_fraction())));
  }
  if (rows.empty()) return "";
  return fmt::format(
      "<h3>Achieved rates per role</h3><p class=\"small muted\">Over each side's launches "
      "with work (derived from shapes, modelled, or registry work models, as each profile "
      "says); of roof = roofline time / measured time on that side's device.</p>"
      "<div class=\"tablewrap\"><table class=\"sortable\" id=\"diff-achieved\"><thead><tr>"
      "<th>role</th><th class=\"num\">{0} TFLOP/s</th><th class=\"num\">{1} TFLOP/s</th>"
      "<th class=\"num\">{0} GB/s</th><th class=\"num\">{1} GB/s</th>"
      "<th class=\"num\">{0} of roof</th><th class=\"num\">{1} of roof</th></tr></thead>"
      "<tbody>{2}</tbody></table></div>",
      Escape(a), Escape(b), rows);
}

std::string RoleSection(const proto::Diff& d) {
  const std::string a = ColumnName(d.a(), "A"), b = ColumnName(d.b(), "B");
  std::vector<const proto::DiffRow*> rows;
  for (const auto& r : d.roles()) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](auto* x, auto* y) {
    return std::max(x->a_time_ns(), x->b_time_ns()) > std::max(y->a_time_ns(), y->b_time_ns());
  });
  const std::string unit = d.unit().empty() ? "call" : d.unit();
  std::string out = "<section id=\"roles-section\"><h2>Time per role</h2>";
  out += fmt::format("<p class=\"small muted\">Rows are matched by role, so kernels with "
                     "different names that do the same job (a SIMT GEMV and a tensor-core GEMM "
                     "for the MoE experts) share a row. Bars: {} above, {} below; colour = "
                     "pipe class.</p>",
                     Escape(a), Escape(b));
  std::vector<html::PairRow> pairs;
  for (size_t i = 0; i < rows.size() && i < 10; ++i) {
    const auto& r = *rows[i];
    pairs.push_back({r.key(), r.a_time_ns(), r.b_time_ns(), r.a_share(), r.b_share(),
                     r.a_class(), r.b_class()});
  }
  out += html::PairedBarsSvg(pairs, a, b, "role-pairs");
  out += fmt::format(
      "<div class=\"tablewrap\"><table class=\"sortable\" id=\"diff-roles\"><thead><tr>"
      "<th>role</th><th>class {0}</th><th>class {1}</th><th class=\"num\">{0} time</th>"
      "<th class=\"num\">{0} share</th><th class=\"num\">{1} time</th>"
      "<th class=\"num\">{1} share</th><th class=\"num\">delta</th>"
      "<th class=\"num\">share delta</th><th class=\"num\">{1}/{0}</th>"
      "<th class=\"num\">{0} calls</th><th class=\"num\">{0} per {2}</th>"
      "<th class=\"num\">{1} calls</th><th class=\"num\">{1} per {2}</th>"
      "<th class=\"num\">{1}/{0} per {2}</th></tr></thead><tbody>",
      Escape(a), Escape(b), Escape(unit));
  for (const auto* rp : rows) {
    const auto& r = *rp;
    out += fmt::format(
        "<tr data-role=\"{}\" data-a-ns=\"{}\" data-b-ns=\"{}\" data-delta-ns=\"{}\"{}><td>{}"
        "</td><td>{}</td><td>{}</td>{}{}{}{}{}{}{}{}{}{}{}{}</tr>",
        Escape(r.key()), r.a_time_ns(), r.b_time_ns(), r.delta_ns(),
        r.a_class() != r.b_class() && !r.a_class().empty() && !r.b_class().empty()
            ? " class=\"new\""
            : "",
        Escape(r.key()), r.a_class().empty() ? "-" : html::ClassPill(r.a_class()),
        r.b_class().empty() ? "-" : html::ClassPill(r.b_class()),
        NumCell(FormatNs(static_cast<double>(r.a_time_ns())), static_cast<double>(r.a_time_ns())),
        html::ShareCell(r.a_share(), r.a_class()),
        NumCell(FormatNs(static_cast<double>(r.b_time_ns())), static_cast<double>(r.b_time_ns())),
        html::ShareCell(r.b_share(), r.b_class()),
        NumCell(FormatDeltaNs(static_cast<double>(r.delta_ns())),
                static_cast<double>(r.delta_ns())),
        NumCell(FormatSharePoints(r.delta_share()), r.delta_share()),
        r.has_ratio() ? NumCell(FormatRatio(r.ratio()), r.ratio())
                      : NumCell(r.status() == "only_a" ? "gone" : "new", -1),
        NumCell(std::to_string(r.a_calls()), static_cast<double>(r.a_calls())),
        NumCell(r.a_per_unit_ns() > 0 ? FormatNs(r.a_per_unit_ns()) : "-", r.a_per_unit_ns()),
        NumCell(std::to_string(r.b_calls()), static_cast<double>(r.b_calls())),
        NumCell(r.b_per_unit_ns() > 0 ? FormatNs(r.b_per_unit_ns()) : "-", r.b_per_unit_ns()),
        r.has_per_unit_ratio() ? NumCell(FormatRatio(r.per_unit_ratio()), r.per_unit_ratio())
                               : NumCell("-", -1));
  }
  out += "</tbody></table></div>";
  out += AchievedTable(d, a, b);
  if (!d.unit_source().empty()) {
    out += "<p class=\"small muted\" id=\"diff-units\">Per " + Escape(unit) + ": " +
           Escape(d.unit_source()) + ". Calls and times are " +
           Escape(d.a().provenance().empty() ? "as the inputs say" : d.a().provenance()) +
           (d.b().provenance() == d.a().provenance() ? "" : " / " + Escape(d.b().provenance())) +
           ".</p>";
  }
  out += "</section>\n";
  return out;
}

std::string ClassSection(const proto::Diff& d) {
  const std::string a = ColumnName(d.a(), "A"), b = ColumnName(d.b(), "B");
  std::string out = fmt::format(
      "<section id=\"classes-section\"><h2>Pipe classes</h2><div class=\"tablewrap\"><table "
      "id=\"diff-classes\"><thead><tr><th>class</th><th class=\"num\">{0} time</th>"
      "<th class=\"num\">{0} share</th><th class=\"num\">{1} time</th>"
      "<th class=\"num\">{1} share</th><th class=\"num\">delta</th>"
      "<th class=\"num\">share delta</th></tr></thead><tbody>",
      Escape(a), Escape(b));
  for (const auto& r : d.classes()) {
    if (r.a_time_ns() == 0 && r.b_time_ns() == 0) continue;
    out += fmt::format(
        "<tr data-class=\"{}\" data-a-share=\"{}\" data-b-share=\"{}\"><td>{}</td>{}{}{}{}{}{}"
        "</tr>",
        Escape(r.key()), html::Num(r.a_share(), 6), html::Num(r.b_share(), 6),
        html::ClassPill(r.key()),
        NumCell(FormatNs(static_cast<double>(r.a_time_ns())), static_cast<double>(r.a_time_ns())),
        html::ShareCell(r.a_share(), r.key()),
        NumCell(FormatNs(static_cast<double>(r.b_time_ns())), static_cast<double>(r.b_time_ns())),
        html::ShareCell(r.b_share(), r.key()),
        NumCell(FormatDeltaNs(static_cast<double>(r.delta_ns())),
                static_cast<double>(r.delta_ns())),
        NumCell(FormatSharePoints(r.delta_share()), r.delta_share()));
  }
  out += "</tbody></table></div></section>\n";
  return out;
}

// Ranks matched by number, when both sides are profiles of several traces.
std::string RankSection(const proto::Diff& d) {
  if (d.ranks_size() == 0) return "";
  const std::string a = ColumnName(d.a(), "A"), b = ColumnName(d.b(), "B");
  std::string out = fmt::format(
      "<section id=\"ranks-section\"><h2>Ranks</h2><p id=\"rank-headline\">{2}</p>"
      "<div class=\"tablewrap\"><table class=\"sortable\" id=\"diff-ranks\"><thead><tr>"
      "<th>rank</th><th class=\"num\">{0} compute</th><th class=\"num\">{0} vs median</th>"
      "<th class=\"num\">{0} comm</th><th class=\"num\">{1} compute</th>"
      "<th class=\"num\">{1} vs median</th><th class=\"num\">{1} comm</th>"
      "<th class=\"num\">{1}/{0}</th></tr></thead><tbody>",
      Escape(d.rank_headline()), Escape(a), Escape(b));
  for (const auto& r : d.ranks()) {
    const bool ha = r.status() != "only_b", hb = r.status() != "only_a";
    auto cell = [](bool have, const std::string& text, double raw) {
      return have ? NumCell(text, raw) : std::string("<td class=\"num\">-</td>");
    };
    out += fmt::format(
        "<tr data-rank=\"{}\" data-status=\"{}\"><td class=\"num\">{}</td>{}{}{}{}{}{}{}</tr>",
        r.rank(), Escape(r.status()), r.rank(),
        cell(ha, FormatNs(static_cast<double>(r.a_compute_ns())), static_cast<double>(r.a_compute_ns())),
        cell(ha, FormatRatio(r.a_compute_vs_median()), r.a_compute_vs_median()),
        cell(ha, FormatShare(r.a_comm_share()), r.a_comm_share()),
        cell(hb, FormatNs(static_cast<double>(r.b_compute_ns())), static_cast<double>(r.b_compute_ns())),
        cell(hb, FormatRatio(r.b_compute_vs_median()), r.b_compute_vs_median()),
        cell(hb, FormatShare(r.b_comm_share()), r.b_comm_share()),
        cell(r.has_compute_ratio(), r.has_compute_ratio() ? FormatRatio(r.compute_ratio()) : "",
             r.compute_ratio()));
  }
  out += "</tbody></table></div></section>\n";
  return out;
}

// A kernel row is "replaced" when both sides have a kernel for it but not the same one
// (the diff pairs kernels within a role: MXFP4's slot GEMV with NVFP4's MMA GEMM).
bool Replaced(const proto::DiffRow& r) {
  return r.status() == "both" && !r.a_name().empty() && !r.b_name().empty() &&
         r.a_name() != r.b_name();
}

std::string KernelSection(const proto::Diff& d) {
  const std::string a = ColumnName(d.a(), "A"), b = ColumnName(d.b(), "B");
  std::vector<const proto::DiffRow*> rows;
  for (const auto& r : d.kernels()) rows.push_back(&r);
  // Kernels that came, went or were replaced first, then the largest absolute changes.
  auto changed = [](const proto::DiffRow* r) { return r->status() != "both" || Replaced(*r); };
  std::stable_sort(rows.begin(), rows.end(), [&](auto* x, auto* y) {
    if (changed(x) != changed(y)) return changed(x);
    return std::llabs(x->delta_ns()) > std::llabs(y->delta_ns());
  });
  int gone = 0, added = 0, replaced = 0;
  for (const auto* r : rows) {
    gone += r->status() == "only_a";
    added += r->status() == "only_b";
    replaced += Replaced(*r);
  }
  const int same = static_cast<int>(rows.size()) - gone - added - replaced;
  auto n_kernels = [](int n) { return fmt::format("<b>{}</b> kernel{}", n, n == 1 ? "" : "s"); };
  std::string out = fmt::format(
      "<section id=\"kernels-section\"><h2>Kernels</h2><p id=\"kernel-changes\">{} replaced by a "
      "different kernel in the same role, {} only in {} (disappeared), {} only in {} "
      "(appeared), {} in both.</p>",
      n_kernels(replaced), n_kernels(gone), Escape(a), n_kernels(added), Escape(b), same);
  out += "<div class=\"controls\"><label>Filter <input type=\"search\" "
         "data-filter-table=\"diff-kernels\" aria-label=\"Filter kernels\" placeholder=\"name, "
         "role...\"></label><span class=\"small muted\" data-count-for=\"diff-kernels\"></span>"
         "</div>";
  out += fmt::format(
      "<div class=\"tablewrap\"><table class=\"sortable\" id=\"diff-kernels\"><thead><tr>"
      "<th>change</th><th>kernel</th><th>role</th><th>class</th><th class=\"num\">{0} time</th>"
      "<th class=\"num\">{1} time</th><th class=\"num\">delta</th></tr></thead><tbody>",
      Escape(a), Escape(b));
  for (const auto* rp : rows) {
    const auto& r = *rp;
    const bool only_a = r.status() == "only_a", only_b = r.status() == "only_b";
    const bool repl = Replaced(r);
    std::string name_cell;
    if (repl) {
      name_cell = fmt::format(
          "<div class=\"kn\" tabindex=\"0\"{}><b>{}:</b> {}</div><div class=\"kn\" "
          "tabindex=\"0\"{}><b>{}:</b> {}</div>",
          html::RawNameAttrs(r.a_raw_name()), Escape(a), Escape(r.a_name()),
          html::RawNameAttrs(r.b_raw_name()), Escape(b), Escape(r.b_name()));
    } else {
      name_cell = "<div class=\"kn\" tabindex=\"0\"" +
                  html::RawNameAttrs(only_b ? r.b_raw_name() : r.a_raw_name()) + ">" +
                  Escape(only_b ? (r.b_name().empty() ? r.key() : r.b_name())
                                : (r.a_name().empty() ? r.key() : r.a_name())) +
                  "</div>";
    }
    const std::string cls = only_b ? r.b_class() : r.a_class();
    std::string cls_cell = html::ClassPill(cls);
    if (!only_a && !only_b && r.a_class() != r.b_class() && !r.b_class().empty()) {
      cls_cell += " &rarr; " + html::ClassPill(r.b_class());
    }
    const char* change = only_a ? "disappeared" : only_b ? "appeared" : repl ? "replaced" : "both";
    out += fmt::format(
        "<tr data-status=\"{}\" data-change=\"{}\" data-class=\"{}\"{}><td>{}</td>"
        "<td class=\"kname\">{}</td><td>{}</td><td>{}</td>{}{}{}</tr>",
        Escape(r.status()), change, Escape(cls),
        only_a ? " class=\"gone\"" : (only_b || repl) ? " class=\"new\"" : "", change, name_cell,
        Escape(r.role()), cls_cell,
        only_b ? NumCell("-", 0)
               : NumCell(FormatNs(static_cast<double>(r.a_time_ns())),
                         static_cast<double>(r.a_time_ns())),
        only_a ? NumCell("-", 0)
               : NumCell(FormatNs(static_cast<double>(r.b_time_ns())),
                         static_cast<double>(r.b_time_ns())),
        NumCell(FormatDeltaNs(static_cast<double>(r.delta_ns())),
                static_cast<double>(r.delta_ns())));
  }
  out += "</tbody></table></div></section>\n";
  return out;
}

std::string CeilingSection(const proto::Diff& d, const DiffHtmlInputs& in) {
  if (in.a == nullptr && in.b == nullptr) return "";
  std::vector<html::CeilingBar> bars;
  const proto::Profile* base = in.a != nullptr ? in.a : in.b;
  for (const proto::Profile* p : {in.a, in.b}) {
    if (p == nullptr) continue;
    for (auto& bar : html::CeilingBars(*p)) {
      if (bar.kind == "measured") bars.push_back(bar);
    }
  }
  for (auto& bar : html::CeilingBars(*base)) {
    if (bar.kind == "measured") continue;
    if (bar.kind == "amdahl") bar.label += " (" + Label(d.a(), "A") + ")";
    bars.push_back(bar);
  }
  if (bars.empty()) return "";
  const bool modelled = base->provenance() == proto::PROVENANCE_MODELLED;
  std::string out = fmt::format(
      "<section id=\"ceilings\"><h2>{} and ceilings</h2><p class=\"small muted\">Both {}, then "
      "what removing the largest role or changing the format allows (hover a bar for the "
      "formula and inputs).</p>",
      modelled ? "Modelled" : "Measured", modelled ? "modelled runs" : "measurements");
  out += "<p class=\"small muted\" id=\"ceilings-legend\">" +
         Escape(html::BarLegendText(modelled)) + ".</p>";
  out += "<div class=\"tablewrap\">" + html::WaterfallSvg(bars, "waterfall") + "</div>";
  if (std::string why = html::RooflineRankingNote(bars); !why.empty()) {
    out += "<p class=\"small\" id=\"roofline-why\">" + Escape(why) + "</p>";
  }
  out += "<div class=\"tablewrap\"><table><thead><tr><th>bar</th><th class=\"num\">tok/s</th>"
         "<th>formula</th><th>inputs</th><th>provenance</th></tr></thead><tbody>";
  for (const auto& b : bars) {
    out += fmt::format("<tr><td>{}</td>{}<td class=\"formula\">{}</td><td class=\"small\">{}"
                       "</td><td>{}</td></tr>",
                       Escape(b.label), NumCell(FormatSig3(b.tokens_per_s), b.tokens_per_s, 3),
                       Escape(b.formula), Escape(b.inputs),
                       Badge(BadgeKindFor(b.provenance), b.provenance));
  }
  out += "</tbody></table></div></section>\n";
  return out;
}

std::string TimelineSection(const proto::Diff& d, const DiffHtmlInputs& in) {
  if (in.a == nullptr || in.b == nullptr) return "";
  if (in.a->timeline_size() == 0 && in.b->timeline_size() == 0) return "";
  auto span = [](const proto::Profile& p) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& e : p.timeline()) {
      lo = std::min(lo, e.start_ns());
      hi = std::max(hi, e.start_ns() + e.dur_ns());
    }
    return p.timeline_size() ? hi - lo : 0;
  };
  const int64_t common = std::max(span(*in.a), span(*in.b));
  std::string out = "<section id=\"timelines\"><h2>One decode step, both runs on one time "
                    "scale</h2>";
  int i = 0;
  for (const proto::Profile* p : {in.a, in.b}) {
    const std::string label = i == 0 ? Label(d.a(), "A") : Label(d.b(), "B");
    std::vector<proto::TimelineEvent> evs(p->timeline().begin(), p->timeline().end());
    out += fmt::format("<h3>{}: {}</h3>", i == 0 ? "A" : "B", Escape(label));
    out += evs.empty() ? "<p class=\"muted\">no timeline</p>"
                       : "<div class=\"tablewrap\">" +
                             html::TimelineSvg(evs, i == 0 ? "timeline-a" : "timeline-b",
                                               common) +
                             "</div>";
    ++i;
  }
  out += "</section>\n";
  return out;
}

std::string WarningSection(const proto::Diff& d, const DiffHtmlInputs& in) {
  std::vector<std::string> items;
  for (const auto& w : d.warnings()) {
    items.push_back(fmt::format("<li data-code=\"{}\"><code>{}</code> {}</li>", Escape(w.code()),
                                Escape(w.code()), Escape(w.message())));
  }
  // Each side's warnings: the Diff carries them (DiffSide.warnings); a Diff written before
  // it did has them only in the Profiles.
  int i = 0;
  for (const proto::Profile* p : {in.a, in.b}) {
    const proto::DiffSide& side = i == 0 ? d.a() : d.b();
    const std::string label = i++ == 0 ? Label(d.a(), "A") : Label(d.b(), "B");
    const auto& warnings = side.warnings_size() > 0 || p == nullptr ? side.warnings() : p->warnings();
    for (const auto& w : warnings) {
      items.push_back(fmt::format("<li data-code=\"{}\"><b>{}</b>: <code>{}</code> {}</li>",
                                  Escape(w.code()), Escape(label), Escape(w.code()),
                                  Escape(w.message())));
    }
  }
  std::string out = "<section id=\"warnings\"><h2>Warnings and sources</h2>";
  if (items.empty()) {
    out += "<p id=\"no-warnings\">No warnings.</p>";
  } else {
    out += "<ul class=\"warn\" id=\"warning-list\">";
    for (const auto& s : items) out += s;
    out += "</ul>";
  }
  out += "<table><thead><tr><th>side</th><th>file</th><th>kind</th><th>provenance</th></tr>"
         "</thead><tbody>";
  for (int side = 0; side < 2; ++side) {
    const auto& s = side == 0 ? d.a() : d.b();
    for (const auto& src : s.sources()) {
      out += fmt::format("<tr><td>{}</td><td class=\"kname\">{}</td><td>{}</td><td>{}</td></tr>",
                         side == 0 ? "A" : "B", Escape(src.path()), Escape(src.kind()),
                         Badge(BadgeKindFor(src.provenance()), src.provenance()));
    }
  }
  out += "</tbody></table></section>\n";
  return out;
}

}  // namespace

std::string RenderDiffHtml(const proto::Diff& diff, const DiffHtmlInputs& inputs,
                           const HtmlOptions& options) {
  std::string title = options.title;
  if (title.empty()) {
    title = "qprof diff: " + Label(diff.a(), "A") + " vs " + Label(diff.b(), "B");
  }
  std::string body = Hero(diff);
  body += ProjectionSection(inputs.projection);
  body += RoleSection(diff);
  body += CeilingSection(diff, inputs);
  body += ClassSection(diff);
  body += KernelSection(diff);
  body += RankSection(diff);
  body += html::CommDiffSection(diff);
  body += TimelineSection(diff, inputs);
  body += WarningSection(diff, inputs);
  return html::Page(title, body, options.links, !options.notebook);
}

absl::Status WriteDiffHtml(const proto::Diff& diff, const std::string& path,
                           const DiffHtmlInputs& inputs, const HtmlOptions& options) {
  return WriteFileAtomic(path, RenderDiffHtml(diff, inputs, options));
}

}  // namespace qprof::reports
