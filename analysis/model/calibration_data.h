// Fitted model parameters, stored with the device they were fitted on and the date.
//
// The table lives in calibration_data.cc, checked in, so that a modelled report can cite
// exactly which figures were fitted, where and when. Entries come from
// `qprof calibrate --emit-fit`, run on traces the device script measured with the CUDA
// backend of the bundled runtime. Published end-to-end figures are never used to fit.
#ifndef QPROF_ANALYSIS_MODEL_CALIBRATION_DATA_H_
#define QPROF_ANALYSIS_MODEL_CALIBRATION_DATA_H_

#include <string>
#include <string_view>
#include <vector>

namespace qprof::model {

struct FittedParameter {
  std::string device;     // spec-table key: "h200"
  std::string parameter;  // ModelParameter name: "memory_bandwidth_efficiency"
  double value = 0;
  std::string date;       // ISO date of the measurement: "2026-11-29"
  std::string source;     // the measured trace(s) and the command that fitted them
};

// Every stored fit (possibly none).
const std::vector<FittedParameter>& AllFittedParameters();

// The fits for one device key (spec-table key, e.g. "h200").
std::vector<FittedParameter> FittedParametersFor(std::string_view device_key);

}  // namespace qprof::model

#endif  // QPROF_ANALYSIS_MODEL_CALIBRATION_DATA_H_
