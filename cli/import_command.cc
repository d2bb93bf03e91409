// `qprof import INPUT [--qtrace FILE | --out DIR] [--ncu CSV]`: reads any input qprof
// understands (Nsight Systems SQLite, PyTorch profiler JSON[.gz], Nsight Compute CSV,
// .qtrace), prints a one-line summary (kind, kernels, total kernel time) and writes it as a
// .qtrace: to FILE, or into DIR named after the input (`--out` is a folder in every
// subcommand).
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/importers/import.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "fmt/core.h"
#include "proto/trace_io.h"

namespace qprof::cli {
namespace {

struct ImportArgs {
  std::string input;
  std::string out;     // folder
  std::string qtrace;  // file
  std::string ncu;
  bool quiet = false;
};

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

// Where the .qtrace goes: --qtrace FILE, or --out DIR/<input>.qtrace. An --out naming a
// .qtrace file (its meaning before --out was a folder everywhere) still works, with a warning.
absl::StatusOr<std::string> OutputPath(const ImportArgs& args) {
  if (!args.qtrace.empty() && !args.out.empty()) {
    return absl::InvalidArgumentError("give --qtrace FILE or --out DIR, not both");
  }
  if (!args.qtrace.empty() || args.out.empty()) return args.qtrace;
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(args.out, ec);
  if (!is_dir && absl::EndsWith(args.out, ".qtrace")) {
    fmt::print(stderr, "qprof: warning: --out names a folder now; for a file use --qtrace {}\n",
               args.out);
    return args.out;
  }
  RETURN_IF_ERROR(MakeDirs(args.out));
  return args.out + "/" + QtraceNameFor(args.input);
}

absl::Status RunImport(const ImportArgs& args) {
  ASSIGN_OR_RETURN(const std::string out_path, OutputPath(args));
  importers::ImportOptions options;
  options.progress = true;
  ASSIGN_OR_RETURN(proto::Trace trace, importers::ImportFile(args.input, options));
  if (!args.ncu.empty()) {
    importers::NcuJoinStats stats;
    RETURN_IF_ERROR(importers::JoinNcuMetrics(&trace, args.ncu, &stats, options));
    fmt::print(stderr, "qprof: ncu metrics from {} joined onto {} of {} kernels ({} ncu rows)\n",
               args.ncu, stats.matched, stats.trace_kernels, stats.ncu_kernels);
  }
  int64_t kernels = 0, kernel_ns = 0, copies = 0, sets = 0;
  for (const proto::Activity& a : trace.activities()) {
    switch (a.kind()) {
      case proto::ACTIVITY_KIND_KERNEL:
        ++kernels;
        kernel_ns += a.end_ns() - a.start_ns();
        break;
      case proto::ACTIVITY_KIND_MEMCPY: ++copies; break;
      case proto::ACTIVITY_KIND_MEMSET: ++sets; break;
      default: break;
    }
  }
  const proto::CollectorStats& c = trace.header().collector();
  fmt::print("{}: {}: {} kernels, kernel time {:.6f} ms ({} ns), {} memcpy, {} memset, "
             "{} devices, {} ranges, {} warnings\n",
             args.input, trace.header().source_kind(), kernels, kernel_ns / 1e6, kernel_ns, copies,
             sets, trace.header().devices_size(), trace.ranges_size(), c.warnings_size());
  if (!args.quiet) {
    for (const std::string& w : c.warnings()) fmt::print(stderr, "qprof: warning: {}\n", w);
  }
  if (!out_path.empty()) {
    RETURN_IF_ERROR(WriteTrace(trace, out_path));
    fmt::print(stderr, "qprof: wrote {}\n", out_path);
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterImportCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Read a trace from another tool (Nsight Systems .sqlite export, PyTorch profiler / Kineto "
      ".json or .json.gz, Nsight Compute .csv, or a .qtrace), print a one-line summary "
      "(kind, kernels, total kernel time) and optionally save it as a .qtrace. The kind is "
      "detected from the file's content.");
  cmd->add_option("INPUT", args->input, "Trace file to read")->required();
  cmd->add_option("--qtrace", args->qtrace,
                  "Write the imported trace to this .qtrace file (atomically)");
  cmd->add_option("--out,-o", args->out,
                  "Write the imported trace into this folder (created if missing) as "
                  "<input name>.qtrace");
  cmd->add_option("--ncu", args->ncu,
                  "Nsight Compute CSV (details or raw page) whose per-kernel metrics are joined "
                  "onto the kernels by name and launch order");
  cmd->add_flag("--quiet,-q", args->quiet, "Do not print the importer's warnings on stderr");
  cmd->callback([&runner, args] { runner.action = [args] { return RunImport(*args); }; });
}

}  // namespace qprof::cli
