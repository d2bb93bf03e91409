// qprof quantize --format mxfp4|nvfp4 IN.safetensors OUT_DIR [--exclude REGEX]...
//
// Converts a F32/BF16/F16 safetensors file into a checkpoint folder in the ModelOpt NVFP4
// or gpt-oss MXFP4 layout, and prints what each tensor lost: relative RMS error and max
// absolute error of the dequantized weights against the input (measured here, on the
// actual data), so the accuracy cost of a format is visible before anyone serves it.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"
#include "api/quantize.h"
#include "cli/command.h"
#include "fmt/core.h"

namespace qprof::cli {
namespace {

struct QuantizeArgs {
  std::string format;
  std::string input;
  std::string out_dir;
  std::vector<std::string> exclude;
  int threads = 2;
};

// Progress only for inputs worth waiting for; a bar on a terminal, otherwise a plain line
// at most every 5 seconds so logs stay short.
constexpr uint64_t kProgressMinBytes = 256ull << 20;

std::string HumanBytes(uint64_t bytes) {
  if (bytes >= 1'000'000'000) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1'000'000) return fmt::format("{:.1f} MB", bytes / 1e6);
  return fmt::format("{:.1f} kB", bytes / 1e3);
}

absl::Status RunQuantize(const QuantizeArgs& args) {
  api::QuantizeOptions opt;
  opt.format = args.format;
  opt.exclude = args.exclude;
  opt.threads = args.threads;
  const auto start = std::chrono::steady_clock::now();
  auto last_line = start;
  const bool tty = StderrIsTty();
  opt.progress = [&](uint64_t done, uint64_t total, size_t n, size_t count) {
    if (total < kProgressMinBytes) return;
    const auto now = std::chrono::steady_clock::now();
    const int pct = total ? static_cast<int>(100 * done / total) : 100;
    if (tty) {
      const int width = 30, filled = pct * width / 100;
      fmt::print(stderr, "\rquantize [{}{}] {:3d}% {}/{} tensors", std::string(filled, '#'),
                 std::string(width - filled, ' '), pct, n, count);
      if (n == count) fmt::print(stderr, "\n");
    } else if (now - last_line >= std::chrono::seconds(5) || n == count) {
      fmt::print(stderr, "quantize: {}% ({}/{} tensors, {} of {})\n", pct, n, count, HumanBytes(done),
                 HumanBytes(total));
      last_line = now;
    }
  };
  auto result = api::Quantize(args.input, args.out_dir, opt);
  if (!result.ok()) return result.status();
  const weights::QuantizeReport* report = &result->report;

  size_t width = 6;
  for (const auto& t : report->tensors) width = std::max(width, t.name.size());
  fmt::print("{:<{}}  {:<16} {:<5}  {:<9} {:>10} {:>12}\n", "tensor", width, "shape", "dtype",
             "result", "rel RMS", "max abs");
  for (const auto& t : report->tensors) {
    const std::string shape = api::ShapeString(t.shape);
    if (t.converted) {
      fmt::print("{:<{}}  {:<16} {:<5}  {:<9} {:>10.4g} {:>12.4g}\n", t.name, width, shape,
                 t.dtype, report->format, t.rel_rms_error, t.max_abs_error);
    } else {
      fmt::print("{:<{}}  {:<16} {:<5}  kept ({})\n", t.name, width, shape, t.dtype, t.reason);
    }
  }
  fmt::print("total: {} of {} tensors converted to {}; relative RMS error {:.4g}, max abs error "
             "{:.4g} (measured against the input)\n",
             result->converted, report->tensors.size(), report->format, report->rel_rms_error,
             report->max_abs_error);
  if (result->converted_elements > 0) {
    fmt::print("converted tensors: {} -> {} ({:.3f} bits per weight including scales)\n",
               HumanBytes(result->converted_in_bytes), HumanBytes(result->converted_out_bytes),
               result->bits_per_weight);
  }
  const double seconds = result->seconds;
  fmt::print("input {} -> model.safetensors {} in {:.2f} s ({:.0f} MB/s of input, measured)\n",
             HumanBytes(report->input_bytes), HumanBytes(report->output_bytes), seconds,
             report->input_bytes / 1e6 / std::max(seconds, 1e-9));
  if (!report->not_converted_modules.empty()) {
    fmt::print("not converted: {}\n", absl::StrJoin(report->not_converted_modules, ", "));
  }
  fmt::print("wrote {}\n", absl::StrJoin(report->files, ", "));
  return absl::OkStatus();
}

}  // namespace

void RegisterQuantizeCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<QuantizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "quantize",
      "Convert a F32/BF16/F16 safetensors file into an NVFP4 (ModelOpt layout) or MXFP4 "
      "(gpt-oss layout) checkpoint folder, printing each tensor's quantization error");
  cmd->add_option("--format", args->format,
                  "mxfp4: blocks of 32 with a UE8M0 scale (OCP MX v1.0); nvfp4: blocks of 16 "
                  "with an E4M3 scale and one FP32 tensor scale (ModelOpt)")
      ->required()
      ->check(CLI::IsMember({"mxfp4", "nvfp4"}));
  cmd->add_option("input", args->input, "Input .safetensors file (F32, BF16 or F16 tensors)")
      ->required();
  cmd->add_option("out_dir", args->out_dir,
                  "Output folder: model.safetensors plus hf_quant_config.json (nvfp4) or "
                  "config.json (mxfp4); created if missing")
      ->required();
  cmd->add_option("--exclude", args->exclude,
                  "Keep tensors whose name matches this regular expression (ECMAScript, matched "
                  "anywhere in the name) unconverted; repeatable")
      ->take_all();
  cmd->add_option("--threads", args->threads, "Worker threads for quantization")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->callback([&runner, args] { runner.action = [args] { return RunQuantize(*args); }; });
}

}  // namespace qprof::cli
