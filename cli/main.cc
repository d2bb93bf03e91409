// The `qprof` command: parses the command line with CLI11 and runs one subcommand.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "CLI/CLI.hpp"
#include "base/absl_fmt.h"
#include "cli/cli_habits.h"
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
std::string VersionText();
}  // namespace qprof::cli

namespace {

// Large buffers (the importers' growing record vectors, their sort buffers) go to mmap and
// back to the system when freed. glibc's default raises its mmap threshold after the first
// such free, so a vector's old copy, freed when it grows, stays in the heap and counts in the
// peak RSS: on the bench's 261 MB Kineto JSON this setting takes 65.7 MB to 64.0 MB at the
// same wall time (bench/ingest_bench.sh). A user's own GLIBC_TUNABLES for malloc wins.
void TuneMalloc() {
#if defined(__GLIBC__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) return;
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
  mallopt(M_TRIM_THRESHOLD, 128 << 10);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  TuneMalloc();
  CLI::App app{
      "qprof: where does LLM decode time go, on tensor cores or CUDA cores, and what "
      "throughput does each quantization format allow on this hardware."};
  app.name("qprof");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for all subcommands");
  app.set_version_flag("--version", qprof::cli::VersionText());
  qprof::cli::CommandRunner runner;
  qprof::cli::RegisterHelpCommand(app, runner);
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
  if (argc < 2) {
    fmt::print("{}", app.help());
    return 2;
  }
  const std::string unknown = qprof::cli::UnknownCommandError(app, argc, argv);
  if (!unknown.empty()) {
    fmt::print(stderr, "qprof: error: {}\n", unknown);
    return 2;
  }
  // `qprof record CMD ARGS...` without `--`, as with nsys profile.
  std::vector<std::string> args(argv, argv + argc);
  if (args[1] == "record") args = qprof::cli::InsertCommandSeparator(*app.get_subcommand("record"), args, 2);
  std::vector<char*> args_c;
  for (std::string& a : args) args_c.push_back(a.data());
  try {
    app.parse(static_cast<int>(args_c.size()), args_c.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, naming the subcommand and where its options are explained.
    std::string sub;
    for (const CLI::App* s : app.get_subcommands()) sub = s->get_name();
    fmt::print(stderr, "qprof: error: {}{} (qprof help{}{})\n", sub.empty() ? "" : sub + ": ",
               e.what(), sub.empty() ? "" : " ", sub);
    return 2;
  }
  if (!runner.action) return 0;
  absl::Status status = runner.action();
  if (!status.ok()) {
    fmt::print(stderr, "qprof: {}{}\n", qprof::cli::IsRegression(status) ? "" : "error: ",
               status.message());
    return qprof::cli::ExitCodeFor(status);
  }
  return 0;
}
