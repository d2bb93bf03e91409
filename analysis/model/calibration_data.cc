#include "analysis/model/calibration_data.h"

namespace qprof::model {

const std::vector<FittedParameter>& AllFittedParameters() {
  // No fitted figures yet: no GPU has measured the bundled runtime's CUDA backend for this
  // table. Append the lines `qprof calibrate --emit-fit` prints, one per parameter:
  //   {"h200", "memory_bandwidth_efficiency", 0.87, "2026-11-29",
  //    "qprof calibrate on mxfp4.qtrace (cuda backend, tiny, batch 16)"},
  static const std::vector<FittedParameter>* const kFits = new std::vector<FittedParameter>{};
  return *kFits;
}

std::vector<FittedParameter> FittedParametersFor(std::string_view device_key) {
  std::vector<FittedParameter> out;
  for (const FittedParameter& f : AllFittedParameters()) {
    if (f.device == device_key) out.push_back(f);
  }
  return out;
}

}  // namespace qprof::model
