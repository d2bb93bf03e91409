#include "api/run_reports.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "analysis/diff/diff.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "api/inputs.h"
#include "fmt/core.h"
#include "proto/trace_io.h"
#include "reports/common/format.h"
#include "reports/html/html_report.h"
#include "reports/json/json_report.h"
#include "reports/perfetto/perfetto_export.h"

namespace qprof::api {
namespace {

std::string Join(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

// "/a/b/mxfp4.model-rtx-pro-6000.qtrace" -> "mxfp4.model-rtx-pro-6000".
std::string Stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') == std::string::npos
                                     ? 0
                                     : path.find_last_of('/') + 1);
  const std::string ext = ".qtrace";
  if (base.size() > ext.size() && base.compare(base.size() - ext.size(), ext.size(), ext) == 0) {
    base.resize(base.size() - ext.size());
  }
  return base;
}

using StageFn = std::function<void(const std::string&)>;

struct Written {
  proto::Profile profile;
  std::vector<std::string> files;
};

absl::StatusOr<Written> AnalyzeAndWrite(const proto::Trace& trace, const std::string& label,
                                        const std::string& stem, const std::string& out_dir,
                                        const std::string& device, const StageFn& stage) {
  AnalyzeOptions options;
  options.known_kernels = RegistryKnownKernels();
  options.label = label;
  options.device = device;
  if (stage) stage(absl::StrCat("analysing ", stem, " ..."));
  ASSIGN_OR_RETURN(proto::Profile profile, Analyze({trace}, options));
  Written w;
  const std::string json = Join(out_dir, stem + ".json");
  const std::string html = Join(out_dir, stem + ".html");
  const std::string perfetto = Join(out_dir, stem + ".perfetto.json");
  RETURN_IF_ERROR(reports::WriteProfileJson(profile, json));
  reports::HtmlOptions hopt;
  hopt.links = {{stem + ".json", stem + ".json"},
                {stem + ".perfetto.json", stem + ".perfetto.json"},
                {"diff.html", "diff.html"}};
  RETURN_IF_ERROR(reports::WriteProfileHtml(profile, html, hopt));
  RETURN_IF_ERROR(reports::WritePerfettoJson(trace, perfetto));
  w.files = {json, html, perfetto};
  w.profile = std::move(profile);
  return w;
}

}  // namespace

absl::StatusOr<std::string> WriteRunReports(const std::vector<FormatRunOutput>& runs,
                                            const std::vector<std::string>& projection_traces,
                                            const std::string& out_dir,
                                            const std::string& ceiling_device,
                                            const StageFn& stage) {
  std::vector<Written> measured;
  for (const FormatRunOutput& r : runs) {
    ASSIGN_OR_RETURN(Written w,
                     AnalyzeAndWrite(r.trace, r.format, r.format, out_dir, ceiling_device, stage));
    measured.push_back(std::move(w));
  }
  // The modelled projection (host runs only): analysed and written like the measured runs.
  std::vector<Written> modelled;
  for (const std::string& path : projection_traces) {
    ASSIGN_OR_RETURN(proto::Trace t, ReadTrace(path));
    const std::string stem = Stem(path);
    ASSIGN_OR_RETURN(Written w, AnalyzeAndWrite(t, stem.substr(0, stem.find('.')), stem,
                                                out_dir, "", stage));
    modelled.push_back(std::move(w));
  }
  std::vector<std::string> diff_files;
  proto::Diff diff, model_diff;
  const bool have_diff = measured.size() == 2;
  const bool have_model_diff = modelled.size() == 2;
  if (have_model_diff) {
    model_diff = diff::DiffProfiles(modelled[0].profile, modelled[1].profile);
    const std::string stem = "diff." + Stem(projection_traces[0]).substr(
                                           Stem(projection_traces[0]).find('.') + 1);
    RETURN_IF_ERROR(reports::WriteDiffJson(model_diff, Join(out_dir, stem + ".json")));
    reports::DiffHtmlInputs in{&modelled[0].profile, &modelled[1].profile};
    RETURN_IF_ERROR(reports::WriteDiffHtml(model_diff, Join(out_dir, stem + ".html"), in));
    diff_files.push_back(Join(out_dir, stem + ".json"));
    diff_files.push_back(Join(out_dir, stem + ".html"));
  }
  if (have_diff) {
    if (stage) stage("writing the diff ...");
    diff = diff::DiffProfiles(measured[0].profile, measured[1].profile);
    RETURN_IF_ERROR(reports::WriteDiffJson(diff, Join(out_dir, "diff.json")));
    reports::DiffHtmlInputs in{&measured[0].profile, &measured[1].profile};
    if (have_model_diff) in.projection = &model_diff;
    reports::HtmlOptions hopt;
    hopt.links = {{"diff.json", "diff.json"}};
    for (const auto& r : runs) hopt.links.push_back({r.format + ".html", r.format + ".html"});
    RETURN_IF_ERROR(reports::WriteDiffHtml(diff, Join(out_dir, "diff.html"), in, hopt));
    diff_files.insert(diff_files.begin(), {Join(out_dir, "diff.json"), Join(out_dir, "diff.html")});
  }
  std::string text;
  // Where the files are, one line per stem: "mxfp4.{qtrace,json,html,perfetto.json}".
  text += fmt::format("\nReports in {}/\n", out_dir);
  for (const auto& r : runs) {
    text += fmt::format("  {}.{{qtrace,json,html,perfetto.json}}\n", Stem(r.trace_path));
  }
  for (const auto& path : projection_traces) {
    text += fmt::format("  {}.{{qtrace,json,html,perfetto.json}}  (modelled)\n", Stem(path));
  }
  for (size_t i = 0; i < diff_files.size(); i += 2) {
    const std::string& json = diff_files[i];
    const std::string stem = json.substr(out_dir.size() + 1, json.size() - out_dir.size() - 6);
    text += fmt::format("  {}.{{json,html}}{}\n", stem, i == 0 && have_diff ? "  <- start here" : "");
  }
  if (have_diff) {
    const bool host = diff.a().provenance().find("host") != std::string::npos;
    const bool modelled = diff.a().provenance().rfind("modelled", 0) == 0;
    text += fmt::format("\nDiff ({} vs {}{}):\n", diff.a().label(), diff.b().label(),
               host       ? ", times measured on the host CPU, not a GPU"
               : modelled ? std::string(", modelled (not measured)")
                          : "");
    for (const auto& line : reports::DiffHeadlines(diff)) text += fmt::format("  > {}\n", line);
    if (have_model_diff) {
      text += fmt::format("Modelled on {} (a projection, not a measurement):\n",
                 model_diff.a().device());
      for (const auto& line : reports::DiffHeadlines(model_diff)) {
        text += fmt::format("  > {}\n", line);
      }
    }
    text += fmt::format("Open {} in a browser.\n", Join(out_dir, "diff.html"));
  } else if (!runs.empty()) {
    text += fmt::format("Open {} in a browser.\n", Join(out_dir, Stem(runs[0].trace_path) + ".html"));
  }
  return text;
}

}  // namespace qprof::api
