#include "profiler/cupti/device_info.h"

namespace qprof::profiler::cupti {

std::vector<DeviceData> ReadDeviceProperties(CuptiApi& api, std::string* why) {
  std::vector<DeviceData> out;
  int count = 0;
  const CUresult rc = api.DeviceGetCount(&count);
  if (rc != CUDA_SUCCESS) {
    *why = "GPU properties not read: cuDeviceGetCount returned " + std::to_string(rc);
    return out;
  }
  for (int dev = 0; dev < count; ++dev) {
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      return api.DeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
    };
    DeviceData d;
    d.id = static_cast<uint32_t>(dev);
    d.kind = "gpu";
    char name[256] = {0};
    if (api.DeviceGetName(name, sizeof(name) - 1, dev) == CUDA_SUCCESS) d.name = name;
    d.cc_major = static_cast<uint32_t>(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
    d.cc_minor = static_cast<uint32_t>(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    d.arch = "sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor);
    d.sm_count = static_cast<uint32_t>(attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
    size_t bytes = 0;
    if (api.DeviceTotalMem(&bytes, dev) == CUDA_SUCCESS) d.memory_bytes = bytes;
    // Clocks in kHz. Peak bandwidth = 2 transfers per memory clock (DDR) x bus width;
    // the same formula as the CUDA samples' deviceQuery (H100 SXM: 2 x 2619 MHz x
    // 5120 bit / 8 = 3.35 TB/s).
    const double mem_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    const double bus_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    d.memory_bandwidth_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    d.clock_mhz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1e3;
    out.push_back(std::move(d));
  }
  return out;
}

void MergeDevices(std::vector<DeviceData> more, std::vector<DeviceData>* devices) {
  for (DeviceData& d : more) {
    bool present = false;
    for (const DeviceData& have : *devices) present = present || have.id == d.id;
    if (!present) devices->push_back(std::move(d));
  }
}

}  // namespace qprof::profiler::cupti
