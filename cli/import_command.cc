// `qprof import INPUT [--out FILE.qtrace] [--ncu CSV]`: reads any input qprof understands
// (Nsight Systems SQLite, PyTorch profiler JSON[.gz], Nsight Compute CSV, .qtrace), prints
// a one-line summary (kind, kernels, total kernel time) and writes it as a .qtrace.
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "analysis/importers/import.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "fmt/core.h"
#include "proto/trace_io.h"

namespace qprof::cli {
namespace {

struct ImportArgs {
  std::string input;
  std::string out;
  std::string ncu;
  bool quiet = false;
};

absl::Status RunImport(const ImportArgs& args) {
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
  if (!args.out.empty()) {
    RETURN_IF_ERROR(WriteTrace(trace, args.out));
    fmt::print(stderr, "qprof: wrote {}\n", args.out);
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
  cmd->add_option("--out,-o", args->out,
                  "Write the imported trace to this .qtrace file (atomically)");
  cmd->add_option("--ncu", args->ncu,
                  "Nsight Compute CSV (details or raw page) whose per-kernel metrics are joined "
                  "onto the kernels by name and launch order");
  cmd->add_flag("--quiet,-q", args->quiet, "Do not print the importer's warnings on stderr");
  cmd->callback([&runner, args] { runner.action = [args] { return RunImport(*args); }; });
}

}  // namespace qprof::cli
