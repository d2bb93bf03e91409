// One analysis as a request: what `qprof analyze` does with its command line, callable by
// the Python module (python/) too, so both assemble inputs the same way and give the same
// Profile. The CLI adds only its terminal summary and report files.
#ifndef QPROF_CLI_ANALYSIS_REQUEST_H_
#define QPROF_CLI_ANALYSIS_REQUEST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/analyze.h"
#include "proto/profile.pb.h"

namespace qprof::cli {

struct AnalysisRequest {
  std::vector<std::string> inputs;      // traces of any kind, analysed together
  std::string ncu_csv;                  // Nsight Compute CSV joined onto every trace
  std::vector<std::string> sass_paths;  // cubin/fatbin/ELF files or folders of cubins
  std::string device;                   // spec-table device for ceilings
  std::string model;                    // model shape JSON (ceilings/ceilings.h)
  std::string label;
  int top = 15;                         // as `qprof analyze --top`
  bool verbose = false;                 // the CLI's progress lines on stderr
};

// Registry kernels, SASS statistics (read with cuobjdump), device, model and label.
absl::StatusOr<AnalyzeOptions> OptionsForRequest(const AnalysisRequest& request);

// The inputs read (the ncu CSV joined onto them) and analysed with OptionsForRequest.
absl::StatusOr<proto::Profile> AnalyzeRequest(const AnalysisRequest& request);

}  // namespace qprof::cli

#endif  // QPROF_CLI_ANALYSIS_REQUEST_H_
