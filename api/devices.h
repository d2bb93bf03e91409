// The device spec table (analysis/devices: one data file per GPU, every figure with its
// source) as the front doors see it: `qprof devices` lists it, option help names the
// default device.
#ifndef QPROF_API_DEVICES_H_
#define QPROF_API_DEVICES_H_

#include <vector>

#include "analysis/devices/device_specs.h"

namespace qprof::api {

using devices::DeviceSpec;
using devices::Figure;

// The GPU host-CPU runs are projected onto unless the user names another.
inline constexpr const char* kDefaultProjectionDevice = devices::kDefaultProjectionDevice;

// Every device of the table, in its stable order.
inline const std::vector<DeviceSpec>& DeviceTable() { return devices::AllDevices(); }

}  // namespace qprof::api

#endif  // QPROF_API_DEVICES_H_
