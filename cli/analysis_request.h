// One analysis as a request: what `qprof analyze` does with its command line, callable by
// the Python module (python/) too, so both assemble inputs the same way and give the same
// Profile. The CLI adds only its terminal summary and report files.
//
// Inputs stream into one aggregation state (analysis/ingest.h: bounded memory per file,
// several files read at once, partial profiles merged in), unless the request needs every
// record in memory (an ncu CSV to join, or the caller's own use of the traces).
#ifndef QPROF_CLI_ANALYSIS_REQUEST_H_
#define QPROF_CLI_ANALYSIS_REQUEST_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/aggregate/accumulator.h"
#include "analysis/analyze.h"
#include "proto/profile.pb.h"
#include "proto/trace.pb.h"

namespace qprof::cli {

struct AnalysisRequest {
  std::vector<std::string> inputs;      // traces of any kind and partial profiles, together
  std::string ncu_csv;                  // Nsight Compute CSV joined onto every trace
  // Traces taken while CUDA graphs were captured: graph replays in the inputs take their
  // capture-time contexts (analysis/importers/common/graph_capture.h).
  std::vector<std::string> graph_captures;
  std::vector<std::string> sass_paths;  // cubin/fatbin/ELF files or folders of cubins
  std::string device;                   // spec-table device for ceilings
  std::string model;                    // model shape JSON (ceilings/ceilings.h)
  std::string label;
  int top = 15;                         // as `qprof analyze --top`
  uint64_t tokens = 0;                  // --tokens: work the traces do not record
  uint32_t steps = 0;                   // --steps
  int threads = 0;                      // AccumulateOptions::threads (analysis_inputs.h)
  bool verbose = false;                 // the CLI's progress lines on stderr
};

// Registry kernels, SASS statistics (read with cuobjdump), device, model and label.
absl::StatusOr<AnalyzeOptions> OptionsForRequest(const AnalysisRequest& request);

// Called with every trace of the request, whole, before they are aggregated (the CLI's
// --perfetto export).
using WholeTracesFn = std::function<absl::Status(const std::vector<const proto::Trace*>&)>;

// The aggregation state of the request's inputs (what `qprof analyze --partial` writes).
// Streamed, unless an ncu CSV is joined or `whole_traces` is given: then every trace is
// read into memory first.
absl::StatusOr<aggregate::ProfileState> AccumulateRequest(const AnalysisRequest& request,
                                                          const WholeTracesFn& whole_traces = {});

// AccumulateRequest, then the analysis with OptionsForRequest.
absl::StatusOr<proto::Profile> AnalyzeRequest(const AnalysisRequest& request);

}  // namespace qprof::cli

#endif  // QPROF_CLI_ANALYSIS_REQUEST_H_
