// `qprof calibrate` as a library call: a measured trace of the bundled runtime (CUDA backend)
// compared with the model of the same plan (analysis/model/calibration.h): the error per
// role and per kernel path, and the efficiencies that would close the gap. The plan is
// rebuilt from the trace's run info (model, format, MoE path, batch, context of sequence 0,
// layers, tp); the target is the trace's device unless one is given.
#ifndef QPROF_API_CALIBRATE_H_
#define QPROF_API_CALIBRATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace qprof::api {

struct CalibrateRequest {
  std::string target;           // spec-table device; "" = the trace's device
  std::string param_overrides;  // name=value[,name=value...]
};

struct CalibrateResult {
  std::string table;                   // the comparison, per role and kernel path
  std::vector<std::string> fit_lines;  // plausible fitted efficiencies as calibration-table
                                       // entries dated today (empty: none plausible)
  std::vector<std::string> warnings;
};

absl::StatusOr<CalibrateResult> Calibrate(const std::string& trace_path,
                                          const CalibrateRequest& request);

}  // namespace qprof::api

#endif  // QPROF_API_CALIBRATE_H_
