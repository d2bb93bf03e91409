#include "reports/html/svg_charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/html/html_util.h"

namespace qprof::reports::html {
namespace {

constexpr double kWidth = 1000;

// Roughly how many characters of 12px text fit in `w` viewBox units (~6.6 units a char).
size_t CharsFit(double w) { return w <= 0 ? 0 : static_cast<size_t>(w / 6.6); }

// A "nice" tick step (1, 2, 5 x 10^k) giving about `target` ticks over `span`.
double NiceStep(double span, int target) {
  if (span <= 0) return 1;
  double raw = span / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double n = raw / mag;
  return (n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10) * mag;
}

}  // namespace

std::string SplitBarSvg(const std::vector<Segment>& segments, const std::string& id,
                        const std::string& aria_label, double view_width) {
  constexpr double kH = 30;
  const double kWidth = view_width;
  std::string out = fmt::format(
      "<svg id=\"{}\" class=\"splitbar\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">",
      Escape(id), Num(kWidth), Num(kH), Escape(aria_label));
  out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#eef0f3\"/>",
                     Num(kWidth), Num(kH));
  double x = 0;
  for (const auto& s : segments) {
    if (s.share <= 0) continue;
    const double w = std::min(kWidth - x, s.share * kWidth);
    out += fmt::format(
        "<g class=\"seg\" data-class=\"{}\" data-share=\"{}\" data-time-ns=\"{}\">"
        "<title>{}: {} of kernel time ({})</title>"
        "<rect x=\"{}\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" "
        "stroke-width=\"1\"/>",
        Escape(s.cls), Num(s.share, 6), s.time_ns, Escape(s.cls), FormatShare(s.share),
        FormatNs(static_cast<double>(s.time_ns)), Num(x), Num(w), Num(kH), ClassFill(s.cls));
    std::string label = s.cls + " " + FormatShare(s.share);
    if (CharsFit(w - 8) < label.size()) label = FormatShare(s.share);
    if (CharsFit(w - 6) >= label.size()) {
      out += fmt::format(
          "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" style=\"fill:{};font-weight:600\">{}"
          "</text>",
          Num(x + w / 2), Num(kH / 2 + 4.5), ClassInk(s.cls), Escape(label));
    }
    out += "</g>";
    x += w;
  }
  out += "</svg>";
  return out;
}

std::string ClassLegend(const std::vector<Segment>& segments) {
  std::string out = "<div class=\"legend\">";
  for (const auto& s : segments) {
    out += fmt::format(
        "<span data-class=\"{}\"><span class=\"sw\" style=\"background:{}\"></span>{} "
        "<b>{}</b> <span class=\"muted\">{}</span></span>",
        Escape(s.cls), ClassFill(s.cls), Escape(s.cls), FormatShare(s.share),
        FormatNs(static_cast<double>(s.time_ns)));
  }
  return out + "</div>";
}

