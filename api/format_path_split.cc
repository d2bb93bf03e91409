#include "api/format_path_split.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "fmt/core.h"
#include "fmt/format.h"

namespace qprof::api {
namespace {

absl::StatusOr<RatioSummary> Ratios(const std::vector<double>& num, const std::vector<double>& den) {
  RatioSummary r;
  for (size_t i = 0; i < num.size(); ++i) r.values.push_back(num[i] / den[i]);
  std::vector<double> sorted = r.values;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  r.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  r.min = sorted.front();
  r.max = sorted.back();
  return r;
}

absl::Status CheckSeries(const char* what, const std::vector<double>& v, size_t n) {
  if (v.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("format/path split: ", what, " has ", v.size(), " repetitions, not ", n));
  }
  for (double x : v) {
    if (!(x > 0) || !std::isfinite(x)) {
      return absl::InvalidArgumentError(
          absl::StrCat("format/path split: ", what, " has a tokens/s figure of ", x));
    }
  }
  return absl::OkStatus();
}

// Tokens/s of each repetition of one configuration: steady-state tokens over wall time, as
// the main run's summary line computes it.
absl::StatusOr<std::vector<double>> MeasureConfig(
    const std::vector<runtime::DecodeBackend*>& backends, runtime::RunOptions o,
    const std::string& format, const std::string& path, int repeats) {
  o.format = format;
  o.moe_backend = path;
  o.check = false;
  o.on_step = nullptr;
  o.on_progress = nullptr;
  ASSIGN_OR_RETURN(std::vector<runtime::RunResult> runs,
                   runtime::RunOnBackends(backends, o, std::vector<int>(repeats, o.batch)));
  std::vector<double> tps;
  for (const runtime::RunResult& r : runs) {
    const proto::RunInfo& run = r.trace.header().run();
    tps.push_back(run.wall_time_ns() > 0 ? run.tokens_generated() / (run.wall_time_ns() * 1e-9)
                                         : 0.0);
  }
  return tps;
}

std::string Range(const RatioSummary& r) {
  return fmt::format("{:.2f}x  [{:.2f}..{:.2f}]", r.median, r.min, r.max);
}

std::string JsonRatio(const RatioSummary& r) {
  return fmt::format(
      "{{\"values\": [{:.6g}], \"median\": {:.6g}, \"min\": {:.6g}, \"max\": {:.6g}, "
      "\"spread\": {:.6g}}}",
      fmt::join(r.values, ", "), r.median, r.min, r.max, r.spread());
}

std::string JsonList(const std::vector<double>& v) {
  return fmt::format("[{:.6g}]", fmt::join(v, ", "));
}

}  // namespace

absl::StatusOr<FormatPathSplit> SummariseSplit(const SplitSamples& samples) {
  const size_t n = samples.a_mx_on_pm.size();
  if (n == 0) return absl::InvalidArgumentError("format/path split: no repetitions");
  FormatPathSplit s;
  s.samples = samples;
  s.same_path = samples.mxfp4_path == samples.nvfp4_path;
  RETURN_IF_ERROR(CheckSeries("mxfp4 on its own path", samples.a_mx_on_pm, n));
  RETURN_IF_ERROR(CheckSeries("nvfp4 on its own path", samples.c_nv_on_pn, n));
  ASSIGN_OR_RETURN(s.as_run, Ratios(samples.c_nv_on_pn, samples.a_mx_on_pm));
  if (s.same_path) {
    if (!samples.b_mx_on_pn.empty()) {
      return absl::InvalidArgumentError(
          "format/path split: both formats use one path, so there is no cross configuration");
    }
    s.format_alone = s.as_run;
    return s;
  }
  RETURN_IF_ERROR(CheckSeries("mxfp4 on nvfp4's path", samples.b_mx_on_pn, n));
  ASSIGN_OR_RETURN(s.format_alone, Ratios(samples.c_nv_on_pn, samples.b_mx_on_pn));
  ASSIGN_OR_RETURN(s.path_alone, Ratios(samples.b_mx_on_pn, samples.a_mx_on_pm));
  return s;
}

