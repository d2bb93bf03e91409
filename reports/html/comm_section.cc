// The Profile page's "Communication, copies and waits" section: one timeline band per GPU
// (compute, hidden comm, exposed comm, exposed copies, idle: the band's parts add up to the
// GPU's span of kernels and copies), the collectives with their bus bandwidth against the
// link, the copies with their rates, the idle gaps by cause, the host's synchronisation time
// and the tensor-parallel diagnosis.
#include <algorithm>
#include <vector>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/html/html_util.h"
#include "reports/html/profile_sections.h"

namespace qprof::reports::html {
namespace {

double Of(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string Ns(uint64_t ns) { return FormatNs(static_cast<double>(ns)); }
std::string Gbps(double v) { return FormatSig3(v) + " GB/s"; }

struct BandPart {
  const char* key;    // data-part
  const char* label;
  const char* fill;
  const char* ink;
  uint64_t ns;
};

// The parts of one GPU's band (overlap.h): compute minus hidden comm, hidden comm, exposed
// comm, exposed copies, and the rest of the band's span.
std::vector<BandPart> PartsOf(const proto::ProfileDevice& d) {
  const uint64_t hidden = d.comm_ns() - std::min(d.comm_ns(), d.comm_exposed_ns());
  const uint64_t compute_only = d.compute_ns() - std::min(d.compute_ns(), hidden);
  const uint64_t covered = d.compute_ns() + d.comm_exposed_ns() + d.copy_exposed_ns();
  const uint64_t idle = d.band_span_ns() - std::min(d.band_span_ns(), covered);
  return {{"compute", "compute", "#0072B2", "#fff", compute_only},
          {"comm-hidden", "comm hidden under compute", "#CC79A7", "#000", hidden},
          {"comm-exposed", "exposed comm", "#D55E00", "#fff", d.comm_exposed_ns()},
          {"copy-exposed", "exposed copies", "#E69F00", "#000", d.copy_exposed_ns()},
          {"idle", "idle", "#d9dce1", "#000", idle}};
}

std::string BandSvg(const proto::Profile& p, const proto::ProfileDevice& d) {
  constexpr double kW = 1000, kH = 22;
  const std::string name = p.sources_size() > 1
                               ? fmt::format("GPU {} (input {})", d.id(), d.trace() + 1)
                               : fmt::format("GPU {}", d.id());
  std::string out = fmt::format(
      "<div class=\"band\"><div class=\"small\">{} <span class=\"muted\">{} span of kernels and "
      "copies</span></div><svg class=\"splitbar\" data-device=\"{}\" data-trace=\"{}\" "
      "data-band-ns=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{} timeline: compute, "
      "hidden comm, exposed comm, exposed copies, idle\">",
      Escape(name), Ns(d.band_span_ns()), d.id(), d.trace(), d.band_span_ns(), Num(kW), Num(kH),
      Escape(name));
  double x = 0;
  for (const BandPart& part : PartsOf(d)) {
    const double share = Of(part.ns, d.band_span_ns());
    const double w = std::min(kW - x, share * kW);
    out += fmt::format(
        "<g data-part=\"{}\" data-ns=\"{}\"><title>{}: {} ({} of the band)</title><rect x=\"{}\" "
        "y=\"0\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
        part.key, part.ns, part.label, Ns(part.ns), FormatShare(share), Num(x), Num(std::max(0.0, w)),
        Num(kH), part.fill);
    const std::string label = FormatShare(share);
    if (w > 8.0 * static_cast<double>(label.size()) + 6) {
      out += fmt::format("<text x=\"{}\" y=\"15\" text-anchor=\"middle\" style=\"fill:{}\">{}</text>",
                         Num(x + w / 2), part.ink, label);
    }
    out += "</g>";
    x += std::max(0.0, w);
  }
  return out + "</svg></div>";
}

std::string BandLegend() {
  std::string out = "<div class=\"legend\">";
  proto::ProfileDevice none;
  for (const BandPart& part : PartsOf(none)) {
    out += fmt::format("<span><span class=\"sw\" style=\"background:{}\"></span>{}</span>",
                       part.fill, part.label);
  }
  return out + "</div>";
}

}  // namespace

std::string PerGpuTable(const proto::Profile& p) {
  std::string rows;
  for (const auto& d : p.devices()) {
    if (d.span_ns() == 0 && d.band_span_ns() == 0) continue;
    rows += fmt::format(
        "<tr data-device=\"{}\" data-trace=\"{}\"><td>{}</td>{}{}{}{}{}{}{}</tr>", d.id(), d.trace(),
        p.sources_size() > 1 ? fmt::format("GPU {} (input {})", d.id(), d.trace() + 1)
                             : fmt::format("GPU {}", d.id()),
        NumCell(Ns(d.span_ns()), static_cast<double>(d.span_ns())),
        NumCell(Ns(d.busy_time_ns()), static_cast<double>(d.busy_time_ns())),
        NumCell(Ns(d.idle_ns()), static_cast<double>(d.idle_ns())),
        NumCell(Ns(d.comm_ns()), static_cast<double>(d.comm_ns())),
        NumCell(Ns(d.comm_exposed_ns()), static_cast<double>(d.comm_exposed_ns())),
        NumCell(Ns(d.copy_ns()), static_cast<double>(d.copy_ns())),
        NumCell(Ns(d.copy_exposed_ns()), static_cast<double>(d.copy_exposed_ns())));
  }
  if (rows.empty()) return "";
  return "<div class=\"tablewrap\"><table class=\"sortable\" id=\"per-gpu\"><thead><tr><th>GPU"
         "</th><th class=\"num\">span</th><th class=\"num\">busy</th><th class=\"num\">idle</th>"
         "<th class=\"num\">comm</th><th class=\"num\">exposed comm</th><th class=\"num\">copies"
         "</th><th class=\"num\">exposed copies</th></tr></thead><tbody>" +
         rows + "</tbody></table></div>";
}

namespace {

std::string CollectivesTable(const proto::CommSummary& s) {
  if (s.collectives_size() == 0) return "";
  std::string out =
      "<h3>Collectives</h3><div class=\"tablewrap\"><table class=\"sortable\" id=\"collectives\">"
      "<thead><tr><th>collective</th><th>library</th><th>process group</th><th class=\"num\">n"
      "</th><th class=\"num\">calls</th><th class=\"num\">graph calls</th><th class=\"num\">size"
      "/call</th><th class=\"num\">time</th><th class=\"num\">algbw</th><th class=\"num\">busbw"
      "</th><th class=\"num\">of link</th><th>size from</th></tr></thead><tbody>";
  for (const auto& r : s.collectives()) {
    out += fmt::format(
        "<tr data-name=\"{}\" data-calls=\"{}\" data-bytes=\"{}\" data-ns=\"{}\"{}><td>{}</td>"
        "<td>{}</td><td>{}</td>{}{}{}{}{}{}{}{}<td class=\"small\">{}</td></tr>",
        Escape(r.name()), r.calls(), r.bytes(), r.time_ns(),
        r.has_busbw_gbps() ? fmt::format(" data-busbw=\"{}\"", Num(r.busbw_gbps(), 6)) : "",
        Escape(r.name()), Escape(r.library()),
        Escape(r.process_group().empty() ? "-" : r.process_group()),
        NumCell(r.group_size() ? std::to_string(r.group_size()) : "?", r.group_size()),
        NumCell(std::to_string(r.calls()), static_cast<double>(r.calls())),
        NumCell(std::to_string(r.graph_calls()), static_cast<double>(r.graph_calls())),
        NumCell(r.calls_with_bytes() ? FormatBytes(r.bytes_per_call()) : "unknown",
                r.bytes_per_call()),
        NumCell(Ns(r.time_ns()), static_cast<double>(r.time_ns())),
        NumCell(r.has_algbw_gbps() ? Gbps(r.algbw_gbps()) : "-", r.algbw_gbps()),
        NumCell(r.has_busbw_gbps() ? Gbps(r.busbw_gbps()) : "-", r.busbw_gbps()),
        NumCell(r.has_link_fraction() ? FormatShare(r.link_fraction()) : "-", r.link_fraction()),
        Escape(r.bytes_source()));
  }
  out += "</tbody></table></div>";
  const auto& top = s.collectives(0);
  out += fmt::format(
      "<p class=\"small muted\">Calls and time are summed over the GPUs that ran them; graph calls "
      "were launched by a CUDA graph. {}. Link: {}{}.</p>",
      Escape(top.busbw_formula()), Escape(top.link()),
      top.link_peak_gbps() > 0
          ? Escape(fmt::format(", {} per direction ({})", Gbps(top.link_peak_gbps()), top.link_source()))
          : "");
  return out;
}

std::string CopiesTable(const proto::Profile& p) {
  if (p.copies_size() == 0) return "";
  std::string out =
      "<h3>Copies and memsets</h3><div class=\"tablewrap\"><table class=\"sortable\" id=\"copies\">"
      "<thead><tr><th>kind</th><th>memory</th><th class=\"num\">calls</th><th class=\"num\">bytes"
      "</th><th class=\"num\">time</th><th class=\"num\">rate</th><th class=\"num\">of link</th>"
      "<th>link</th></tr></thead><tbody>";
  for (const auto& r : p.copies()) {
    out += fmt::format(
        "<tr data-kind=\"{}\" data-calls=\"{}\" data-bytes=\"{}\" data-ns=\"{}\"><td>{}</td><td>{}"
        "</td>{}{}{}{}{}<td class=\"small\">{}</td></tr>",
        Escape(r.kind()), r.calls(), r.bytes(), r.time_ns(), Escape(r.kind()),
        Escape(r.memory().empty() ? "-" : r.memory()),
        NumCell(std::to_string(r.calls()), static_cast<double>(r.calls())),
        NumCell(FormatBytes(static_cast<double>(r.bytes())), static_cast<double>(r.bytes())),
        NumCell(Ns(r.time_ns()), static_cast<double>(r.time_ns())),
        NumCell(r.has_gbps() ? Gbps(r.gbps()) : "-", r.gbps()),
        NumCell(r.has_link_fraction() ? FormatShare(r.link_fraction()) : "-", r.link_fraction()),
        Escape(r.link_peak_gbps() > 0 ? fmt::format("{} {} ({})", r.link(), Gbps(r.link_peak_gbps()),
                                                    r.link_source())
                                      : r.link()));
  }
  return out + "</tbody></table></div>";
}

std::string WaitsPart(const proto::Profile& p) {
  const proto::IdleSummary& s = p.idle();
  std::string out;
  if (!s.causes().empty()) {
    out += "<h3>Idle gaps by cause</h3><div class=\"tablewrap\"><table id=\"idle-causes\"><thead>"
           "<tr><th>cause</th><th class=\"num\">gaps</th><th class=\"num\">idle time</th><th "
           "class=\"num\">of idle</th></tr></thead><tbody>";
    for (const auto& r : s.causes()) {
      out += fmt::format("<tr data-cause=\"{}\" data-ns=\"{}\"><td>{}</td>{}{}{}</tr>",
                         Escape(r.cause()), r.time_ns(), Escape(r.cause()),
                         NumCell(std::to_string(r.gaps()), static_cast<double>(r.gaps())),
                         NumCell(Ns(r.time_ns()), static_cast<double>(r.time_ns())),
                         NumCell(FormatShare(r.share()), r.share()));
    }
    out += fmt::format("</tbody></table></div><p class=\"small muted\">{}</p>",
                       Escape(s.cause_rule()));
  }
  const proto::HostSummary& h = s.host();
  if (h.sync_calls() > 0) {
    std::string kinds;
    for (const auto& k : h.sync()) {
      kinds += fmt::format("{}<span data-sync=\"{}\" data-ns=\"{}\">{} {} x {}</span>",
                           kinds.empty() ? "" : ", ", Escape(k.kind()), k.time_ns(),
                           Escape(k.kind()), k.calls(), Ns(k.time_ns()));
    }
    out += fmt::format(
        "<p id=\"host-sync\" data-ns=\"{}\">The host sat {} in {} synchronising calls ({} of the "
        "GPU span summed over timelines): {}.</p>",
        h.sync_ns(), Ns(h.sync_ns()), h.sync_calls(), FormatShare(Of(h.sync_ns(), s.span_ns())),
        kinds);
  }
  return out;
}

}  // namespace

std::string CommSection(const proto::Profile& p) {
  const proto::CommSummary& s = p.comm();
  bool any_band = false;
  for (const auto& d : p.devices()) any_band |= d.band_span_ns() > 0;
  if (!any_band) return "";
  const std::string prov = s.provenance().empty() ? ProfileProvenance(p) : s.provenance();
  std::string out = fmt::format(
      "<section id=\"comm\"><h2>Communication, copies and waits, per GPU</h2>"
      "<p class=\"small muted\">One band per GPU, never summed across GPUs: compute kernels (those "
      "parts with communication running underneath in pink), communication no compute kernel "
      "hides, copies no kernel hides, and idle time; the parts add up to the span from the first "
      "kernel or copy to the last. {}</p>",
      Badge(BadgeKindFor(prov), prov));
  for (const auto& d : p.devices()) {
    if (d.band_span_ns() > 0) out += BandSvg(p, d);
  }
  out += BandLegend();
  if (s.total_ns() > 0) {
    out += fmt::format("<p id=\"comm-note\" data-total-ns=\"{}\" data-exposed-ns=\"{}\">{}</p>",
                       s.total_ns(), s.exposed_ns(), Escape(s.note()));
  }
  if (p.has_tp_diagnosis()) {
    out += fmt::format("<p id=\"tp-diagnosis\"><b>Tensor-parallel decode</b>: {} {}</p>",
                       Escape(p.tp_diagnosis().note()),
                       p.tp_diagnosis().what_if_speedup() > 0 ? Badge("modelled", "what-if modelled")
                                                              : "");
  }
  out += CollectivesTable(s);
  out += CopiesTable(p);
  out += WaitsPart(p);
  out += fmt::format("<p class=\"small muted\">{}</p>", Escape(s.rule()));
  return out + "</section>\n";
}

}  // namespace qprof::reports::html
