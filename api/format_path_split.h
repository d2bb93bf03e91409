// The main job's headline, split: how much of "nvfp4 / mxfp4 decode throughput" comes from
// the format and how much from the MoE kernel path each format selects.
//
// `--moe-backend auto` gives each format its own path (mxfp4 -> slot_gemv, nvfp4 ->
// w4a16_mma or fp4_mma; kernels/registry/entries_moe.cc), so the plain ratio mixes two
// effects. Three configurations separate them on the same weights seed and workload:
//   A = mxfp4 on mxfp4's path (Pm), B = mxfp4 on nvfp4's path (Pn), C = nvfp4 on Pn;
//   as run       C / A   (format plus the path it selects: what the user gets)
//   format alone C / B   (same path, only the weight format differs)
//   path alone   B / A   (same format, only the path differs)
// so as run = format alone x path alone within each repetition, exactly. Each
// configuration is measured `repeats` times and every ratio is taken within one repetition,
// then summarised by its median and range: one run on a shared machine is not a result
// (three runs once gave 1.73x, 1.95x and 1.89x).
//
// When both formats select the same path only "format alone" exists; the split says so.
#ifndef QPROF_API_FORMAT_PATH_SPLIT_H_
#define QPROF_API_FORMAT_PATH_SPLIT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/decode_backend.h"
#include "runtime/run.h"

namespace qprof::api {

// Median and range of one ratio over the repetitions.
struct RatioSummary {
  std::vector<double> values;  // one per repetition, in order
  double median = 0, min = 0, max = 0;
  // (max - min) / median: the spread the warning is about.
  double spread() const { return median > 0 ? (max - min) / median : 0; }
};

// Tokens/s of each configuration in each repetition (the input of the split).
struct SplitSamples {
  std::string mxfp4_path, nvfp4_path;      // Pm, Pn
  std::vector<double> a_mx_on_pm;          // per repetition
  std::vector<double> b_mx_on_pn;          // empty when Pm == Pn
  std::vector<double> c_nv_on_pn;
};

struct FormatPathSplit {
  SplitSamples samples;
  bool same_path = false;   // Pm == Pn: only format_alone is defined
  RatioSummary as_run;      // C / A
  RatioSummary format_alone;  // C / B (C / A when same_path)
  RatioSummary path_alone;  // B / A (empty when same_path)
  int batch = 0;
  std::string where;        // "host CPU, measured" / "GPU, measured"
};

// Spread above which the headline warns that the ratios are not stable on this machine.
inline constexpr double kSplitSpreadWarning = 0.10;

// The ratios and their summaries from measured tokens/s (pure: tested without runs).
// InvalidArgument when a series is empty, the series differ in length or a figure is not
// positive.
absl::StatusOr<FormatPathSplit> SummariseSplit(const SplitSamples& samples);

// Runs the configurations (each `repeats` times on one set of weights per configuration,
// through the same backends as the main run) and summarises them. `options` is the main
// run's (backend resolved: "cpu" or "cuda"); `mxfp4_path` / `nvfp4_path` are the paths the
// formats' main runs used. `on_progress` gets one line per configuration.
absl::StatusOr<FormatPathSplit> MeasureFormatPathSplit(
    const std::vector<runtime::DecodeBackend*>& backends, const runtime::RunOptions& options,
    const std::string& mxfp4_path, const std::string& nvfp4_path, int repeats,
    const std::function<void(const std::string&)>& on_progress);

// The headline block for the terminal (ends with a newline).
std::string FormatSplitText(const FormatPathSplit& s);

// The same as JSON (written to <out>/split.json): schema_version, batch, where, the paths,
// every tokens/s figure and each ratio's values, median, min, max and spread.
std::string FormatSplitJson(const FormatPathSplit& s);

}  // namespace qprof::api

#endif  // QPROF_API_FORMAT_PATH_SPLIT_H_
