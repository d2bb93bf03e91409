#include "reports/html/profile_sections.h"

#include <algorithm>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/html/html_util.h"
#include "reports/html/launch_sections.h"

namespace qprof::reports::html {
namespace {

std::string EvidenceCell(const std::string& evidence, const std::string& detail) {
  const std::string e = evidence.empty() ? "unknown" : evidence;
  static const char* kWords[][2] = {{"measured", "measured"},  {"sass", "static SASS"},
                                    {"registry", "registry"},  {"name_rule", "name rule"},
                                    {"launch_context", "launch context"},
                                    {"work_rate", "rate above the CUDA-core roof"},
                                    {"modelled", "modelled"},  {"unknown", "unknown"}};
  std::string word = e;
  for (const auto& w : kWords)
    if (e == w[0]) word = w[1];
  return fmt::format("<td class=\"ev\" data-sort=\"{}\">{}{}</td>", Escape(e),
                     Badge(e, word, detail),
                     detail.empty() ? "" : "<div class=\"small muted evd\" tabindex=\"0\" title=\"" +
                                               Escape(detail) + "\">" + Escape(detail) +
                                               "</div>");
}

double MeasuredTps(const proto::Profile& p) {
  return p.ceilings().measured_tokens_per_s() > 0 ? p.ceilings().measured_tokens_per_s()
                                                  : p.totals().tokens_per_s();
}

}  // namespace

std::string ProvenanceBanner(const proto::Profile& p) {
  const std::string prov = ProfileProvenance(p);
  if (prov.find("host CPU") != std::string::npos) {
    return "<div class=\"banner host\" id=\"provenance-banner\"><b>Measured on the host CPU, "
           "not on a GPU.</b> This run used the CPU backend because no GPU was available: the "
           "times show where the CPU reference kernels spend time. They are not GPU times; the "
           "SIMT/tensor classes say which GPU pipe each kernel would use, and the format "
           "ceilings below are modelled GPU projections.</div>\n";
  }
  if (p.provenance() == proto::PROVENANCE_IMPORTED) {
    return "<div class=\"banner imported\" id=\"provenance-banner\"><b>Imported.</b> Times were "
           "recorded by another tool and read from " +
           Escape(prov.substr(std::min(prov.size(), sizeof("imported from ") - 1))) +
           ".</div>\n";
  }
  if (p.provenance() == proto::PROVENANCE_MODELLED) {
    return "<div class=\"banner modelled\" id=\"provenance-banner\"><b>Modelled, not "
           "measured.</b> Every time in this report comes from a model of the workload and the "
           "device spec table; see the notes at the end for its assumptions.</div>\n";
  }
  return "";
}

namespace {

// The roles table: each role expanding into its kernels.
std::string RolesTable(const proto::Profile& p, const std::string& id_prefix) {
  std::string out = fmt::format(
      "<h3>Roles</h3><div class=\"tablewrap\"><table class=\"sortable\" id=\"{}roles\"><thead>"
      "<tr><th>role <span class=\"small muted\">(open for its kernels)</span></th><th>class"
      "</th><th class=\"num\">time</th><th class=\"num\">share</th>"
      "<th class=\"num\">calls</th><th class=\"num\">if it vanished</th><th>role decided by"
      "</th></tr></thead><tbody>",
      id_prefix);
  for (const auto& r : p.roles()) {
    const double amdahl = r.share() < 1 ? 1.0 / (1.0 - r.share()) : 0;
    out += fmt::format("<tr data-role=\"{}\" data-time-ns=\"{}\">{}<td>{}</td>{}{}{}{}"
                       "<td class=\"small\">{}</td></tr>",
                       Escape(r.role()), r.time_ns(), RoleCellWithKernels(p, r),
                       ClassPill(r.class_()),
                       NumCell(FormatNs(static_cast<double>(r.time_ns())),
                               static_cast<double>(r.time_ns())),
                       ShareCell(r.share(), r.class_()),
                       NumCell(std::to_string(r.calls()), static_cast<double>(r.calls())),
                       NumCell(amdahl > 0 ? FormatRatio(amdahl) : "inf", amdahl),
                       Escape(RoleEvidenceText(r)));
  }
  return out + "</tbody></table></div>";
}

// One row of the kernels table. The name cell holds the launch (shape, occupancy, the
// flag; the rest one click away) under the name, so the table fits the page; it sorts by
// the name.
std::string KernelRowHtml(const proto::KernelRow& k, int rank, bool any_tc, bool any_bw) {
  std::string out = fmt::format(
      "<tr data-class=\"{}\" data-time-ns=\"{}\" data-share=\"{}\"{}>{}<td class=\"kname\" "
      "data-sort=\"{}\"><div class=\"kn\" tabindex=\"0\"{}>{}</div>{}</td><td class=\"role\">{}"
      "</td><td>{}</td><td>{}</td>{}{}{}{}",
      Escape(k.class_()), k.time_ns(), Num(k.share(), 6),
      k.has_tensor_pipe_pct() ? fmt::format(" data-tensor-pipe-pct=\"{}\"",
                                            Num(k.tensor_pipe_pct(), 3))
                              : "",
      NumCell(std::to_string(rank), rank), Escape(k.name()), html::RawNameAttrs(k.raw_name()),
      Escape(k.name()), KernelLaunchLines(k), Escape(k.role()), ClassPill(k.class_()),
      Escape(k.format().empty() ? "unknown" : k.format()),
      NumCell(FormatNs(static_cast<double>(k.time_ns())), static_cast<double>(k.time_ns())),
      ShareCell(k.share(), k.class_()),
      NumCell(std::to_string(k.calls()), static_cast<double>(k.calls())),
      NumCell(FormatNs(static_cast<double>(k.mean_ns())), static_cast<double>(k.mean_ns())));
  if (any_tc) {
    out += k.has_tensor_pipe_pct()
               ? NumCell(fmt::format("{:.1f}%", k.tensor_pipe_pct()), k.tensor_pipe_pct())
               : "<td class=\"num muted\" data-sort=\"-1\" title=\"not measured\">-</td>";
  }
  if (any_bw) {
    out += k.has_achieved_gbps()
               ? fmt::format("<td class=\"num\" data-sort=\"{}\" title=\"work model: {}\">{} "
                             "GB/s{}</td>",
                             Num(k.achieved_gbps(), 3), Escape(k.work_source()),
                             FormatSig3(k.achieved_gbps()),
                             k.has_achieved_tflops()
                                 ? fmt::format("<div class=\"small muted\">{} TFLOP/s</div>",
                                               FormatSig3(k.achieved_tflops()))
                                 : "")
               : "<td class=\"num muted\" data-sort=\"-1\">-</td>";
  }
  return out + EvidenceCell(k.evidence(), k.evidence_detail()) + "</tr>";
}

// The kernels table with its filter controls, and the note on tensor-pipe figures.
std::string KernelsTable(const proto::Profile& p, const std::string& id_prefix) {
  bool any_tc = false, any_bw = false;
  for (const auto& k : p.kernels()) {
    any_tc |= k.has_tensor_pipe_pct();
    any_bw |= k.has_achieved_gbps();
  }
  const std::string table_id = id_prefix + "kernels";
  std::string out = fmt::format(
      "<h3>Kernels</h3><div class=\"controls\"><label>Filter <input type=\"search\" "
      "data-filter-table=\"{0}\" placeholder=\"name, role, format...\" aria-label=\"Filter "
      "kernels\"></label><label>Class <select data-filter-table=\"{0}\" aria-label=\"Filter by "
      "class\"><option value=\"\">all</option>",
      table_id);
  for (const auto& c : ClassOrder()) out += fmt::format("<option>{}</option>", c);
  out += fmt::format("</select></label><span class=\"small muted\" data-count-for=\"{}\">{} "
                     "kernels</span></div>",
                     table_id, p.kernels_size());
  out += fmt::format(
      "<div class=\"tablewrap\"><table class=\"sortable fit\" id=\"{}\"><thead><tr>"
      "<th class=\"num\">#</th><th title=\"the launch that takes most of the time under each "
      "name: grid x block, theoretical / estimated occupancy and waves (time-weighted); open "
      "it for the rest\">kernel <span class=\"small muted\">(and launch)</span></th>"
      "<th>role</th><th>class</th><th>format</th><th class=\"num\">time</th>"
      "<th class=\"num\">share</th><th class=\"num\">calls</th><th class=\"num\">mean</th>{}{}"
      "<th>evidence</th></tr></thead><tbody>",
      table_id, any_tc ? "<th class=\"num\">tensor pipe</th>" : "",
      any_bw ? "<th class=\"num\">achieved</th>" : "");
  for (int i = 0; i < p.kernels_size(); ++i) {
    out += KernelRowHtml(p.kernels(i), i + 1, any_tc, any_bw);
  }
  out += "</tbody></table></div>";
  if (!any_tc) {
    std::string why = p.collector().metrics_unavailable_reason();
    out += fmt::format(
        "<p class=\"small muted\" id=\"{}no-tensor-pipe\">Tensor-pipe utilisation was not "
        "measured{}{}; classes come from the evidence shown per kernel.</p>",
        id_prefix, why.empty() ? "" : ": ", Escape(why));
  } else {
    out += "<p class=\"small muted\">Tensor pipe = measured tensor-pipe active cycles "
           "(sm__pipe_tensor_cycles_active) of the kernel's elapsed cycles; - where not "
           "measured.</p>";
  }
  return out;
}

}  // namespace

std::string BottleneckSection(const proto::Profile& p, const std::string& id_prefix) {
  const std::string prov = ProfileProvenance(p);
  std::string out = fmt::format("<section id=\"{}bottlenecks\"><h2>Bottlenecks</h2>", id_prefix);
  out += fmt::format(
      "<p class=\"small muted\">Times {}. \"If it vanished\" is Amdahl's bound: removing a share "
      "f of the time speeds decode up by at most 1/(1-f).</p>",
      Badge(BadgeKindFor(prov), prov));
  out += RolesTable(p, id_prefix);
  out += KernelsTable(p, id_prefix);
  return out + "</section>\n";
}

std::vector<CeilingBar> CeilingBars(const proto::Profile& p) {
  std::vector<CeilingBar> bars;
  const auto& ce = p.ceilings();
  const double measured = MeasuredTps(p);
  const std::string prov = ProfileProvenance(p);
  if (measured > 0) {
    const std::string word = ThroughputWord(p);  // "modelled" for a modelled profile
    bars.push_back({word + " (" + (p.run().format().empty() ? p.label() : p.run().format()) +
                        ")",
                    measured, "measured", "tokens / wall time",
                    fmt::format("{} tokens in {}", p.totals().tokens(),
                                FormatNs(static_cast<double>(p.totals().wall_time_ns()))),
                    prov});
    // Amdahl for the largest role.
    const proto::AmdahlRow* top = nullptr;
    for (const auto& a : ce.amdahl()) {
      if (a.scope() == "role" && (!top || a.share() > top->share())) top = &a;
    }
    proto::AmdahlRow computed;
    if (top == nullptr && p.roles_size() > 0 && p.roles(0).share() < 1) {
      // 1 / (1 - f): the time left when the role's share f disappears entirely.
      computed.set_scope("role");
      computed.set_name(p.roles(0).role());
      computed.set_share(p.roles(0).share());
      computed.set_speedup_if_vanished(1.0 / (1.0 - p.roles(0).share()));
      computed.set_formula("1 / (1 - f)");
      top = &computed;
    }
    if (top != nullptr) {
      bars.push_back({"Amdahl: " + top->name() + " vanished", measured * top->speedup_if_vanished(),
                      "amdahl", word + " x 1 / (1 - f)",
                      fmt::format("f = {} ({} share of kernel time); 1/(1-f) = {}",
                                  FormatShare(top->share()), top->name(),
                                  FormatRatio(top->speedup_if_vanished())),
                      "computed from the " + word + " shares"});
      if (top->has_speedup_at_roofline()) {
        bars.push_back({top->name() + " at its roofline", measured * top->speedup_at_roofline(),
                        "amdahl", word + " x T / (T - t + t_roof)",
                        fmt::format("t = {} share, t_roof = {}", FormatShare(top->share()),
                                    top->has_roofline_time_ns()
                                        ? FormatNs(top->roofline_time_ns())
                                        : std::string("n/a")),
                        "modelled roofline time"});
      }
    }
  }
  // Format ceilings on the profiled device (or the first device listed when none is marked).
  std::string device;
  for (const auto& f : ce.formats())
    if (f.is_profiled_device()) device = f.device();
  if (device.empty() && ce.formats_size() > 0) device = ce.formats(0).device();
  std::vector<const proto::FormatCeiling*> run, other;
  for (const auto& f : ce.formats()) {
    if (f.device() != device) continue;
    (f.is_run_format() ? run : other).push_back(&f);
  }
  auto add = [&](const proto::FormatCeiling* f, const std::string& kind) {
    bars.push_back(
        {fmt::format("roofline {} on {}", f->format(), Ellipsize(f->device(), 22)),
         f->tokens_per_s(), kind,
         f->formula().empty() ? "B / max(bytes / BW, FLOPs / rate)" : f->formula(),
         fmt::format("B = {}; {} bytes/step at {} bits/weight; {} FLOPs/step on {}; {}-bound{}",
                     f->batch(), FormatBytes(f->bytes_per_step()), Num(f->bits_per_weight(), 2),
                     FormatFlops(f->flops_per_step()), f->pipe(), f->bound(),
                     f->inputs().empty() ? "" : "; " + f->inputs()),
         f->provenance().empty() ? "modelled" : f->provenance()});
  };
  for (const auto* f : run) add(f, "run-format");
  for (const auto* f : other) add(f, "other-format");
  return bars;
}

std::string CeilingsSection(const proto::Profile& p, const std::string& id_prefix) {
  const auto& ce = p.ceilings();
  std::string out = fmt::format("<section id=\"{}ceilings\"><h2>Ceilings</h2>", id_prefix);
  const auto bars = CeilingBars(p);
  if (bars.empty() && ce.amdahl_size() == 0 && ce.formats_size() == 0) {
    return out + "<p class=\"muted\">No ceilings: the input has neither tokens/s nor a work "
                 "model to compute them from.</p></section>\n";
  }
  if (bars.empty()) {
    // The Amdahl bounds below need only the shares; the tok/s chart needs a throughput.
    out += fmt::format("<p class=\"small muted\" id=\"{}ceilings-legend\">No tok/s chart: the "
                       "input has neither tokens/s nor a work model. The Amdahl bounds below "
                       "come from the shares of kernel time alone.</p>",
                       id_prefix);
  } else {
    const std::string word = ThroughputWord(p);  // "modelled" for a modelled profile
    out += fmt::format("<p class=\"small muted\" id=\"{}ceilings-legend\">From what was {} to "
                       "what each format allows. {} (hover a bar for its inputs).</p>",
                       id_prefix, word, html::BarLegendText(word == "modelled"));
    out += "<div class=\"tablewrap\">" + WaterfallSvg(bars, id_prefix + "waterfall") + "</div>";
    if (std::string why = RooflineRankingNote(bars); !why.empty()) {
      out += "<p class=\"small\" id=\"" + id_prefix + "roofline-why\">" + Escape(why) + "</p>";
    }
    out += fmt::format(
        "<div class=\"tablewrap\"><table id=\"{}ceiling-steps\"><thead><tr><th>bar</th>"
        "<th class=\"num\">tok/s</th><th>formula</th><th>inputs</th><th>provenance</th></tr>"
        "</thead><tbody>",
        id_prefix);
    for (const auto& b : bars) {
      out += fmt::format("<tr data-kind=\"{}\"><td>{}</td>{}<td class=\"formula\">{}</td><td "
                         "class=\"small\">{}</td><td>{}</td></tr>",
                         Escape(b.kind), Escape(b.label),
                         NumCell(FormatSig3(b.tokens_per_s), b.tokens_per_s, 3),
                         Escape(b.formula), Escape(b.inputs),
                         Badge(BadgeKindFor(b.provenance), b.provenance));
    }
    out += "</tbody></table></div>";
  }
  if (ce.amdahl_size() > 0) {
    // The "at roofline" column only when some row has a roofline time.
    bool at_roof = false;
    for (const auto& a : ce.amdahl()) at_roof |= a.has_speedup_at_roofline();
    out += fmt::format(
        "<h3>Amdahl</h3><div class=\"tablewrap\"><table class=\"sortable\"><thead><tr>"
        "<th>scope</th><th>name</th><th class=\"num\">share f</th><th class=\"num\">1/(1-f)"
        "</th>{}<th>formula</th></tr></thead><tbody>",
        at_roof ? "<th class=\"num\">at roofline</th>" : "");
    for (const auto& a : ce.amdahl()) {
      std::string roof;
      if (at_roof) {
        roof = a.has_speedup_at_roofline()
                   ? NumCell(FormatRatio(a.speedup_at_roofline()), a.speedup_at_roofline())
                   : "<td class=\"num muted\" data-sort=\"-1\">-</td>";
      }
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td>{}{}{}<td class=\"formula\">{}</td></tr>",
          Escape(a.scope()), Escape(a.name()), ShareCell(a.share(), ""),
          a.share() < 1 ? NumCell(FormatRatio(a.speedup_if_vanished()), a.speedup_if_vanished())
                        : "<td class=\"num\">inf</td>",
          roof, Escape(a.formula()));
    }
    out += "</tbody></table></div>";
  }
  if (ce.formats_size() > 0) {
    out += fmt::format(
        "<h3>Format ceilings per device</h3><p class=\"small muted\">tok/s = B / max(bytes / "
        "bandwidth, FLOPs / pipe rate), from the device spec table (sources in the inputs "
        "column). {}</p>",
        Badge("modelled", "modelled"));
    out += fmt::format(
        "<div class=\"tablewrap\"><table class=\"sortable\" id=\"{}format-ceilings\"><thead><tr>"
        "<th>device</th><th>format</th><th class=\"num\">bits/weight</th><th>pipe</th>"
        "<th class=\"num\">bytes/step</th><th class=\"num\">FLOPs/step</th>"
        "<th class=\"num\">memory</th><th class=\"num\">compute</th><th>bound</th>"
        "<th class=\"num\">tok/s</th><th>inputs</th></tr></thead><tbody>",
        id_prefix);
    for (const auto& f : ce.formats()) {
      const bool here = f.is_profiled_device() && f.is_run_format();
      out += fmt::format(
          "<tr data-device=\"{}\" data-format=\"{}\" data-tokens-per-s=\"{}\"{}><td>{}{}</td>"
          "<td>{}</td>{}<td>{}</td>{}{}{}{}<td>{}</td>{}<td class=\"small\">{}</td></tr>",
          Escape(f.device()), Escape(f.format()), Num(f.tokens_per_s(), 3),
          here ? " class=\"new\"" : "", Escape(f.device()),
          here ? " <span class=\"small muted\">(this run)</span>" : "", Escape(f.format()),
          NumCell(Num(f.bits_per_weight(), 2), f.bits_per_weight()), Escape(f.pipe()),
          NumCell(FormatBytes(f.bytes_per_step()), f.bytes_per_step()),
          NumCell(FormatFlops(f.flops_per_step()), f.flops_per_step()),
          NumCell(FormatNs(f.memory_time_ns()), f.memory_time_ns()),
          NumCell(FormatNs(f.compute_time_ns()), f.compute_time_ns()), Escape(f.bound()),
          NumCell(FormatSig3(f.tokens_per_s()), f.tokens_per_s(), 3),
          Escape(f.inputs() + (f.provenance().empty() ? "" : " (" + f.provenance() + ")")));
    }
    out += "</tbody></table></div>";
  }
  if (!ce.notes().empty()) out += "<p class=\"small\">" + Escape(ce.notes()) + "</p>";
  out += "</section>\n";
  return out;
}