std::string TimelineSvg(const std::vector<proto::TimelineEvent>& events, const std::string& id,
                        int64_t min_span_ns) {
  if (events.empty()) return "";
  constexpr double kLabelW = 150, kLaneH = 22, kGap = 4, kTop = 26;
  const double plot_w = kWidth - kLabelW - 10;
  int64_t t0 = events[0].start_ns(), t1 = events[0].start_ns() + events[0].dur_ns();
  for (const auto& e : events) {
    t0 = std::min(t0, e.start_ns());
    t1 = std::max(t1, e.start_ns() + std::max<int64_t>(0, e.dur_ns()));
  }
  const double span = std::max<double>({1.0, static_cast<double>(t1 - t0),
                                       static_cast<double>(min_span_ns)});
  // Lanes: (device, stream) in order, each split into sub-lanes for overlapping events.
  std::map<std::pair<uint32_t, uint64_t>, std::vector<const proto::TimelineEvent*>> by_stream;
  for (const auto& e : events) by_stream[{e.device_id(), e.stream_id()}].push_back(&e);
  struct Placed {
    const proto::TimelineEvent* e;
    int lane;
  };
  std::vector<Placed> placed;
  std::vector<std::string> lane_names;
  for (auto& [key, evs] : by_stream) {
    std::stable_sort(evs.begin(), evs.end(),
                     [](auto* a, auto* b) { return a->start_ns() < b->start_ns(); });
    std::vector<int64_t> lane_end;
    const int first = static_cast<int>(lane_names.size());
    for (const auto* e : evs) {
      size_t l = 0;
      while (l < lane_end.size() && lane_end[l] > e->start_ns()) ++l;
      if (l == lane_end.size()) lane_end.push_back(0);
      lane_end[l] = e->start_ns() + std::max<int64_t>(0, e->dur_ns());
      placed.push_back({e, first + static_cast<int>(l)});
    }
    for (size_t l = 0; l < lane_end.size(); ++l) {
      lane_names.push_back(l == 0 ? fmt::format("GPU {} · stream {}", key.first, key.second)
                                  : fmt::format("stream {} (overlap {})", key.second, l + 1));
    }
  }
  const double h = kTop + lane_names.size() * (kLaneH + kGap) + 6;
  std::string out = fmt::format(
      "<svg id=\"{}\" class=\"timeline\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"Timeline "
      "of one decode step: {} kernels on {} lanes over {}\">",
      Escape(id), Num(kWidth), Num(h), events.size(), lane_names.size(), FormatNs(span));
  // Axis with nice ticks in the unit FormatNs picks.
  const double step = NiceStep(span, 8);
  for (double t = 0; t <= span + 1e-9; t += step) {
    const double x = kLabelW + t / span * plot_w;
    out += fmt::format(
        "<line class=\"ax\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>"
        "<text class=\"tick\" x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
        Num(x), Num(kTop - 6), Num(h - 4), Num(kTop - 10), FormatNs(t));
  }
  for (size_t l = 0; l < lane_names.size(); ++l) {
    const double y = kTop + l * (kLaneH + kGap);
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f3f5f8\"/>"
        "<text x=\"4\" y=\"{}\">{}</text>",
        Num(kLabelW), Num(y), Num(plot_w), Num(kLaneH), Num(y + kLaneH / 2 + 4),
        Escape(lane_names[l]));
  }
  for (const auto& p : placed) {
    const auto& e = *p.e;
    const double x = kLabelW + (e.start_ns() - t0) / span * plot_w;
    const double w = std::max(0.8, std::max<int64_t>(0, e.dur_ns()) / span * plot_w);
    const double y = kTop + p.lane * (kLaneH + kGap);
    out += fmt::format(
        "<g class=\"ev\" data-class=\"{}\" data-start-ns=\"{}\" data-dur-ns=\"{}\">"
        "<title>{}\n{} · {} · {} (starts at +{}){}</title>"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" "
        "stroke-width=\"0.5\"/>",
        Escape(e.class_()), e.start_ns() - t0, e.dur_ns(), Escape(e.name()), Escape(e.role()),
        Escape(e.class_()), FormatNs(static_cast<double>(e.dur_ns())),
        FormatNs(static_cast<double>(e.start_ns() - t0)),
        e.nvtx_path().empty() ? "" : "\nNVTX: " + Escape(e.nvtx_path()), Num(x), Num(y), Num(w),
        Num(kLaneH), ClassFill(e.class_()));
    const size_t fit = CharsFit(w - 6);
    if (fit >= 6) {
      std::string name = e.role().empty() ? e.name() : e.role();
      out += fmt::format("<text x=\"{}\" y=\"{}\" style=\"fill:{};font-size:11px\">{}</text>",
                         Num(x + 3), Num(y + kLaneH / 2 + 4), ClassInk(e.class_()),
                         Escape(Ellipsize(name, fit)));
    }
    out += "</g>";
  }
  out += "</svg>";
  return out;
}

