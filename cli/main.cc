// The `qprof` command: parses the command line with CLI11 and runs one subcommand.
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "base/absl_fmt.h"
#include "cli/command.h"
#include "fmt/core.h"

// Register functions, one per subcommand file.
namespace qprof::cli {
void RegisterVersionCommand(CLI::App& app, CommandRunner& runner);
void RegisterRunCommand(CLI::App& app, CommandRunner& runner);
void RegisterRecordCommand(CLI::App& app, CommandRunner& runner);
void RegisterImportCommand(CLI::App& app, CommandRunner& runner);
void RegisterAnalyzeCommand(CLI::App& app, CommandRunner& runner);
void RegisterDiffCommand(CLI::App& app, CommandRunner& runner);
void RegisterMergeCommand(CLI::App& app, CommandRunner& runner);
void RegisterSassCommand(CLI::App& app, CommandRunner& runner);
void RegisterDevicesCommand(CLI::App& app, CommandRunner& runner);
void RegisterQuantizeCommand(CLI::App& app, CommandRunner& runner);
void RegisterCalibrateCommand(CLI::App& app, CommandRunner& runner);
}  // namespace qprof::cli

int main(int argc, char** argv) {
  CLI::App app{
      "qprof: where does LLM decode time go, on tensor cores or CUDA cores, and what "
      "throughput does each quantization format allow on this hardware."};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for all subcommands");
  qprof::cli::CommandRunner runner;
  qprof::cli::RegisterVersionCommand(app, runner);
  qprof::cli::RegisterRunCommand(app, runner);
  qprof::cli::RegisterRecordCommand(app, runner);
  qprof::cli::RegisterImportCommand(app, runner);
  qprof::cli::RegisterAnalyzeCommand(app, runner);
  qprof::cli::RegisterDiffCommand(app, runner);
  qprof::cli::RegisterMergeCommand(app, runner);
  qprof::cli::RegisterSassCommand(app, runner);
  qprof::cli::RegisterDevicesCommand(app, runner);
  qprof::cli::RegisterQuantizeCommand(app, runner);
  qprof::cli::RegisterCalibrateCommand(app, runner);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help on --help (exit 0) and a usage error otherwise.
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (!runner.action) return 0;
  absl::Status status = runner.action();
  if (!status.ok()) {
    fmt::print(stderr, "qprof: error: {}\n", status.message());
    return qprof::cli::ExitCodeFor(status);
  }
  return 0;
}
