// `qprof devices [--sources]`: the device spec table that ceilings and modelled runs use,
// with the source of every figure.
#include <memory>

#include "CLI/CLI.hpp"
#include "analysis/devices/device_specs.h"
#include "cli/command.h"
#include "fmt/core.h"

namespace qprof::cli {
namespace {

void PrintDevices(bool sources) {
  fmt::print("{:<38} {:<7} {:>4} {:>5} {:>9} {:>9} {:>6} {:>6} {:>6} {:>6}  {}\n", "device (key)",
             "arch", "SMs", "GB", "BW GB/s", "copy GB/s", "FP32", "BF16", "FP8", "FP4",
             "interconnect (GB/s per direction)");
  for (const auto& d : devices::AllDevices()) {
    fmt::print("{:<38} {:<7} {:>4} {:>5} {:>9} {:>9} {:>6} {:>6} {:>6} {:>6}  {} {}\n",
               fmt::format("{} ({})", d.name, d.key), d.arch, d.sm_count.value, d.memory_gb.value,
               d.memory_bandwidth_gbps.value,
               d.measured_copy_gbps.value > 0 ? fmt::format("{}", d.measured_copy_gbps.value) : "-",
               d.fp32_simt_tflops.value, d.bf16_tensor_tflops.value,
               d.fp8_tensor_tflops.value > 0 ? fmt::format("{}", d.fp8_tensor_tflops.value) : "-",
               d.fp4_tensor_tflops.value > 0 ? fmt::format("{}", d.fp4_tensor_tflops.value) : "-",
               d.interconnect, d.interconnect_gbps.value);
  }
  fmt::print("TFLOPS are dense (no sparsity); '-' = no such tensor path. Aliases: {}.\n",
             "h100, h200, b200, rtx-pro-6000, rtx-5090, l40s, a100 and the names traces report");
  if (!sources) {
    fmt::print("Run `qprof devices --sources` for the source of every figure.\n");
    return;
  }
  for (const auto& d : devices::AllDevices()) {
    fmt::print("\n{} ({}):\n", d.name, d.key);
    auto line = [](const char* what, const devices::Figure& f) {
      fmt::print("  {:<22} {:>8}  {}\n", what, f.value, f.source);
    };
    line("SMs", d.sm_count);
    line("memory GB", d.memory_gb);
    line("memory GB/s", d.memory_bandwidth_gbps);
    if (d.measured_copy_gbps.value > 0) line("measured copy GB/s", d.measured_copy_gbps);
    line("FP32 SIMT TFLOPS", d.fp32_simt_tflops);
    line("BF16 tensor TFLOPS", d.bf16_tensor_tflops);
    line("FP8 tensor TFLOPS", d.fp8_tensor_tflops);
    line("FP4 tensor TFLOPS", d.fp4_tensor_tflops);
    line("interconnect GB/s", d.interconnect_gbps);
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
