#include "analysis/importers/input_hints.h"

#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace qprof::importers {
namespace {

// `path` without `ext` (case-insensitive), or empty when it does not end so.
std::string Stem(const std::string& path, std::string_view ext) {
  if (path.size() <= ext.size() || !absl::EndsWithIgnoreCase(path, absl::string_view(ext.data(), ext.size()))) return "";
  return path.substr(0, path.size() - ext.size());
}

// The path as a shell word: unchanged when it is plain, else in single quotes.
std::string ShellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789_./+-:,@%=") == std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string UnreadableInputMessage(const std::string& path) {
  // .qdrep is what Nsight Systems called its reports before 2021.4.
  for (std::string_view ext : {".nsys-rep", ".qdrep"}) {
    std::string stem = Stem(path, ext);
    if (stem.empty()) continue;
    return absl::StrCat(path, ": an Nsight Systems report, which qprof reads once exported to "
                        "SQLite: nsys export --type sqlite --output ",
                        ShellQuote(stem + ".sqlite"), " ", ShellQuote(path));
  }
  for (std::string_view ext : {".ncu-rep", ".nsight-cuprof-report"}) {
    std::string stem = Stem(path, ext);
    if (stem.empty()) continue;
    return absl::StrCat(path, ": an Nsight Compute report, which qprof reads as CSV: ncu "
                        "--import ", ShellQuote(path), " --csv --page raw > ",
                        ShellQuote(stem + ".csv"),
                        " (then pass it with --ncu, beside the trace it measured)");
  }
  return absl::StrCat(
      path, ": not a trace qprof can read (expected a .qtrace, an Nsight Systems SQLite "
            "export, a PyTorch profiler/Kineto JSON or .json.gz, or an Nsight Compute CSV)");
}

}  // namespace qprof::importers
