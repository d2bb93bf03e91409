// The inputs qprof's operations read: traces of any kind, partial profiles and Profile JSON
// reports, and the known kernels of our registry handed to analysis as plain data
// (analysis/ does not depend on kernels/).
#ifndef QPROF_API_INPUTS_H_
#define QPROF_API_INPUTS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/aggregate/accumulator.h"
#include "analysis/analyze.h"
#include "analysis/classify/classify.h"
#include "proto/profile.pb.h"
#include "proto/trace.pb.h"

namespace qprof::importers {
class GraphCaptureSet;  // analysis/importers/common/graph_capture.h
struct LayerModel;      // analysis/importers/common/layer_model.h
}  // namespace qprof::importers

namespace qprof::api {

// Any trace qprof reads (.qtrace, nsys SQLite, Kineto JSON, ncu CSV), by content; with
// `graph_captures`, its graph replays take their capture-time contexts.
absl::StatusOr<proto::Trace> LoadTraceInput(
    const std::string& path,
    std::shared_ptr<const importers::GraphCaptureSet> graph_captures = nullptr);

// The graph captures of `paths` (ReadGraphCaptures); null when there are none.
absl::StatusOr<std::shared_ptr<const importers::GraphCaptureSet>> LoadGraphCaptures(
    const std::vector<std::string>& paths);

struct AccumulateOptions {
  bool progress = true;  // the importers' progress line on stderr for long inputs
  // The most threads the analysis uses: files read at once, and the workers one large file
  // decodes on (0 = one per core; 1 = the calling thread only, also inside the importer: a
  // worker given one core).
  int threads = 0;
  std::shared_ptr<const importers::GraphCaptureSet> graph_captures;  // LoadGraphCaptures
  std::shared_ptr<const importers::LayerModel> layer_model;  // analysis/replay_layers.h
};

// The aggregation state of trace files, streamed and read in parallel (analysis/ingest.h);
// partial profiles (.qprofile, `qprof analyze --partial`) are merged in as they are.
absl::StatusOr<aggregate::ProfileState> AccumulateInputs(const std::vector<std::string>& paths,
                                                         const AccumulateOptions& options = {});

// Refuses a file given twice (the same path, or two paths of one file): each input is one
// rank (or one partial profile), so a repeat would count its kernels twice as two ranks.
// InvalidArgument naming both spellings.
absl::Status CheckDistinctInputs(const std::vector<std::string>& paths);

// True when the file looks like a Profile JSON report (a JSON object with
// "schema_version" and no "traceEvents" near its start).
bool LooksLikeProfileJson(const std::string& path);

// A Profile JSON report read back (`qprof analyze --json` of an earlier run).
absl::StatusOr<proto::Profile> ReadProfileReport(const std::string& path);

// A Profile: read back from a Profile JSON report, or analysed from a trace or a partial
// profile.
absl::StatusOr<proto::Profile> LoadProfileInput(const std::string& path,
                                                const AnalyzeOptions& options);

// Our kernels (kernels/registry) as classification entries.
std::vector<classify::KnownKernel> RegistryKnownKernels();

}  // namespace qprof::api

#endif  // QPROF_API_INPUTS_H_
