// The Profile page: headline, class split, bottlenecks, one decode step, ceilings, warnings.
#include <algorithm>
#include <cmath>
#include <set>

#include "base/file_util.h"
#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/html/html_report.h"
#include "reports/html/html_util.h"
#include "reports/html/launch_sections.h"
#include "reports/html/profile_sections.h"
#include "reports/html/roofline_section.h"
#include "reports/html/svg_charts.h"

namespace qprof::reports {
namespace {

using html::Badge;
using html::BadgeKindFor;
using html::Escape;

std::string Card(const std::string& key, const std::string& value, const std::string& badge,
                 const std::string& id = "", const std::string& data = "", bool small = false) {
  return fmt::format(
      "<div class=\"card{}\"{}><div class=\"k\">{}</div><div class=\"v{}\"{}>{}</div>{}</div>",
      small ? " wide" : "", id.empty() ? "" : " id=\"" + Escape(id) + "\"", Escape(key),
      small ? " sm" : "",
      data.empty() ? "" : " " + data, Escape(value),
      badge.empty() ? "" : "<div class=\"p\">" + badge + "</div>");
}

std::string Headline(const proto::Profile& p) {
  const auto& run = p.run();
  const auto& t = p.totals();
  const std::string prov = ProfileProvenance(p);
  const std::string pb = Badge(BadgeKindFor(prov), prov);
  std::string out;
  std::string label = !p.label().empty() ? p.label() : !run.format().empty() ? run.format()
                                                                            : "profile";
  out += fmt::format("<header class=\"top\"><h1>qprof profile: {} <span class=\"sub\">{}</span>"
                     "</h1></header>\n",
                     Escape(label), Escape(DeviceLine(p)));
  out += html::ProvenanceBanner(p);
  out += "<div class=\"cards\">";
  // Cards with nothing to say are left out (a model, format or batch the input does not
  // record); the first screen holds what is known.
  out += Card("Device", DeviceLine(p), "", "card-device", "", true);
  if (!run.model().empty()) out += Card("Model", run.model(), "", "", "", true);
  std::string fmt_text = run.format();
  std::string fmt_note;
  if (run.format().empty() && !p.format_inferred().empty()) {
    fmt_text = p.format_inferred() + " (inferred)";
    fmt_note = fmt::format("<span class=\"small muted\">{}</span>", Escape(p.format_inferred_from()));
  }
  if (!fmt_text.empty() && !run.moe_backend().empty()) fmt_text += " (" + run.moe_backend() + ")";
  if (!fmt_text.empty()) out += Card("Format", fmt_text, fmt_note, "card-format", "", false);
  if (run.batch()) out += Card("Batch", std::to_string(run.batch()), "", "card-batch");
  if (t.tokens_per_s() > 0) {
    // Tokens read from the trace itself say from where, under the figure.
    const std::string note =
        t.tokens_source().empty()
            ? pb
            : pb + fmt::format("<div class=\"small muted\">{}</div>", Escape(t.tokens_source()));
    out += Card("Tokens/s", FormatSig3(t.tokens_per_s()), note, "tokens-per-s",
                fmt::format("data-value=\"{}\"", html::Num(t.tokens_per_s(), 4)));
  } else {
    out += Card("Tokens/s", "n/a", Badge("none", "no token count in the input"),
                "tokens-per-s", "data-value=\"\"");
  }
  out += Card("Kernel time", FormatNs(static_cast<double>(t.kernel_time_ns())),
              Badge(BadgeKindFor(prov), fmt::format("{} launches", t.kernel_count())),
              "kernel-time", fmt::format("data-ns=\"{}\"", t.kernel_time_ns()));
  out += Card(IsAmdProfile(p) ? "Matrix-core share" : "Tensor-core share",
              FormatShare(ClassShare(p, "tensor")),
              IsAmdProfile(p) ? "<span class=\"small muted\">of kernel time, on matrix-core "
                                "(MFMA) kernels: class \"tensor\"</span>"
                              : "<span class=\"small muted\">of kernel time, on tensor-core kernels</span>",
              "tensor-share",
              fmt::format("data-value=\"{}\"", html::Num(ClassShare(p, "tensor"), 6)));
  if (p.has_other_class()) {
    // Class "other" above 5% of kernel time: the shares above leave that much out.
    std::string names;
    for (const auto& k : p.other_class().top()) {
      names += fmt::format("<li><code>{}</code> {}</li>", Escape(k.name()), FormatShare(k.share()));
    }
    out += Card("Class \"other\"", FormatShare(p.other_class().share()),
                fmt::format("<span class=\"small muted\">of kernel time has no evidence of its "
                            "pipe ({} kernels); the largest:</span><ol class=\"small\">{}</ol>",
                            p.other_class().kernel_rows(), names),
                "other-share",
                fmt::format("data-value=\"{}\"", html::Num(p.other_class().share(), 6)), true);
  }
  out += "</div>\n";
  return out;
}

std::vector<html::Segment> Segments(const proto::Profile& p) {
  std::vector<html::Segment> segs;
  for (const auto& cls : html::ClassOrder()) {
    for (const auto& c : p.classes()) {
      if (c.class_() == cls) segs.push_back({cls, c.share(), c.time_ns()});
    }
  }
  for (const auto& c : p.classes()) {
    if (std::find(html::ClassOrder().begin(), html::ClassOrder().end(), c.class_()) ==
        html::ClassOrder().end()) {
      segs.push_back({c.class_(), c.share(), c.time_ns()});
    }
  }
  return segs;
}

std::string SplitSection(const proto::Profile& p) {
  const auto segs = Segments(p);
  std::string out = "<section id=\"split\"><h2>Where decode time goes: pipe classes</h2>";
  out += html::SplitBarSvg(segs, "class-split",
                           "Share of kernel time by pipe class: tensor, SIMT, communication, "
                           "memory, other");
  out += html::ClassLegend(segs);
  out += fmt::format(
      "<p class=\"small muted\">Shares of the summed kernel time ({}{}). {}</p></section>\n",
      FormatNs(static_cast<double>(p.totals().kernel_time_ns())),
      p.no_timeline().empty()
          ? fmt::format("; busy time, the union of kernel intervals, is {}",
                        FormatNs(static_cast<double>(p.totals().busy_time_ns())))
          : "",
      Badge(BadgeKindFor(ProfileProvenance(p)), ProfileProvenance(p)));
  return out;
}

std::string TimelineSection(const proto::Profile& p) {
  std::string out = "<section id=\"timeline\"><h2>One decode step</h2>";
  if (!p.no_timeline().empty()) {
    // Said once, here: the idle and step sections are left out for the same reason.
    out += fmt::format("<p class=\"muted\" id=\"no-timeline\">No timeline: {}. Classes, roles, "
                       "shares and Amdahl bounds hold; idle time, overlap and steps are not "
                       "shown.</p></section>\n",
                       Escape(p.no_timeline()));
    return out;
  }
  if (p.timeline_size() == 0) {
    out += "<p class=\"muted\">No timeline in this profile: the input had no decode-step "
           "ranges (NVTX) to pick a representative step from.</p></section>\n";
    return out;
  }
  std::vector<proto::TimelineEvent> evs(p.timeline().begin(), p.timeline().end());
  std::set<std::string> paths;
  for (const auto& e : evs) {
    auto pos = e.nvtx_path().find("/layer");
    if (!e.nvtx_path().empty()) paths.insert(e.nvtx_path().substr(0, pos));
  }
  std::string step = paths.size() == 1 ? *paths.begin() : "a representative step";
  out += fmt::format(
      "<p class=\"small muted\">Kernels of {} on their streams, coloured by pipe class; hover a "
      "kernel for its name, role, duration and NVTX range. {}</p>",
      Escape(step), Badge(BadgeKindFor(ProfileProvenance(p)), ProfileProvenance(p)));
  if (!p.timeline_note().empty()) {
    out += fmt::format("<p class=\"small\" id=\"timeline-note\">Timeline {}</p>",
                       Escape(p.timeline_note()));
  }
  out += "<div class=\"tablewrap\">" + html::TimelineSvg(evs, "step-timeline") + "</div>";
  std::vector<html::Segment> legend;
  for (const auto& cls : html::ClassOrder()) {
    uint64_t ns = 0;
    for (const auto& e : evs)
      if (e.class_() == cls) ns += static_cast<uint64_t>(std::max<int64_t>(0, e.dur_ns()));
    if (ns > 0) legend.push_back({cls, 0, ns});
  }
  uint64_t total = 0;
  for (auto& s : legend) total += s.time_ns;
  for (auto& s : legend) s.share = total ? static_cast<double>(s.time_ns) / total : 0;
  out += html::ClassLegend(legend);
  out += "</section>\n";
  return out;
}

}  // namespace

std::string RenderProfileHtml(const proto::Profile& profile, const HtmlOptions& options) {
  std::string title = options.title;
  if (title.empty()) {
    title = "qprof: " + (profile.label().empty() ? profile.run().format() : profile.label());
    if (!profile.run().model().empty()) title += " · " + profile.run().model();
    title += " · " + DeviceLine(profile);
  }
  std::string body;
  body += Headline(profile);
  body += SplitSection(profile);
  body += html::BottleneckSection(profile);
  body += html::RankSection(profile);
  body += html::LatencySection(profile);
  body += html::RooflineSection(profile);
  body += TimelineSection(profile);
  if (profile.no_timeline().empty()) {  // idle gaps and exposed time need a timeline
    body += html::IdleSection(profile);
    body += html::CommSection(profile);
  }
  body += html::NvtxSummarySection(profile);
  body += html::CeilingsSection(profile);
  body += html::WarningsSection(profile);
  return html::Page(title, body, options.links);
}

absl::Status WriteProfileHtml(const proto::Profile& profile, const std::string& path,
                              const HtmlOptions& options) {
  return WriteFileAtomic(path, RenderProfileHtml(profile, options));
}

}  // namespace qprof::reports
