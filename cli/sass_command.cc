// `qprof sass FILE... [--json OUT]`: which kernels of a cubin, fatbin, executable or shared
// library issue tensor-core instructions (static SASS; needs no counter permission).
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "api/sass.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "fmt/core.h"

namespace qprof::cli {
namespace {

struct SassArgs {
  std::vector<std::string> files;
  std::string json_out;
  bool sass_text = false;
};

std::string Shorten(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  size_t keep = (width - 3) / 2;
  return s.substr(0, keep) + "..." + s.substr(s.size() - (width - 3 - keep));
}

absl::Status RunSass(const SassArgs& args) {
  ASSIGN_OR_RETURN(std::vector<api::SassFile> files, api::ReadSass(args.files, args.sass_text));
  for (const api::SassFile& f : files) {
    int tensor = 0;
    for (const auto& k : f.kernels) tensor += k.pipe_class == "tensor";
    fmt::print("{}: {} kernels ({} with tensor-core MMA instructions)\n", f.path,
               f.kernels.size(), tensor);
    fmt::print("  {:<8} {:<7} {:>7} {:>7} {:>7} {:>7}  {:<24} {}\n", "arch", "class", "MMA",
               "FP32", "FP16x2", "INT", "MMA opcodes", "kernel (demangled)");
    for (const auto& k : f.kernels) {
      std::string ops;
      for (const auto& [op, n] : k.mma_opcodes) {
        ops += fmt::format("{}{}:{}", ops.empty() ? "" : " ", op, n);
      }
      fmt::print("  {:<8} {:<7} {:>7} {:>7} {:>7} {:>7}  {:<24} {}\n", k.arch, k.pipe_class,
                 k.tensor_mma, k.simt_fp32, k.simt_fp16, k.simt_int, Shorten(ops, 24),
                 Shorten(k.demangled, 60));
    }
  }
  if (!args.json_out.empty()) {
    RETURN_IF_ERROR(WriteFileAtomic(args.json_out, api::SassJson(files)));
    fmt::print(stderr, "qprof: wrote {}\n", args.json_out);
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterSassCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<SassArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sass",
      "Count tensor-core MMA (HMMA, HGMMA, QGMMA, IMMA, OMMA, UTC*MMA) versus SIMT FP32/FP16/INT "
      "instructions per kernel of a cubin, fatbin, executable or shared library (runs cuobjdump "
      "--dump-sass; install with: pip install nvidia-cuda-cuobjdump)");
  cmd->add_option("files", args->files,
                  "cubin, fatbin, executable or shared library, or a folder of cubins (every "
                  ".cubin below it, e.g. Triton's cache ~/.triton/cache)")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--json", args->json_out, "Write the per-kernel counts as JSON to this file");
  cmd->add_flag("--sass-text", args->sass_text,
                "The files are SASS listings already (cuobjdump --dump-sass output)");
  cmd->callback([args, &runner] { runner.action = [args] { return RunSass(*args); }; });
}

}  // namespace qprof::cli
