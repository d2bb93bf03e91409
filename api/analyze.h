// `qprof analyze` as a library call: one request in, a Profile (and the outputs asked for)
// out. The command (cli/analyze_command.cc) and the Python module (python/) are thin
// clients of this: they parse their arguments into an AnalyzeRequest and print or wrap
// what comes back, so both give the same Profile for the same inputs.
//
// Inputs stream into one aggregation state (analysis/ingest.h: bounded memory per file,
// several files read at once, partial profiles merged in), unless the request needs every
// record in memory (an ncu CSV to join, or a Perfetto export of the traces).
#ifndef QPROF_API_ANALYZE_H_
#define QPROF_API_ANALYZE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/aggregate/accumulator.h"
#include "analysis/analyze.h"
#include "proto/profile.pb.h"
#include "proto/trace.pb.h"

namespace qprof::api {

// A line for the user (SASS files read, ncu rows joined, partials merged): the command
// prints it on stderr; the Python module drops it. Never called with an error.
using NoteFn = std::function<void(const std::string&)>;

struct AnalyzeRequest {
  std::vector<std::string> inputs;      // traces of any kind and partial profiles, together;
                                        // or one Profile JSON report, read back as it is
  std::string ncu_csv;                  // Nsight Compute CSV joined onto every trace
  // Traces taken while CUDA graphs were captured: graph replays in the inputs take their
  // capture-time contexts (analysis/importers/common/graph_capture.h).
  std::vector<std::string> graph_captures;
  // Graph replays no capture pairs: with `model`, their GEMMs' op calls are modelled from the
  // layer order (analysis/replay_layers.h) at `batch` tokens per step (0: the step ranges')
  // split over `tp` GPUs (0: the trace's world size).
  uint32_t batch = 0;
  uint32_t tp = 0;
  std::vector<std::string> sass_paths;  // cubin/fatbin/ELF files or folders of cubins
  std::string device;                   // spec-table device for ceilings
  std::string model;                    // model shape JSON (ceilings/ceilings.h)
  std::string label;
  int top = 15;                         // kernels a terminal summary shows
  uint64_t tokens = 0;                  // --tokens: work the traces do not record
  uint32_t steps = 0;                   // --steps
  int threads = 0;                      // AccumulateOptions::threads (api/inputs.h)
  bool progress = false;                // the importers' progress line on stderr
  bool perfetto = false;                // also render the traces as Perfetto JSON
  NoteFn on_note;
};

struct AnalyzeResult {
  proto::Profile profile;
  std::string perfetto_json;  // when request.perfetto
  bool from_report = false;   // the input was a Profile JSON report, read back
};

// Registry kernels, SASS statistics (read with cuobjdump), device, model and label.
absl::StatusOr<AnalyzeOptions> OptionsFor(const AnalyzeRequest& request);

// Called with every trace of the request, whole, before they are aggregated.
using WholeTracesFn = std::function<absl::Status(const std::vector<const proto::Trace*>&)>;

// The aggregation state of the request's inputs (what a partial profile holds). Streamed,
// unless an ncu CSV is joined or `whole_traces` is given: then every trace is read into
// memory first.
absl::StatusOr<aggregate::ProfileState> Accumulate(const AnalyzeRequest& request,
                                                   const WholeTracesFn& whole_traces = {});

// The whole analysis. A Profile JSON input is read back (alone; options that need the
// trace are refused with InvalidArgument naming them), with request.label applied.
absl::StatusOr<AnalyzeResult> Analyze(const AnalyzeRequest& request);

// The same with the analysis options already made (OptionsFor): `qprof diff` makes them once
// for both sides (SASS is read once).
absl::StatusOr<AnalyzeResult> AnalyzeWith(const AnalyzeRequest& request,
                                          const AnalyzeOptions& options);

// `qprof analyze --partial`: the aggregation state as the bytes of a .qprofile file, and a
// one-line description of it.
struct PartialResult {
  std::string bytes;
  std::string summary;  // "partial profile of 2 traces, 41 kernels"
};
absl::StatusOr<PartialResult> AnalyzePartial(const AnalyzeRequest& request);

}  // namespace qprof::api

#endif  // QPROF_API_ANALYZE_H_
