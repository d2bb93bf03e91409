// `qprof sass FILE... [--json OUT]`: which kernels of a cubin, fatbin, executable or shared
// library issue tensor-core instructions (static SASS; needs no counter permission).
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "analysis/sass/sass_parser.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "base/text.h"
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

// Folders stand for the cubins under them (Triton's cache layout, sass::CubinsUnder).
absl::StatusOr<std::vector<std::string>> ExpandFolders(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    ASSIGN_OR_RETURN(std::vector<std::string> cubins, sass::CubinsUnder(p));
    if (cubins.empty()) {
      return absl::NotFoundError(absl::StrCat(p, ": no .cubin files in this folder or below"));
    }
    out.insert(out.end(), cubins.begin(), cubins.end());
  }
  return out;
}

absl::Status RunSass(const SassArgs& args) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandFolders(args.files));
  std::string json = "{\n  \"files\": [\n";
  for (size_t fi = 0; fi < files.size(); ++fi) {
    const std::string& f = files[fi];
    std::vector<sass::SassKernelStats> stats;
    if (args.sass_text) {
      ASSIGN_OR_RETURN(std::string text, ReadFile(f));
      auto parsed = sass::ParseSass(text);
      if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat(f, ": ", parsed.status().message()));
      stats = *std::move(parsed);
    } else {
      ASSIGN_OR_RETURN(stats, sass::SassStatsForFile(f));
    }
    int tensor = 0;
    for (const auto& k : stats) tensor += k.pipe_class == "tensor";
    fmt::print("{}: {} kernels ({} with tensor-core MMA instructions)\n", f, stats.size(), tensor);
    fmt::print("  {:<8} {:<7} {:>7} {:>7} {:>7} {:>7}  {:<24} {}\n", "arch", "class", "MMA",
               "FP32", "FP16x2", "INT", "MMA opcodes", "kernel (demangled)");
    for (const auto& k : stats) {
      std::string ops;
      for (const auto& [op, n] : k.mma_opcodes) ops += fmt::format("{}{}:{}", ops.empty() ? "" : " ", op, n);
      fmt::print("  {:<8} {:<7} {:>7} {:>7} {:>7} {:>7}  {:<24} {}\n", k.arch, k.pipe_class,
                 k.tensor_mma, k.simt_fp32, k.simt_fp16, k.simt_int, Shorten(ops, 24),
                 Shorten(k.demangled, 60));
    }
    json += fmt::format("    {{\"path\": {}, \"kernels\": [\n", JsonQuote(f));
    for (size_t i = 0; i < stats.size(); ++i) {
      const auto& k = stats[i];
      std::string ops;
      for (const auto& [op, n] : k.mma_opcodes) ops += fmt::format("{}\"{}\": {}", ops.empty() ? "" : ", ", op, n);
      json += fmt::format(
          "      {{\"name\": {}, \"demangled\": {}, \"arch\": \"{}\", \"class\": \"{}\", "
          "\"instructions\": {}, \"tensor_mma\": {}, \"simt_fp32\": {}, \"simt_fp16\": {}, "
          "\"simt_fp64\": {}, \"simt_int\": {}, \"mma_opcodes\": {{{}}}, "
          "\"fma_loop_instructions\": {}, \"fma_loop_ffma\": {}, \"evidence\": \"sass\", "
          "\"evidence_detail\": {}}}{}\n",
          JsonQuote(k.name), JsonQuote(k.demangled), k.arch, k.pipe_class, k.instructions,
          k.tensor_mma, k.simt_fp32, k.simt_fp16, k.simt_fp64, k.simt_int, ops,
          k.fma_loop_instructions, k.fma_loop_ffma, JsonQuote(k.detail),
          i + 1 < stats.size() ? "," : "");
    }
    json += fmt::format("    ]}}{}\n", fi + 1 < files.size() ? "," : "");
  }
  json += "  ]\n}\n";
  if (!args.json_out.empty()) {
    RETURN_IF_ERROR(WriteFileAtomic(args.json_out, json));
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
