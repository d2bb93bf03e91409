#include "api/sass.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "base/text.h"
#include "fmt/core.h"

namespace qprof::api {
namespace {

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

}  // namespace

absl::StatusOr<std::vector<SassFile>> ReadSass(const std::vector<std::string>& paths,
                                               bool sass_text) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandFolders(paths));
  std::vector<SassFile> out;
  for (const std::string& f : files) {
    SassFile sf;
    sf.path = f;
    if (sass_text) {
      ASSIGN_OR_RETURN(std::string text, ReadFile(f));
      auto parsed = sass::ParseSass(text);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(f, ": ", parsed.status().message()));
      }
      sf.kernels = *std::move(parsed);
    } else {
      ASSIGN_OR_RETURN(sf.kernels, sass::SassStatsForFile(f));
    }
    out.push_back(std::move(sf));
  }
  return out;
}

std::string SassJson(const std::vector<SassFile>& files) {
  std::string json = "{\n  \"files\": [\n";
  for (size_t fi = 0; fi < files.size(); ++fi) {
    const std::vector<sass::SassKernelStats>& stats = files[fi].kernels;
    json += fmt::format("    {{\"path\": {}, \"kernels\": [\n", JsonQuote(files[fi].path));
    for (size_t i = 0; i < stats.size(); ++i) {
      const auto& k = stats[i];
      std::string ops;
      for (const auto& [op, n] : k.mma_opcodes) {
        ops += fmt::format("{}\"{}\": {}", ops.empty() ? "" : ", ", op, n);
      }
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
  return json;
}

}  // namespace qprof::api
