// `qprof run` as a library call: the bundled decode workload on each format (CUDA when a
// GPU is present, else the CPU; or modelled), one trace per format written into the output
// folder, the format/path split of the headline (api/format_path_split.h), the modelled
// projection beside host runs (api/model_run.h) and the reports (api/run_reports.h).
//
// The work is long, so results arrive as they are made, through callbacks: the command
// prints each format's summary as soon as it ran, and the reports at the end.
#ifndef QPROF_API_RUN_H_
#define QPROF_API_RUN_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/model_run.h"
#include "runtime/run.h"

namespace qprof::api {

// One format's run at one batch size, its trace written.
struct FormatRunDone {
  std::string format;
  const runtime::RunResult* result;  // valid during the callback
  std::string trace_path;
  int batch = 0;
};

struct RunRequest {
  runtime::RunOptions options;   // backend, model, steps, context, kernels, seed, ...
  std::string format = "both";   // mxfp4, nvfp4 or both (same weights and prompts)
  std::vector<int> batches;      // every size on the same weights; >1: one folder per size
  std::string out_dir = "qprof-out";
  int split_repeats = 3;         // repetitions of the format/path split (0 = off)
  ModelProjectionOptions model;  // --target, --model-param, --no-model-projection
  std::string command_line;      // recorded in each trace's run info
  std::string qprof_version;

  // Decode step `step` of `steps` of format number `index` (0-based) of `count`.
  std::function<void(const std::string& format, int index, int count, int step, int steps)>
      on_step;
  // Progress lines for stderr (setup stages, split configurations, report stages).
  std::function<void(const std::string& line)> on_progress;
  // A format ran and its trace is written.
  std::function<void(const FormatRunDone&)> on_format_done;
  // Text for standard output (ratios, the split, modelled tables, where the reports are).
  std::function<void(const std::string& text)> on_output;
};

// Checks a --batch list: "16" or "1,16,64"; each in [1, 4096], none twice.
absl::StatusOr<std::vector<int>> ParseBatches(const std::string& list);

// The registry's choices, for option help and validation ("" = fine, else why not).
std::string MoeBackendChoices();
std::string MlaKernelChoices();
std::string CheckMoeBackends(const std::string& value);  // a comma list is allowed
std::string CheckMlaKernel(const std::string& value);

absl::Status Run(const RunRequest& request);

}  // namespace qprof::api

#endif  // QPROF_API_RUN_H_
