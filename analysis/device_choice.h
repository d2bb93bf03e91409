// Step 1 of the analysis: the GPU the rooflines describe, and why that one (analyze.cc).
#ifndef QPROF_ANALYSIS_DEVICE_CHOICE_H_
#define QPROF_ANALYSIS_DEVICE_CHOICE_H_

#include <string>

#include "absl/status/statusor.h"
#include "analysis/aggregate/accumulator.h"
#include "analysis/analyze.h"
#include "analysis/devices/device_specs.h"

namespace qprof {

struct DeviceChoice {
  const devices::DeviceSpec* spec = nullptr;
  bool host_default = false;  // host-CPU trace: the default projection device
  std::string note;           // how a GPU was identified, or why not (devices/identify.h)
};

// --device, else the first GPU of the traces the spec table knows (by its name and
// properties, an unnamed one by its properties alone: devices/identify.h), else (for host-CPU
// traces, which have no GPU of their own) the default projection device that `qprof run`
// models onto. InvalidArgument for a --device the table does not have.
absl::StatusOr<DeviceChoice> ChooseDevice(const aggregate::ProfileState& state,
                                          const AnalyzeOptions& options);

}  // namespace qprof

#endif  // QPROF_ANALYSIS_DEVICE_CHOICE_H_
