#include "reports/html/roofline_section.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/html/html_util.h"

namespace qprof::reports::html {
namespace {

constexpr double kW = 1000, kH = 440;
constexpr double kLeft = 70, kRight = 190, kTop = 20, kBottom = 50;

struct Axis {
  double lo, hi;  // log10 range
  double px0, px1;
  double At(double v) const {
    const double t = (std::log10(v) - lo) / (hi - lo);
    return px0 + t * (px1 - px0);
  }
};

bool Plottable(const proto::KernelRow& k) {
  return k.work_launches() > 0 && k.flops() > 0 && k.bytes() > 0 && k.has_achieved_tflops() &&
         std::isfinite(k.flops() / k.bytes());
}

std::string Decade(double e) {
  const double v = std::pow(10.0, e);
  if (e >= 0 && e < 4) return fmt::format("{:.0f}", v);
  if (e < 0 && e > -4) return fmt::format("{:g}", v);
  return fmt::format("1e{:.0f}", e);
}

}  // namespace

std::string RooflineSvg(const proto::Profile& p) {
  const proto::DeviceRoofs& roofs = p.roofs();
  if (roofs.memory_gbps() <= 0) return "";
  std::vector<const proto::KernelRow*> pts;
  std::set<std::string> used;
  for (const auto& k : p.kernels()) {
    if (!Plottable(k)) continue;
    pts.push_back(&k);
    if (!k.roof_pipe().empty()) used.insert(k.roof_pipe());
  }
  if (pts.empty()) return "";
  std::vector<const proto::DeviceRoof*> lines;
  for (const auto& r : roofs.pipes()) {
    if (used.count(r.pipe()) && r.tflops() > 0) lines.push_back(&r);
  }
  const double bw_tf = roofs.memory_gbps() / 1e3;  // TB/s: TFLOP/s per FLOP/byte of intensity
  double imin = 1e300, imax = 0, tmin = 1e300, tmax = 0;
  for (const auto* k : pts) {
    const double i = k->flops() / k->bytes();
    imin = std::min(imin, i);
    imax = std::max(imax, i);
    tmin = std::min(tmin, k->achieved_tflops());
    tmax = std::max(tmax, k->achieved_tflops());
  }
  for (const auto* r : lines) {
    tmax = std::max(tmax, r->tflops());
    imax = std::max(imax, r->tflops() / bw_tf);  // the ridge point
  }
  Axis x{std::floor(std::log10(imin)) - 1, std::ceil(std::log10(imax)) + 1, kLeft, kW - kRight};
  Axis y{std::floor(std::log10(std::max(tmin, 1e-9))) - 1, std::ceil(std::log10(tmax)) + 1,
         kH - kBottom, kTop};
  std::string out = fmt::format(
      "<svg id=\"roofline\" class=\"roofline\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"Roofline on {}: arithmetic intensity (FLOP per byte) against achieved "
      "TFLOP/s, {} kernels, {} roofs\">",
      Num(kW), Num(kH), Escape(roofs.device()), pts.size(), lines.size());
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafbfc\" "
                     "stroke=\"#d0d5dc\"/>",
                     Num(kLeft), Num(kTop), Num(kW - kRight - kLeft), Num(kH - kBottom - kTop));
  // Decade grid and labels.
  for (double e = x.lo; e <= x.hi + 1e-9; e += 1) {
    const double px = x.At(std::pow(10.0, e));
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e3e7ec\"/>"
                       "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" class=\"tick\">{4}</text>",
                       Num(px), Num(kTop), Num(kH - kBottom), Num(kH - kBottom + 16), Decade(e));
  }
  for (double e = y.lo; e <= y.hi + 1e-9; e += 1) {
    const double py = y.At(std::pow(10.0, e));
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#e3e7ec\"/>"
                       "<text x=\"{3}\" y=\"{4}\" text-anchor=\"end\" class=\"tick\">{5}</text>",
                       Num(kLeft), Num(py), Num(kW - kRight), Num(kLeft - 6), Num(py + 4), Decade(e));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"tick\">arithmetic "
                     "intensity (FLOP per byte of DRAM traffic)</text>",
                     Num((kLeft + kW - kRight) / 2), Num(kH - 12));
  out += fmt::format("<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" class=\"tick\" "
                     "transform=\"rotate(-90 14 {0})\">achieved TFLOP/s</text>",
                     Num((kTop + kH - kBottom) / 2));
  // Roofs: min(peak, intensity x bandwidth) for each pipe the kernels use.
  const double ilo = std::pow(10.0, x.lo), ihi = std::pow(10.0, x.hi);
  int n = 0;
  for (const auto* r : lines) {
    const double ridge = r->tflops() / bw_tf;
    const double i0 = std::max(ilo, std::pow(10.0, y.lo) / bw_tf);
    const double y_label = y.At(r->tflops()) - 4;
    out += fmt::format(
        "<g class=\"roof\" data-pipe=\"{}\" data-tflops=\"{}\" data-ridge=\"{}\"><title>{} roof "
        "on {}: {} TFLOP/s dense ({}); memory {} GB/s ({}); ridge at {} FLOP/byte</title>"
        "<polyline fill=\"none\" stroke=\"#3b4250\" stroke-width=\"1.5\" points=\"{},{} {},{} "
        "{},{}\"/><text x=\"{}\" y=\"{}\" class=\"rooflabel\">{} {} TF/s</text></g>",
        Escape(r->pipe()), Num(r->tflops(), 3), Num(ridge, 3), Escape(r->pipe()),
        Escape(roofs.device()), FormatSig3(r->tflops()), Escape(r->source()),
        FormatSig3(roofs.memory_gbps()), Escape(roofs.memory_source()), FormatSig3(ridge),
        Num(x.At(i0)), Num(y.At(i0 * bw_tf)), Num(x.At(ridge)), Num(y.At(r->tflops())),
        Num(x.At(ihi)), Num(y.At(r->tflops())), Num(kW - kRight + 6), Num(y_label + 4 + 12 * n),
        Escape(r->pipe()), FormatSig3(r->tflops()));
    ++n;
  }
  // Points: area proportional to the row's share of kernel time.
  for (const auto* k : pts) {
    const double i = k->flops() / k->bytes();
    const double r = 3 + 14 * std::sqrt(std::clamp(k->share(), 0.0, 1.0));
    out += fmt::format(
        "<g class=\"pt\" data-kernel=\"{}\" data-intensity=\"{}\" data-tflops=\"{}\" "
        "data-time-ns=\"{}\" data-class=\"{}\"><title>{}: {} TFLOP/s at {} FLOP/byte ({} of "
        "the {} roof; {}); {} of kernel time; {}</title><circle cx=\"{}\" cy=\"{}\" r=\"{}\" "
        "fill=\"{}\" fill-opacity=\"0.8\" stroke=\"#222\" stroke-width=\"0.6\"/></g>",
        Escape(k->name()), Num(i, 6), Num(k->achieved_tflops(), 6), k->work_time_ns(),
        Escape(k->class_()), Escape(k->name()), FormatSig3(k->achieved_tflops()), FormatSig3(i),
        k->has_peak_fraction() ? FormatShare(k->peak_fraction()) : "?",
        k->roof_pipe().empty() ? "memory" : k->roof_pipe(), k->bound().empty() ? "-" : k->bound(),
        FormatShare(k->share()), Escape(k->work_source()), Num(x.At(i)),
        Num(y.At(k->achieved_tflops())), Num(r), ClassFill(k->class_()));
  }
  out += "</svg>";
  return out;
}

