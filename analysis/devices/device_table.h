// Reading the device spec table from its data files (analysis/devices/specs/*.json).
//
// One file per device:
//   {
//     "key": "h200", "name": "H200 SXM", "vendor": "NVIDIA", "arch": "sm_90",
//     "aliases": ["h200-sxm", ...],
//     "match": {"contains": "h200", "excludes": ["nvl"]},   // for reported names
//     "sources": {"sheet": "NVIDIA H200 ... datasheet ...", ...},
//     "memory_bandwidth_gbps": [4800, "sheet"],              // [value, source key]
//     "memory_latency_cycles": [500, "latency"],             // ns = cycles / boost clock
//     "interconnect": "NVLink 4", "interconnect_gbps": [450, "nvlink4"], ...
//   }
// A figure is [value, source key]; the key names a source in the file's "sources" or in
// common.json's. Every figure of DeviceSpec must be present except measured_copy_gbps
// (absent = not measured) and warp_size (absent = 32); a value of 0 means "none" and its
// source says why. Unknown keys are errors, so a misspelt figure cannot silently vanish.
#ifndef QPROF_ANALYSIS_DEVICES_DEVICE_TABLE_H_
#define QPROF_ANALYSIS_DEVICES_DEVICE_TABLE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "analysis/devices/device_specs.h"
#include "base/embedded_text.h"

namespace qprof::devices {

// The devices of `files` in order; "common.json" holds shared sources and is no device.
// InvalidArgument naming the file and the field on any error.
absl::StatusOr<std::vector<DeviceSpec>> ParseDeviceTable(const std::vector<EmbeddedText>& files);

// The files embedded at build time (generated from analysis/devices/specs).
const std::vector<EmbeddedText>& DeviceSpecFiles();

}  // namespace qprof::devices

#endif  // QPROF_ANALYSIS_DEVICES_DEVICE_TABLE_H_
