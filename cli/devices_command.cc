// `qprof devices [--sources]`: the device spec table that ceilings and modelled runs use,
// with the source of every figure.
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "api/devices.h"
#include "cli/command.h"
#include "fmt/core.h"

namespace qprof::cli {
namespace {

std::string Rate(const api::Figure& f) {
  return f.value > 0 ? fmt::format("{:g}", f.value) : "-";
}

void PrintDevices(bool sources) {
  fmt::print("{:<34} {:<7} {:>4} {:>4} {:>9} {:>9} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}  {}\n",
             "device (key)", "arch", "SMs", "GB", "BW GB/s", "copy GB/s", "FP32", "TF32", "BF16",
             "FP8", "FP6", "FP4", "GPU link (GB/s per direction)");
  for (const auto& d : api::DeviceTable()) {
    fmt::print("{:<34} {:<7} {:>4} {:>4} {:>9} {:>9} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}  {} "
               "{:g}\n",
               fmt::format("{} ({})", d.name, d.key), d.arch, d.sm_count.value, d.memory_gb.value,
               d.memory_bandwidth_gbps.value, Rate(d.measured_copy_gbps), d.fp32_simt_tflops.value,
               Rate(d.tf32_tensor_tflops), Rate(d.bf16_tensor_tflops), Rate(d.fp8_tensor_tflops),
               Rate(d.fp6_tensor_tflops), Rate(d.fp4_tensor_tflops), d.interconnect,
               d.interconnect_gbps.value);
  }
  // FP16 has no column: it equals BF16 except where a chip has one and not the other.
  std::string fp16;
  for (const auto& d : api::DeviceTable()) {
    if (d.fp16_tensor_tflops.value == d.bf16_tensor_tflops.value) continue;
    fp16 += fmt::format("{}{} {:g}", fp16.empty() ? "" : ", ", d.key, d.fp16_tensor_tflops.value);
  }
  fmt::print("TFLOPS are dense (no sparsity); FP16 tensor rates equal BF16 {}; "
             "'-' = no such path or no published figure (--sources says which). AMD: SMs are "
             "compute units, tensor rates matrix cores. Names: the keys above, their aliases and "
             "the names traces report.\n",
             fp16.empty() ? "on every device here" : "except FP16 " + fp16 + " (no BF16 path)");
  if (!sources) {
    fmt::print("Run `qprof devices --sources` for the source of every figure.\n");
    return;
  }
  for (const auto& d : api::DeviceTable()) {
    fmt::print("\n{} ({}, {} {}):\n", d.name, d.key, d.vendor, d.arch);
    auto line = [](const char* what, const api::Figure& f) {
      fmt::print("  {:<24} {:>8g}  {}\n", what, f.value, f.source);
    };
    line(d.IsNvidia() ? "SMs" : "compute units", d.sm_count);
    line("warp size", d.warp_size);
    line("memory GB", d.memory_gb);
    line("memory GB/s", d.memory_bandwidth_gbps);
    if (d.measured_copy_gbps.value > 0) line("measured copy GB/s", d.measured_copy_gbps);
    line(d.IsNvidia() ? "FP32 SIMT TFLOPS" : "FP32 vector TFLOPS", d.fp32_simt_tflops);
    line("TF32 tensor TFLOPS", d.tf32_tensor_tflops);
    line("BF16 tensor TFLOPS", d.bf16_tensor_tflops);
    line("FP16 tensor TFLOPS", d.fp16_tensor_tflops);
    line("FP8 tensor TFLOPS", d.fp8_tensor_tflops);
    line("FP6 tensor TFLOPS", d.fp6_tensor_tflops);
    line("FP4 tensor TFLOPS", d.fp4_tensor_tflops);
    line(fmt::format("{} GB/s", d.interconnect).c_str(), d.interconnect_gbps);
    line(fmt::format("{} GB/s", d.host_link).c_str(), d.host_link_gbps);
    line("launch overhead us", d.launch_overhead_us);
    line("boost clock MHz", d.boost_clock_mhz);
    line("memory latency ns", d.memory_latency_ns);
  }
}

}  // namespace

void RegisterDevicesCommand(CLI::App& app, CommandRunner& runner) {
  auto sources = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "devices", "List the GPU spec table used for ceilings and modelled runs, with sources");
  cmd->add_flag("--sources", *sources, "Print the source of every figure");
  cmd->callback([sources, &runner] {
    runner.action = [sources] {
      PrintDevices(*sources);
      return absl::OkStatus();
    };
  });
}

}  // namespace qprof::cli
