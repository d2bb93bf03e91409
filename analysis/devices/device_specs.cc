#include "analysis/devices/device_specs.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "analysis/devices/device_table.h"

namespace qprof::devices {

double DeviceSpec::EffectiveBandwidthGbps() const {
  return measured_copy_gbps.value > 0 ? measured_copy_gbps.value
                                      : memory_bandwidth_gbps.value;
}

std::string DeviceSpec::EffectiveBandwidthSource() const {
  return measured_copy_gbps.value > 0 ? measured_copy_gbps.source
                                      : memory_bandwidth_gbps.source;
}

const Figure& DeviceSpec::PipeFigure(std::string_view pipe) const {
  static const Figure* kUnknown = new Figure{};
  if (pipe == "simt_fp32") return fp32_simt_tflops;
  if (pipe == "tensor_tf32") return tf32_tensor_tflops;
  if (pipe == "tensor_bf16") return bf16_tensor_tflops;
  if (pipe == "tensor_fp16") return fp16_tensor_tflops;
  if (pipe == "tensor_fp8") return fp8_tensor_tflops;
  if (pipe == "tensor_fp6") return fp6_tensor_tflops;
  if (pipe == "tensor_fp4") return fp4_tensor_tflops;
  return *kUnknown;
}

double DeviceSpec::PipeTflops(std::string_view pipe) const { return PipeFigure(pipe).value; }

const std::vector<DeviceSpec>& AllDevices() {
  // The embedded files are checked by tests/analysis/device_specs_test; a table that does
  // not parse here is a build defect, said once, and leaves the table empty rather than
  // ending the process (every lookup then finds nothing and reports say so).
  static const auto* table = [] {
    auto parsed = ParseDeviceTable(DeviceSpecFiles());
    if (!parsed.ok()) {
      std::fprintf(stderr, "qprof: error: %s\n", std::string(parsed.status().message()).c_str());
      return new std::vector<DeviceSpec>();
    }
    return new std::vector<DeviceSpec>(std::move(*parsed));
  }();
  return *table;
}

std::string NormaliseDeviceName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

std::vector<const DeviceSpec*> DevicesMatchingName(std::string_view name) {
  std::vector<const DeviceSpec*> out;
  const std::string n = NormaliseDeviceName(name);
  if (n.empty()) return out;
  const auto& all = AllDevices();
  // 1. Exact alias match.
  for (const DeviceSpec& d : all) {
    bool exact = NormaliseDeviceName(d.key) == n || NormaliseDeviceName(d.name) == n;
    for (const std::string& a : d.aliases) exact |= NormaliseDeviceName(a) == n;
    if (exact) out.push_back(&d);
  }
  // 2. A reported name: "NVIDIA H200", "NVIDIA A100-SXM4-80GB", "AMD Instinct MI300X", ...
  // by the substrings each device's file gives (a PCIe H100 has 2.0 TB/s, not 3.35).
  for (const DeviceSpec& d : all) {
    if (n.find(d.match_contains) == std::string::npos) continue;
    const bool excluded =
        std::any_of(d.match_excludes.begin(), d.match_excludes.end(),
                    [&](const std::string& x) { return n.find(x) != std::string::npos; });
    if (!excluded && std::find(out.begin(), out.end(), &d) == out.end()) out.push_back(&d);
  }
  return out;
}

const DeviceSpec* FindDevice(std::string_view name) {
  const std::vector<const DeviceSpec*> all = DevicesMatchingName(name);
  return all.empty() ? nullptr : all.front();
}

}  // namespace qprof::devices
