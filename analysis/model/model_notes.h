// The header and NVTX ranges of a modelled trace: run info copied from the plan, the
// modelled device, and every assumption of the model as one note each, so that a report
// of a modelled trace lists what its numbers rest on.
#ifndef QPROF_ANALYSIS_MODEL_MODEL_NOTES_H_
#define QPROF_ANALYSIS_MODEL_MODEL_NOTES_H_

#include <string>
#include <vector>

#include "analysis/devices/device_specs.h"
#include "analysis/model/parameters.h"
#include "proto/plan.pb.h"
#include "proto/trace.pb.h"

namespace qprof::model {

struct ModelResult;

// The assumptions the model makes regardless of parameters (formulas, scheduling).
std::vector<std::string> StructuralAssumptions();

// The target's figures the model used, each with its spec-table source.
std::vector<std::string> TargetNotes(const devices::DeviceSpec& target, int tp);

// Fills result.trace.header (and footer-equivalent run info) from the plan, the target and
// the parameters. Expects result.step_ns and result.kernels to be set.
void FillModelledHeader(const proto::DecodePlan& plan, const devices::DeviceSpec& target,
                        const ModelParameters& params, ModelResult& result);

// Adds one NvtxRange per distinct path prefix of the activities' nvtx paths, spanning
// the first start to the last end of the activities under it ("decode", "decode/step 0",
// "decode/step 0/layer 3", ...). Activities are laid out in plan order, so each prefix
// covers a contiguous stretch in a plan that nests its paths.
void AddNvtxRanges(proto::Trace& trace);

}  // namespace qprof::model

#endif  // QPROF_ANALYSIS_MODEL_MODEL_NOTES_H_
