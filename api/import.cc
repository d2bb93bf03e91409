#include "api/import.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/importers/import.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "fmt/core.h"
#include "proto/trace_io.h"

namespace qprof::api {

// "trace.nsys.sqlite" -> "trace.nsys.qtrace", "t.json.gz" -> "t.qtrace".
std::string QtraceNameFor(const std::string& input) {
  std::string name = input.substr(input.find_last_of('/') + 1);
  for (const char* ext : {".gz", ".sqlite", ".json", ".csv", ".qtrace"}) {
    const std::string e = ext;
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
      name.resize(name.size() - e.size());
    }
  }
  return name + ".qtrace";
}

namespace {

// Where the .qtrace goes: --qtrace FILE, or --out DIR/<input>.qtrace. An --out naming a
// .qtrace file (its meaning before --out was a folder everywhere) still works, with a warning.
absl::StatusOr<std::string> OutputPath(const ImportRequest& args) {
  if (!args.qtrace_path.empty() && !args.out_dir.empty()) {
    return absl::InvalidArgumentError("give --qtrace FILE or --out DIR, not both");
  }
  if (!args.qtrace_path.empty() || args.out_dir.empty()) return args.qtrace_path;
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(args.out_dir, ec);
  if (!is_dir && absl::EndsWith(args.out_dir, ".qtrace")) {
    if (args.on_note) {
      args.on_note(fmt::format("warning: --out names a folder now; for a file use --qtrace {}",
                               args.out_dir));
    }
    return args.out_dir;
  }
  RETURN_IF_ERROR(MakeDirs(args.out_dir));
  return args.out_dir + "/" + QtraceNameFor(args.input);
}

}  // namespace

absl::StatusOr<ImportResult> Import(const ImportRequest& request) {
  ASSIGN_OR_RETURN(const std::string out_path, OutputPath(request));
  importers::ImportOptions options;
  options.progress = request.progress;
  ImportResult result;
  ASSIGN_OR_RETURN(result.trace, importers::ImportFile(request.input, options));
  if (!request.ncu.empty()) {
    importers::NcuJoinStats stats;
    RETURN_IF_ERROR(importers::JoinNcuMetrics(&result.trace, request.ncu, &stats, options));
    if (request.on_note) {
      request.on_note(fmt::format("ncu metrics from {} joined onto {} of {} kernels ({} ncu rows)",
                                  request.ncu, stats.matched, stats.trace_kernels,
                                  stats.ncu_kernels));
    }
  }
  for (const proto::Activity& a : result.trace.activities()) {
    switch (a.kind()) {
      case proto::ACTIVITY_KIND_KERNEL:
        ++result.kernels;
        result.kernel_ns += a.end_ns() - a.start_ns();
        break;
      case proto::ACTIVITY_KIND_MEMCPY: ++result.memcpys; break;
      case proto::ACTIVITY_KIND_MEMSET: ++result.memsets; break;
      default: break;
    }
  }
  if (!out_path.empty()) {
    RETURN_IF_ERROR(WriteTrace(result.trace, out_path));
    result.written = out_path;
  }
  return result;
}

}  // namespace qprof::api
