// `qprof import INPUT [--qtrace FILE | --out DIR] [--ncu CSV]`: reads any input qprof
// understands (Nsight Systems SQLite, PyTorch profiler JSON[.gz], Nsight Compute CSV,
// .qtrace), prints a one-line summary (kind, kernels, total kernel time) and writes it as a
// .qtrace: to FILE, or into DIR named after the input (`--out` is a folder in every
// subcommand).
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "api/import.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/profile_output.h"
#include "fmt/core.h"

namespace qprof::cli {
namespace {

struct ImportArgs {
  api::ImportRequest request;
  bool quiet = false;
};

absl::Status RunImport(const ImportArgs& args) {
  api::ImportRequest request = args.request;
  request.on_note = PrintNote;
  ASSIGN_OR_RETURN(api::ImportResult r, api::Import(request));
  const proto::CollectorStats& c = r.trace.header().collector();
  fmt::print("{}: {}: {} kernels, kernel time {:.6f} ms ({} ns), {} memcpy, {} memset, "
             "{} devices, {} ranges, {} warnings\n",
             request.input, r.trace.header().source_kind(), r.kernels, r.kernel_ns / 1e6,
             r.kernel_ns, r.memcpys, r.memsets, r.trace.header().devices_size(),
             r.trace.ranges_size(), c.warnings_size());
  if (!args.quiet) {
    for (const std::string& w : c.warnings()) fmt::print(stderr, "qprof: warning: {}\n", w);
  }
  if (!r.written.empty()) fmt::print(stderr, "qprof: wrote {}\n", r.written);
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
  cmd->add_option("INPUT", args->request.input, "Trace file to read")->required();
  cmd->add_option("--qtrace", args->request.qtrace_path,
                  "Write the imported trace to this .qtrace file (atomically)");
  cmd->add_option("--out,-o", args->request.out_dir,
                  "Write the imported trace into this folder (created if missing) as "
                  "<input name>.qtrace");
  cmd->add_option("--ncu", args->request.ncu,
                  "Nsight Compute CSV (details or raw page) whose per-kernel metrics are joined "
                  "onto the kernels by name and launch order");
  cmd->add_flag("--quiet,-q", args->quiet, "Do not print the importer's warnings on stderr");
  cmd->callback([&runner, args] { runner.action = [args] { return RunImport(*args); }; });
}

}  // namespace qprof::cli