std::string WaterfallSvg(const std::vector<CeilingBar>& bars, const std::string& id) {
  if (bars.empty()) return "";
  constexpr double kLabelW = 300, kRowH = 30, kTop = 24;
  const double plot_w = kWidth - kLabelW - 110;
  double lo = bars[0].tokens_per_s, hi = lo;
  for (const auto& b : bars) {
    if (b.tokens_per_s > 0) lo = lo > 0 ? std::min(lo, b.tokens_per_s) : b.tokens_per_s;
    hi = std::max(hi, b.tokens_per_s);
  }
  const bool log = lo > 0 && hi / lo > 20;
  // Log axis from one decade below the smallest value, so the smallest bar stays visible.
  const double dlo = log ? std::pow(10.0, std::floor(std::log10(lo))) / 2 : 0;
  auto xof = [&](double v) {
    if (v <= 0) return 0.0;
    if (log) return std::max(0.0, std::log10(v / dlo) / std::log10(hi * 1.15 / dlo)) * plot_w;
    return v / (hi * 1.05) * plot_w;
  };
  const double h = kTop + bars.size() * kRowH + 8;
  std::string out = fmt::format(
      "<svg id=\"{}\" class=\"waterfall\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"Tokens "
      "per second: {} and ceilings{}\">",
      Escape(id), Num(kWidth), Num(h),
      // The run's own bar says "modelled (...)" for a modelled profile (CeilingBars).
      !bars.empty() && bars[0].label.rfind("modelled", 0) == 0 ? "modelled" : "measured",
      log ? " (log scale)" : "");
  // Gridlines.
  if (log) {
    for (double d = std::pow(10.0, std::floor(std::log10(dlo))); d <= hi * 1.15; d *= 10) {
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = d * m;
        if (v < dlo || v > hi * 1.15) continue;
        const double x = kLabelW + xof(v);
        out += fmt::format(
            "<line class=\"ax\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>"
            "<text class=\"tick\" x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
            Num(x), Num(kTop - 4), Num(h - 6), Num(kTop - 8), FormatSig3(v));
      }
    }
  } else {
    const double step = NiceStep(hi, 6);
    for (double v = 0; v <= hi * 1.05; v += step) {
      const double x = kLabelW + xof(v);
      out += fmt::format(
          "<line class=\"ax\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>"
          "<text class=\"tick\" x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
          Num(x), Num(kTop - 4), Num(h - 6), Num(kTop - 8), FormatSig3(v));
    }
  }
  static const std::map<std::string, std::string> kFill = {
      {"measured", "#0072B2"}, {"amdahl", "#56B4E9"}, {"run-format", "#009E73"},
      {"other-format", "#9ad3bf"}};
  for (size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const double y = kTop + i * kRowH + 4;
    const double w = std::max(1.0, xof(b.tokens_per_s));
    // Solid means measured: a "measured"-kind bar of a modelled run (its throughput comes
    // from the model) is dashed and purple like every other modelled figure.
    const bool modelled_run = b.kind == "measured" &&
                              b.provenance.find("modelled") != std::string::npos;
    auto it = kFill.find(b.kind);
    const std::string fill = modelled_run        ? "#CC79A7"
                             : it == kFill.end() ? "#8C8C8C"
                                                 : it->second;
    const bool dashed = b.kind != "measured" || modelled_run;
    out += fmt::format(
        "<g class=\"ceil\" data-kind=\"{}\" data-tokens-per-s=\"{}\">"
        "<title>{}: {} tok/s\n{}\n{}\n{}</title>"
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\" fill=\"{}\"{}/>"
        "<text x=\"{}\" y=\"{}\" style=\"font-weight:600\">{}</text></g>",
        Escape(b.kind), Num(b.tokens_per_s, 3), Escape(b.label), FormatSig3(b.tokens_per_s),
        Escape(b.formula), Escape(b.inputs), Escape(b.provenance), Num(kLabelW - 8),
        Num(y + 15), Escape(Ellipsize(b.label, 44)), Num(kLabelW), Num(y), Num(w),
        Num(kRowH - 8), fill,
        dashed ? " stroke=\"#333\" stroke-width=\"0.6\" stroke-dasharray=\"3 2\"" : "",
        Num(kLabelW + w + 6), Num(y + 15), Escape(FormatTokensPerS(b.tokens_per_s)));
  }
  if (log) {
    out += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">log scale"
                       "</text>",
                       Num(kWidth - 4), Num(h - 2));
  }
  out += "</svg>";
  return out;
}

