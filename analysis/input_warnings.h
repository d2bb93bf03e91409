// The warnings about what the inputs lack (no device model, no tensor-pipe metric), worded
// for the kind of input the user gave: advice to "pass --ncu CSV" means nothing to someone
// whose input is an Nsight Compute CSV, and "device unknown" is wrong when the input names
// the compute capability.
#ifndef QPROF_ANALYSIS_INPUT_WARNINGS_H_
#define QPROF_ANALYSIS_INPUT_WARNINGS_H_

#include <string>
#include <vector>

#include "proto/trace.pb.h"

namespace qprof {

// Why no spec-table device was chosen, and what to pass: the devices the headers name, and
// for one known only by its architecture (ncu's "CC 12.0"), the spec-table GPUs of that
// architecture ("rtx-5090, rtx-pro-6000").
std::string DeviceUnknownMessage(const std::vector<const proto::TraceHeader*>& headers);

// Why no kernel carries tensor-pipe evidence, and how to collect it for these inputs.
std::string MetricsUnavailableMessage(const std::vector<const proto::TraceHeader*>& headers);

// When the inputs ran on GPUs of different vendors (an NVIDIA trace and an AMD one analysed
// as ranks of one job): one sentence naming which input ran where; "" otherwise.
std::string MixedVendorsMessage(const std::vector<const proto::TraceHeader*>& headers);

// The advice that closes a warning about kernels without pipe-class evidence: "pass --sass
// or --ncu to attribute them", without --ncu when every input is an Nsight Compute CSV.
std::string AttributeHint(const std::vector<const proto::TraceHeader*>& headers);

}  // namespace qprof

#endif  // QPROF_ANALYSIS_INPUT_WARNINGS_H_
