// Sentences that explain what the ceilings charts could seem to contradict: the legend's
// solid/dashed code, and why rooflines and runs rank MXFP4 and NVFP4 differently.
#include <map>
#include <string>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/html/profile_sections.h"

namespace qprof::reports::html {
namespace {

// tok/s of the roofline bars by format ("roofline nvfp4 on H200" -> nvfp4).
std::map<std::string, const CeilingBar*> Rooflines(const std::vector<CeilingBar>& bars) {
  std::map<std::string, const CeilingBar*> out;
  for (const auto& b : bars) {
    if (b.kind != "run-format" && b.kind != "other-format") continue;
    if (b.label.rfind("roofline ", 0) != 0) continue;
    const size_t end = b.label.find(' ', 9);
    out.emplace(b.label.substr(9, end == std::string::npos ? std::string::npos : end - 9), &b);
  }
  return out;
}

}  // namespace

std::string BarLegendText(bool all_modelled) {
  return all_modelled
             ? "Every bar is modelled or computed from the model: dashed, the run's own bar "
               "purple"
             : "Solid bar: measured; dashed: computed from the measurement (Amdahl) or "
               "modelled (rooflines; a modelled run's bar is also purple)";
}

std::string RooflineRankingNote(const std::vector<CeilingBar>& bars) {
  const auto roofs = Rooflines(bars);
  auto mx = roofs.find("mxfp4"), nv = roofs.find("nvfp4");
  if (mx == roofs.end() || nv == roofs.end()) return "";
  if (mx->second->tokens_per_s <= nv->second->tokens_per_s) return "";
  return fmt::format(
      "Why the rooflines rank MXFP4 ({}) above NVFP4 ({}): a roofline is each format's best "
      "case on the device, both on the pipe the device offers; decode is memory-bound, so the "
      "format with fewer bits per weight wins (MXFP4 4.25, NVFP4 4.5 with their scales). A run "
      "(measured, or modelled with kernel paths) ranks the formats by the kernel each is "
      "routed to: MXFP4 to the SIMT slot GEMV, NVFP4 to a tensor-core path, which is why a run "
      "can rank NVFP4 first. The distance between the two rankings is what the kernel path "
      "costs, not the format's bytes.",
      FormatTokensPerS(mx->second->tokens_per_s), FormatTokensPerS(nv->second->tokens_per_s));
}

std::string ModelRankingNote(const std::string& a_format, double a_tps,
                             const std::string& b_format, double b_tps) {
  double mx = 0, nv = 0;
  for (const auto& [f, t] : {std::pair{a_format, a_tps}, std::pair{b_format, b_tps}}) {
    if (f == "mxfp4") mx = t;
    if (f == "nvfp4") nv = t;
  }
  if (mx <= 0 || nv <= 0 || nv <= mx) return "";
  return fmt::format(
      "This projection follows each format's kernel path (MXFP4 to the SIMT slot GEMV, NVFP4 "
      "to tensor cores), so NVFP4 ranks first ({} vs {}). The rooflines under Ceilings assume "
      "each format's best pipe and can rank MXFP4 first by its fewer bits per weight (4.25 vs "
      "4.5): both are right about different questions.",
      FormatTokensPerS(nv), FormatTokensPerS(mx));
}

}  // namespace qprof::reports::html
