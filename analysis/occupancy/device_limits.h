// The occupancy limits of a device in a trace: the architecture rules of its compute
// capability (analysis/devices/arch_limits.h) with the sizes the trace itself reported
// (Kineto deviceProperties, nsys TARGET_INFO_GPU, our collector's device record) taking
// precedence, and the SM count from the trace or else the spec table. The source string
// says which figures came from where.
#ifndef QPROF_ANALYSIS_OCCUPANCY_DEVICE_LIMITS_H_
#define QPROF_ANALYSIS_OCCUPANCY_DEVICE_LIMITS_H_

#include "absl/status/statusor.h"
#include "analysis/devices/device_specs.h"
#include "analysis/occupancy/occupancy.h"
#include "proto/trace.pb.h"

namespace qprof::occupancy {

// FailedPrecondition (with the reason in words) when the device is not a GPU, its compute
// capability is unknown (no cc in the trace, name not in the spec table) or has no row in
// the architecture table, or its SM count is unknown.
absl::StatusOr<DeviceLimits> DeviceLimitsFor(const proto::DeviceInfo& device);

// Limits of a spec-table device (for --device and modelled runs): architecture rules only.
absl::StatusOr<DeviceLimits> DeviceLimitsForSpec(const devices::DeviceSpec& spec);

}  // namespace qprof::occupancy

#endif  // QPROF_ANALYSIS_OCCUPANCY_DEVICE_LIMITS_H_
