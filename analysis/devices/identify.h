// Which spec-table device a trace's GPU is, from what the trace says about it.
//
// A reported name decides when it names a device of the table and the properties the trace
// gives (SM or CU count, memory, architecture) fit that device; when several table rows
// match the name (the A100 SXM in 80 GB and 40 GB), the one whose properties fit wins. A GPU
// with an empty or generic name (vLLM's MI300X traces carry "" with 304 CUs, 192 GiB and
// gfx942) is identified from its properties alone: vendor, SM/CU count, memory within
// kMemoryTolerance and the architecture must all fit, and exactly one row may fit (an H100
// SXM and an H800 SXM share 132 SMs and 80 GB: such a GPU stays unidentified, and the note
// says which rows fit).
#ifndef QPROF_ANALYSIS_DEVICES_IDENTIFY_H_
#define QPROF_ANALYSIS_DEVICES_IDENTIFY_H_

#include <cstdint>
#include <string>

#include "analysis/devices/device_specs.h"

namespace qprof::devices {

// Memory a trace reports is what the runtime can allocate: HBM less what the driver keeps
// (an H100 80 GB reports 79.1 GiB, an MI300X VF 191.5 GiB). 10% separates every pair of
// table rows that share an SM count (MI300X 192 vs MI325X 256, A100 40 vs 80 GB).
inline constexpr double kMemoryTolerance = 0.10;

// What a trace says about a GPU; 0 or "" where it says nothing.
struct DeviceProperties {
  std::string name;
  std::string vendor;        // "NVIDIA", "AMD"
  std::string arch;          // "sm_90", "gfx942"
  uint32_t sm_count = 0;     // SMs, or compute units on AMD GPUs
  uint64_t memory_bytes = 0;
};

struct Identification {
  const DeviceSpec* spec = nullptr;
  // "name" (the reported name, its properties fitting or not told), "properties" (no name
  // of the table: identified by what the trace measured), "" (not identified).
  std::string how;
  // One line for reports: "Instinct MI300X, identified by 304 CUs, 192 GiB and gfx942";
  // why none was chosen; or, for a name whose properties contradict every row it matches,
  // that contradiction. Empty for a name that fits.
  std::string note;
  // The properties that identified it ("304 CUs and 192 GiB"), when `how` is "properties".
  std::string evidence;
};

Identification IdentifyDevice(const DeviceProperties& p);

// Whether the properties the trace reports fit `spec` (unknown properties fit anything).
bool PropertiesFit(const DeviceSpec& spec, const DeviceProperties& p);

}  // namespace qprof::devices

#endif  // QPROF_ANALYSIS_DEVICES_IDENTIFY_H_
