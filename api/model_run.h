// The modelled side of `qprof run`: plan a decode step with the runtime (no weights),
// project it onto a device of the spec table with analysis/model, and write the modelled
// traces and a summary. Used by `qprof run --backend model --target NAME` (the modelled
// run is the run) and by `qprof run` on a machine without a GPU (the modelled projection
// for the default target is written beside the host measurements).
//
// Files written into `out_dir` (atomically):
//   <format><suffix>.qtrace   one modelled trace per variant (provenance MODELLED), read,
//                             analysed and rendered like any other trace; when two
//                             variants share a format: <format>-<moe_backend><suffix>.qtrace
//   model-<target>.summary.json   tokens/s, role and pipe shares, Amdahl bounds, the
//                             comparison with published figures, and every assumption
// `suffix` is "" for --backend model and ".model-<target>" for the projection beside a
// measured run, so reports can tell the two apart by name as well as by provenance.
#ifndef QPROF_API_MODEL_RUN_H_
#define QPROF_API_MODEL_RUN_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/devices/device_specs.h"
#include "analysis/model/summary.h"
#include "proto/trace.pb.h"
#include "runtime/run.h"

namespace qprof::api {

// The analyzer's default ceiling device for host-CPU traces too (one constant).
inline constexpr const char* kDefaultModelTarget = devices::kDefaultProjectionDevice;

struct ModelVariant {
  std::string format;       // "mxfp4" | "nvfp4"
  std::string moe_backend;  // "auto" | "slot_gemv" | "w4a16_mma" | "fp4_mma"
};

struct ModelRunRequest {
  runtime::RunOptions base;           // model, batch, context, layers, tp (format ignored)
  std::vector<ModelVariant> variants;
  std::string target = kDefaultModelTarget;  // spec-table name or alias
  std::string param_overrides;        // "name=value,..." (--model-param)
  std::string out_dir;                // "" = write nothing
  std::string file_suffix;            // see the header comment
  bool compare_published = true;      // add published-figure notes
  std::string command_line;           // recorded in each trace's run info
};

struct ModelRunOutput {
  ModelVariant variant;               // moe_backend resolved
  proto::Trace trace;
  model::ModelSummary summary;
  std::string trace_path;             // "" when nothing was written
};

struct ModelRunResult {
  std::vector<ModelRunOutput> runs;
  std::string summary_path;
  std::string summary_json;
  std::vector<std::string> notes;     // comparisons and assumptions, also in the JSON
};

// Variants for a --format value ("mxfp4", "nvfp4", "both") and a --moe-backend value,
// which may be a comma-separated list ("w4a16_mma,fp4_mma"). InvalidArgument otherwise.
absl::StatusOr<std::vector<ModelVariant>> ParseModelVariants(const std::string& format,
                                                             const std::string& moe_backend);

// Plans, models and (when out_dir is set) writes every variant. Errors: InvalidArgument /
// NotFound for an unknown target (listing the known ones), a bad plan option or a bad
// parameter override; FailedPrecondition when the target lacks a pipe the path needs.
absl::StatusOr<ModelRunResult> RunModelled(const ModelRunRequest& request);

// One line per variant, for stdout: the table of analysis/model/summary.h plus a title
// that says the figures are modelled and for which target.
std::string ModelRunReport(const ModelRunResult& result, const std::string& target);

// The options of `qprof run` for modelled runs (--target, --model-param,
// --no-model-projection), and the two entry points run uses:
//   --backend model: RunModelBackend (the modelled run is the run);
//   after a cpu run: AddModelProjection (the same workload on --target, beside it).
struct ModelProjectionOptions {
  std::string target = kDefaultModelTarget;
  std::string param_overrides;
  bool no_projection = false;
};

// The traces a modelled run wrote and its table (ModelRunReport), for the caller to print.
struct ModelRunFiles {
  std::vector<std::string> trace_paths;
  std::string report;
};

// --backend model: models each format of `format` ("mxfp4", "nvfp4", "both") with the
// MoE backend(s) of `moe_backend` (a comma list is allowed), writes <format>.qtrace and
// the summary into out_dir.
absl::StatusOr<ModelRunFiles> RunModelBackend(const runtime::RunOptions& base,
                                              const std::string& format,
                                              const std::string& moe_backend,
                                              const ModelProjectionOptions& options,
                                              const std::string& out_dir,
                                              const std::string& command_line);

// After a host (cpu backend) run: the same workload modelled on the default target,
// written as <format>.model-<target>.qtrace beside the measured traces, its table titled
// "MODELLED". Nothing when options.no_projection.
absl::StatusOr<ModelRunFiles> AddModelProjection(const runtime::RunOptions& base,
                                                 const std::string& format,
                                                 const ModelProjectionOptions& options,
                                                 const std::string& out_dir,
                                                 const std::string& command_line);

}  // namespace qprof::api

#endif  // QPROF_API_MODEL_RUN_H_