std::string PairedBarsSvg(const std::vector<PairRow>& rows, const std::string& a_label,
                          const std::string& b_label, const std::string& id) {
  if (rows.empty()) return "";
  constexpr double kLabelW = 150, kBarH = 13, kRowH = 38, kTop = 6;
  const double plot_w = kWidth - kLabelW - 170;
  uint64_t hi = 1;
  for (const auto& r : rows) hi = std::max({hi, r.a_ns, r.b_ns});
  const double h = kTop + rows.size() * kRowH + 4;
  std::string out = fmt::format(
      "<svg id=\"{}\" class=\"pairs\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"Time per "
      "role, {} above {}\">",
      Escape(id), Num(kWidth), Num(h), Escape(a_label), Escape(b_label));
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double y = kTop + i * kRowH;
    out += fmt::format(
        "<g class=\"pair\" data-key=\"{}\" data-a-ns=\"{}\" data-b-ns=\"{}\">"
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" style=\"font-weight:600\">{}</text>",
        Escape(r.key), r.a_ns, r.b_ns, Num(kLabelW - 10), Num(y + kBarH + 4),
        Escape(Ellipsize(r.key, 22)));
    auto bar = [&](double yy, uint64_t ns, double share, const std::string& cls,
                   const std::string& side, const std::string& side_label) {
      const double w = ns == 0 ? 0 : std::max(1.0, static_cast<double>(ns) / hi * plot_w);
      std::string title = fmt::format("{} on {}: {} ({} of its kernel time){}", r.key,
                                      side_label, FormatNs(static_cast<double>(ns)),
                                      FormatShare(share), cls.empty() ? "" : ", " + cls);
      const std::string label = fmt::format(
          "{} · {}{}{}", side_label, ns == 0 ? "absent" : FormatNs(static_cast<double>(ns)),
          ns == 0 ? "" : " (" + FormatShare(share) + ")", cls.empty() ? "" : " " + cls);
      // The label goes after the bar; when that would run off the chart, inside the bar's end.
      const bool inside = kLabelW + w + 5 + label.size() * 6.0 > kWidth && w > label.size() * 6.0;
      std::string g = fmt::format(
          "<g class=\"side-{}\"><title>{}</title>"
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\" fill=\"{}\"/>"
          "<text x=\"{}\" y=\"{}\"{} style=\"font-size:11px{}\">{}</text></g>",
          side, Escape(title), Num(kLabelW), Num(yy), Num(w), Num(kBarH),
          ClassFill(cls.empty() ? "other" : cls),
          Num(inside ? kLabelW + w - 5 : kLabelW + w + 5), Num(yy + kBarH - 2),
          inside ? " text-anchor=\"end\"" : "",
          inside ? std::string(";fill:") + ClassInk(cls.empty() ? "other" : cls) : "",
          Escape(label));
      return g;
    };
    out += bar(y, r.a_ns, r.a_share, r.a_cls, "a", a_label);
    out += bar(y + kBarH + 2, r.b_ns, r.b_share, r.b_cls, "b", b_label);
    out += "</g>";
  }
  out += "</svg>";
  return out;
}

}  // namespace qprof::reports::html