absl::StatusOr<FormatPathSplit> MeasureFormatPathSplit(
    const std::vector<runtime::DecodeBackend*>& backends, const runtime::RunOptions& options,
    const std::string& mxfp4_path, const std::string& nvfp4_path, int repeats,
    const std::function<void(const std::string&)>& on_progress) {
  if (repeats < 1) return absl::InvalidArgumentError("format/path split: repeats must be >= 1");
  SplitSamples samples;
  samples.mxfp4_path = mxfp4_path;
  samples.nvfp4_path = nvfp4_path;
  auto measure = [&](const std::string& format, const std::string& path,
                     std::vector<double>* out) -> absl::Status {
    if (on_progress) {
      on_progress(fmt::format("split: {} on {}, {} repetitions ...", format, path, repeats));
    }
    ASSIGN_OR_RETURN(*out, MeasureConfig(backends, options, format, path, repeats));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(measure("mxfp4", mxfp4_path, &samples.a_mx_on_pm));
  if (mxfp4_path != nvfp4_path) RETURN_IF_ERROR(measure("mxfp4", nvfp4_path, &samples.b_mx_on_pn));
  RETURN_IF_ERROR(measure("nvfp4", nvfp4_path, &samples.c_nv_on_pn));
  ASSIGN_OR_RETURN(FormatPathSplit s, SummariseSplit(samples));
  s.batch = options.batch;
  s.where = options.backend == "cuda" ? "GPU, measured" : "host CPU, measured";
  return s;
}

std::string FormatSplitText(const FormatPathSplit& s) {
  const size_t n = s.as_run.values.size();
  std::string out = fmt::format(
      "nvfp4 / mxfp4 decode throughput, batch {} ({}; median [min..max] of {} repetitions, "
      "each ratio within one repetition):\n",
      s.batch, s.where, n);
  const std::string& pm = s.samples.mxfp4_path;
  const std::string& pn = s.samples.nvfp4_path;
  if (s.same_path) {
    out += fmt::format("  format alone (both on {})  {}\n", pn, Range(s.format_alone));
    out += "  (both formats select the same MoE path here, so there is no path effect to split)\n";
  } else {
    const std::string labels[3] = {fmt::format("as run (mxfp4 on {}, nvfp4 on {})", pm, pn),
                                   fmt::format("format alone (both on {})", pn),
                                   fmt::format("path alone (mxfp4: {} -> {})", pm, pn)};
    const RatioSummary* ratios[3] = {&s.as_run, &s.format_alone, &s.path_alone};
    size_t width = 0;
    for (const std::string& l : labels) width = std::max(width, l.size());
    for (int i = 0; i < 3; ++i) {
      out += fmt::format("  {:<{}}  {}\n", labels[i], width, Range(*ratios[i]));
    }
    out += "  (as run = format alone x path alone in each repetition; the sparse-MLA variant "
           "follows the MoE path under --mla-kernel auto)\n";
  }
  double worst = std::max({s.as_run.spread(), s.format_alone.spread(), s.path_alone.spread()});
  if (worst > kSplitSpreadWarning) {
    out += fmt::format(
        "  warning: the ratios vary by up to {:.0f}% between repetitions (above {:.0f}%): the "
        "machine is noisy; rerun with more --split-repeats or on an idle machine\n",
        100 * worst, 100 * kSplitSpreadWarning);
  }
  return out;
}

std::string FormatSplitJson(const FormatPathSplit& s) {
  std::string out = "{\n  \"schema_version\": 1,\n";
  out += fmt::format("  \"provenance\": \"measured\",\n  \"where\": \"{}\",\n  \"batch\": {},\n",
                     s.where, s.batch);
  out += fmt::format("  \"repetitions\": {},\n", s.as_run.values.size());
  out += fmt::format("  \"mxfp4_path\": \"{}\",\n  \"nvfp4_path\": \"{}\",\n",
                     s.samples.mxfp4_path, s.samples.nvfp4_path);
  out += fmt::format("  \"same_path\": {},\n", s.same_path ? "true" : "false");
  out += "  \"tokens_per_s\": {\n";
  out += fmt::format("    \"mxfp4_on_mxfp4_path\": {},\n", JsonList(s.samples.a_mx_on_pm));
  if (!s.same_path) {
    out += fmt::format("    \"mxfp4_on_nvfp4_path\": {},\n", JsonList(s.samples.b_mx_on_pn));
  }
  out += fmt::format("    \"nvfp4_on_nvfp4_path\": {}\n  }},\n", JsonList(s.samples.c_nv_on_pn));
  out += fmt::format("  \"as_run\": {},\n", JsonRatio(s.as_run));
  out += fmt::format("  \"format_alone\": {}", JsonRatio(s.format_alone));
  if (!s.same_path) out += fmt::format(",\n  \"path_alone\": {}", JsonRatio(s.path_alone));
  out += fmt::format(",\n  \"spread_warning_above\": {}\n}}\n", kSplitSpreadWarning);
  return out;
}

}  // namespace qprof::api