std::string RooflineSection(const proto::Profile& p) {
  bool any = false;
  for (const auto& k : p.kernels()) any |= k.work_launches() > 0;
  const std::string& graph_work = p.launch_summary().graph_work();
  const std::string graph_line =
      graph_work.empty() ? ""
                         : fmt::format("<p class=\"small\" id=\"graph-work\">Graph replays: {}.</p>",
                                       Escape(graph_work));
  if (!any) {
    return graph_line.empty() ? ""
                              : "<section id=\"roofline-section\"><h2>Achieved vs roof</h2>" +
                                    graph_line + "</section>\n";
  }
  std::string out = "<section id=\"roofline-section\"><h2>Achieved vs roof</h2>" + graph_line;
  const std::string svg = RooflineSvg(p);
  if (!svg.empty()) {
    out += fmt::format(
        "<p class=\"small muted\">Each kernel with work at its arithmetic intensity and "
        "achieved TFLOP/s (work over the time of the launches that carry it), sized by its "
        "share of kernel time and coloured by pipe class; each roof is min(peak, intensity x "
        "{} GB/s) on {}, dense datasheet peaks. {}</p>",
        FormatSig3(p.roofs().memory_gbps()), Escape(p.roofs().device()),
        Badge("modelled", "roofs from the device table"));
    out += "<div class=\"tablewrap\">" + svg + "</div>";
  } else if (p.roofs().memory_gbps() <= 0) {
    out += "<p class=\"muted\">No roofline chart: the profiled device is not in the spec "
           "table (pass --device NAME).</p>";
  }
  out += "<div class=\"tablewrap\"><table class=\"sortable\" id=\"achieved\"><thead><tr>"
         "<th>kernel</th><th>role</th><th class=\"num\">TFLOP/s</th><th class=\"num\">GB/s</th>"
         "<th>roof</th><th class=\"num\">of roof</th><th>bound</th>"
         "<th class=\"num\">launches</th><th>work from</th></tr></thead><tbody>";
  for (const auto& k : p.kernels()) {
    if (k.work_launches() == 0) continue;
    out += fmt::format(
        "<tr data-kernel=\"{}\" data-flops=\"{}\" data-bytes=\"{}\" data-work-time-ns=\"{}\">"
        "<td class=\"kname\"{}>{}</td><td>{}</td>{}{}<td>{}</td>{}<td>{}</td>{}<td class=\"small\">"
        "{}{}</td></tr>",
        Escape(k.name()), Num(k.flops(), 0), Num(k.bytes(), 0), k.work_time_ns(),
        RawNameAttrs(k.raw_name()), Escape(k.name()), Escape(k.role()),
        k.has_achieved_tflops() ? NumCell(FormatSig3(k.achieved_tflops()), k.achieved_tflops())
                                : "<td class=\"num\">-</td>",
        k.has_achieved_gbps() ? NumCell(FormatSig3(k.achieved_gbps()), k.achieved_gbps())
                              : "<td class=\"num\">-</td>",
        Escape(k.roof_pipe().empty() ? "HBM" : k.roof_pipe()),
        k.has_peak_fraction() ? NumCell(FormatShare(k.peak_fraction()), k.peak_fraction())
                              : "<td class=\"num\">-</td>",
        Escape(k.bound().empty() ? "-" : k.bound()),
        NumCell(fmt::format("{}/{}", k.work_launches(), k.calls()),
                static_cast<double>(k.work_launches())),
        Escape(k.work_source()), k.work_note().empty() ? "" : " (" + Escape(k.work_note()) + ")");
  }
  out += "</tbody></table></div>";
  for (const auto& r : p.ceilings().roles()) {
    out += fmt::format("<p class=\"small role-ceiling\" data-role=\"{}\">{} {}</p>",
                       Escape(r.role()), Escape(r.note()), Badge("modelled", "format ceilings"));
  }
  out += "</section>\n";
  return out;
}

}  // namespace qprof::reports::html
