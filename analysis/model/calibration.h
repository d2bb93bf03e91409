// Calibration: how far the model is from measured traces of the bundled runtime, and the
// efficiencies that would close the gap.
//
// Input: a measured trace of the runtime (CUDA backend, from the device script) and the
// modelled result of the SAME plan (the caller plans from the trace's run info). Both are
// reduced to time per decode step:
//   measured: sum of kernel durations over the trace / steps (header.run.steps, else the
//             number of distinct "step N" NVTX components, else 1);
//   modelled: the per-launch body time (total minus launch overhead, since a measured
//             kernel's interval excludes the launch gap) times launches.
// grouped by role (activity attribution.role, which the runtime fills from the registry)
// and by kernel path (kernel_id, or the name when a record has none).
// error = modelled / measured - 1 (so +0.2 means the model is 20% slow).
//
// Fit: for each parameter, over the kernels the model says that term bounds,
//   efficiency_fit = efficiency_now * sum(modelled term) / sum(measured time)
// i.e. the efficiency at which those kernels' modelled time would equal the measured one.
// A fit above 1 means the work model counts more bytes/FLOPs than the kernel moved (L2
// hits, or a wrong work model) and is flagged, not stored.
#ifndef QPROF_ANALYSIS_MODEL_CALIBRATION_H_
#define QPROF_ANALYSIS_MODEL_CALIBRATION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/model/decode_model.h"
#include "proto/trace.pb.h"

namespace qprof::model {

struct CalibrationRow {
  std::string key;               // role or kernel path
  double measured_ns = 0;        // per step
  double modelled_ns = 0;        // per step
  double error = 0;              // modelled / measured - 1; 0 when measured is 0
  uint64_t measured_launches = 0;  // per trace
  bool only_measured = false;    // key absent from the model
  bool only_modelled = false;    // key absent from the measurement
  std::string bound;             // kernel paths: the model's limiting term ("memory", ...)
};

struct FittedEfficiency {
  std::string parameter;         // "memory_bandwidth_efficiency"
  double current = 0;
  double fitted = 0;
  int kernels = 0;               // plan entries bound by this term
  bool plausible = true;         // 0 < fitted <= 1
};

struct CalibrationReport {
  std::string measured_source;   // the trace's path or model/format summary
  std::string target;
  double steps = 1;
  double measured_step_ns = 0;   // kernel time per step (sum of kernel durations)
  double measured_wall_step_ns = 0;  // header wall time / steps, 0 when unknown
  double modelled_step_ns = 0;   // model step time including launch overhead
  double modelled_body_step_ns = 0;  // without launch overhead
  std::vector<CalibrationRow> by_role;
  std::vector<CalibrationRow> by_path;
  std::vector<FittedEfficiency> fits;
  std::vector<std::string> warnings;  // mismatched run info, missing roles, ...
  // Largest |error| over roles measured and modelled (the target: <= 0.15).
  double worst_role_error = 0;
};

// Compares one measured trace with the model of its plan. InvalidArgument when the
// measured trace has no kernel activities or is itself modelled.
absl::StatusOr<CalibrationReport> Calibrate(const proto::Trace& measured,
                                            const proto::DecodePlan& plan,
                                            const ModelResult& modelled,
                                            const ModelParameters& params,
                                            const std::string& target_key);

// A fixed-width table: step totals, then per role and per kernel path, then the fits.
std::string CalibrationTable(const CalibrationReport& report);

// Lines for calibration_data.cc, one per plausible fit:
//   {"h200", "memory_bandwidth_efficiency", 0.871, "2026-11-29", "<source>"},
std::vector<std::string> FitDataLines(const CalibrationReport& report, const std::string& date);

}  // namespace qprof::model

#endif  // QPROF_ANALYSIS_MODEL_CALIBRATION_H_