std::string WarningsSection(const proto::Profile& p) {
  std::string out = "<section id=\"warnings\"><h2>Warnings and provenance</h2>";
  const auto& col = p.collector();
  std::vector<std::string> items;
  for (const auto& w : p.warnings()) {
    items.push_back(fmt::format("<li data-code=\"{}\"><code>{}</code> {}</li>", Escape(w.code()),
                                Escape(w.code()), Escape(w.message())));
  }
  if (col.records_dropped() > 0 &&
      std::none_of(p.warnings().begin(), p.warnings().end(),
                   [](const auto& w) { return w.code() == "records_dropped"; })) {
    items.push_back(fmt::format("<li data-code=\"records_dropped\"><code>records_dropped</code> "
                                "{} activity records were dropped by the collector.</li>",
                                col.records_dropped()));
  }
  if (items.empty()) {
    out += "<p id=\"no-warnings\">No warnings: no records dropped, every kernel attributed.</p>";
  } else {
    out += "<ul class=\"warn\" id=\"warning-list\">";
    for (const auto& i : items) out += i;
    out += "</ul>";
  }
  out += "<div class=\"grid2\"><div><h3>Collector</h3><table><tbody>";
  auto row = [&](const std::string& k, const std::string& v) {
    out += fmt::format("<tr><td>{}</td><td>{}</td></tr>", Escape(k), Escape(v));
  };
  row("collector", col.collector().empty() ? "not recorded" : col.collector());
  row("records", fmt::format("{} total, {} dropped, {} invalid", col.records_total(),
                             col.records_dropped(), col.records_invalid()));
  row("metrics", !col.metrics_requested() ? "not requested"
                 : col.metrics_available()
                     ? "available"
                     : "unavailable" + (col.metrics_unavailable_reason().empty()
                                            ? std::string()
                                            : ": " + col.metrics_unavailable_reason()));
  if (col.overhead_ns() > 0) row("collector overhead", FormatNs(col.overhead_ns()));
  out += "</tbody></table></div><div><h3>Sources</h3><table><thead><tr><th>file</th><th>kind"
         "</th><th>provenance</th><th class=\"num\">kernels</th></tr></thead><tbody>";
  for (const auto& s : p.sources()) {
    out += fmt::format("<tr><td class=\"kname\">{}{}</td><td>{}</td><td>{}</td>{}</tr>",
                       Escape(s.path()), s.truncated() ? " (truncated)" : "", Escape(s.kind()),
                       Badge(BadgeKindFor(s.provenance()), s.provenance()),
                       NumCell(std::to_string(s.kernel_count()),
                               static_cast<double>(s.kernel_count())));
  }
  out += "</tbody></table></div></div>";
  if (p.unknown_kernels_size() > 0) {
    out += fmt::format("<h3>Kernels no rule could attribute ({})</h3><ul>",
                       p.unknown_kernels_size());
    for (int i = 0; i < p.unknown_kernels_size() && i < 50; ++i) {
      out += "<li><code>" + Escape(p.unknown_kernels(i)) + "</code></li>";
    }
    if (p.unknown_kernels_size() > 50) {
      out += fmt::format("<li>... and {} more (see the JSON)</li>", p.unknown_kernels_size() - 50);
    }
    out += "</ul>";
  }
  if (p.notes_size() > 0) {
    out += "<h3>Notes</h3><ul>";
    for (const auto& n : p.notes()) out += "<li>" + Escape(n) + "</li>";
    out += "</ul>";
  }
  out += "</section>\n";
  return out;
}

}  // namespace qprof::reports::html
