// The device spec table: datasheet (and, where known, measured) figures for the GPUs
// qprof models ceilings on and reads traces of. Every number carries the source it came
// from, so reports can print "modelled from <source>" next to any figure derived from it.
//
// The table is data: one JSON file per device in analysis/devices/specs/ (sources shared
// by several devices in specs/common.json), embedded in the binary at build time and read
// once (device_table.h says the file format). Adding a GPU is adding a file and listing it
// in analysis/devices/CMakeLists.txt.
//
// Conventions:
//  - Tensor (matrix-core) rates are DENSE (no 2:4 sparsity), in TFLOPS; 0 means the chip
//    has no such path (FP4 on Hopper, FP8 on Ampere) or its vendor publishes no figure
//    (the figure's source says which).
//  - "SMs" are compute units on AMD GPUs; warp_size is 64 there (wavefronts).
//  - Bandwidths are GB/s (1e9 bytes/s). Interconnect bandwidth is per GPU, per direction.
//  - measured_copy_gbps, when nonzero, is a measured device-to-device copy rate; ceilings
//    prefer it over the datasheet bandwidth (DESIGN.md: measured overrides datasheet).
//
// Lookup accepts an alias ("h200", "rtx-pro-6000", "RTX PRO 6000") or the name a trace
// reports ("NVIDIA H200", "NVIDIA RTX PRO 6000 Blackwell Server Edition",
// "NVIDIA A100-SXM4-80GB"). Matching is on lower-case alphanumerics only.
#ifndef QPROF_ANALYSIS_DEVICES_DEVICE_SPECS_H_
#define QPROF_ANALYSIS_DEVICES_DEVICE_SPECS_H_

#include <string>
#include <string_view>
#include <vector>

namespace qprof::devices {

// One figure and where it came from.
struct Figure {
  double value = 0;
  std::string source;
};

struct DeviceSpec {
  std::string name;                  // "H200 SXM"
  std::string key;                   // canonical alias: "h200"
  std::vector<std::string> aliases;  // other accepted names ("h200-sxm", ...)
  std::string vendor;                // "NVIDIA" or "AMD"
  std::string arch;                  // "sm_90"; AMD: "gfx942"
  Figure sm_count;                   // SMs; AMD: compute units
  Figure warp_size;                  // 32; AMD: 64 (wavefront)
  Figure memory_gb;
  Figure memory_bandwidth_gbps;      // datasheet DRAM bandwidth
  Figure measured_copy_gbps;         // 0 when unknown
  Figure fp32_simt_tflops;           // CUDA cores / AMD vector FP32
  Figure tf32_tensor_tflops;         // dense; 0 = none
  Figure bf16_tensor_tflops;         // dense, FP32 accumulate
  Figure fp16_tensor_tflops;         // dense, FP32 accumulate
  Figure fp8_tensor_tflops;          // dense; 0 = none
  Figure fp6_tensor_tflops;          // dense; 0 = none or not published
  Figure fp4_tensor_tflops;          // dense; 0 = none
  std::string interconnect;          // GPU-to-GPU link: "NVLink 4", "PCIe Gen5 x16"
  Figure interconnect_gbps;          // per GPU, per direction
  std::string host_link;             // GPU-to-host link: "PCIe Gen5 x16"
  Figure host_link_gbps;             // per direction; 0 when unknown
  Figure launch_overhead_us;         // per kernel launch, an assumption for modelled runs
  // For the model's latency and issue terms (analysis/model): the SM boost clock (SIMT
  // issue rate = SMs x 4 schedulers x 32 lanes x clock) and the unloaded latency of a load
  // that misses L2 (memory-level parallelism: bandwidth <= bytes in flight / latency).
  Figure boost_clock_mhz;
  Figure memory_latency_ns;

  // The bandwidth ceilings should use: measured copy rate when known, else datasheet.
  double EffectiveBandwidthGbps() const;
  std::string EffectiveBandwidthSource() const;
  // Dense rate of a compute pipe ("simt_fp32", "tensor_tf32", "tensor_bf16",
  // "tensor_fp16", "tensor_fp8", "tensor_fp6", "tensor_fp4"); 0 when the device has no
  // such pipe or the name is unknown. PipeFigure gives the figure with its source (empty
  // source for an unknown name).
  double PipeTflops(std::string_view compute_pipe) const;
  const Figure& PipeFigure(std::string_view compute_pipe) const;
  bool IsNvidia() const { return vendor == "NVIDIA"; }

  // How a reported name is recognised (FindDevice step 2): its normalised form contains
  // `match_contains` and none of `match_excludes` ("h100" but not "pcie").
  std::string match_contains;
  std::vector<std::string> match_excludes;
};

// The GPU that host-CPU runs are projected onto unless the user names another (`qprof
// analyze --device`, `qprof run --target`): the RTX PRO 6000 of the story. One constant so
// that the analyzer's rooflines and `qprof run`'s modelled projection agree.
inline constexpr char kDefaultProjectionDevice[] = "rtx-pro-6000";

// Every device in the table, in a stable order (the order of the files in
// analysis/devices/CMakeLists.txt).
const std::vector<DeviceSpec>& AllDevices();

// The spec for an alias or a reported device name, or nullptr when not in the table.
// "NVIDIA H100 PCIe" does not match "H100 SXM" (different memory and clocks).
const DeviceSpec* FindDevice(std::string_view name);

// Every device whose alias or name rule matches `name`, exact aliases first, then the name
// rules in table order (FindDevice is the first of them).
std::vector<const DeviceSpec*> DevicesMatchingName(std::string_view name);

// "nvidia h200" -> "nvidiah200": lower-case alphanumerics (exposed for tests).
std::string NormaliseDeviceName(std::string_view name);

}  // namespace qprof::devices

#endif  // QPROF_ANALYSIS_DEVICES_DEVICE_SPECS_H_
