// GPU properties read directly from the driver (through the CuptiApi seam), the way
// Kineto reads cudaGetDeviceProperties, instead of waiting for CUPTI's DEVICE activity
// records: CUPTI emits those only when a context is created, so a collector started
// after CUDA was initialised (qprof run --backend cuda builds its weights on the GPU
// first) would otherwise leave the trace without its GPU.
//
// Never call this inside InitializeInjection (during cuInit): the driver is not ready.
#ifndef QPROF_PROFILER_CUPTI_DEVICE_INFO_H_
#define QPROF_PROFILER_CUPTI_DEVICE_INFO_H_

#include <string>
#include <vector>

#include "profiler/cupti/cupti_api.h"
#include "profiler/trace_data.h"

namespace qprof::profiler::cupti {

// Every visible GPU (ids are CUDA device ordinals, the deviceId of activity records).
// An empty list with *why set when the driver cannot answer (not loaded or initialised).
std::vector<DeviceData> ReadDeviceProperties(CuptiApi& api, std::string* why);

// Adds the devices of `more` whose id is not in *devices yet.
void MergeDevices(std::vector<DeviceData> more, std::vector<DeviceData>* devices);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_DEVICE_INFO_H_
