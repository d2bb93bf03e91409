// `qprof version` and `qprof --version`: the version and the build options.
#include <string>

#include "CLI/CLI.hpp"
#include "cli/command.h"
#include "fmt/core.h"

#ifndef QPROF_VERSION
#define QPROF_VERSION "unknown"
#endif

namespace qprof::cli {

std::string VersionText() {
#ifdef QPROF_WITH_CUDA
  constexpr const char* kCuda = "yes";
#else
  constexpr const char* kCuda = "no";
#endif
  return fmt::format("qprof {}\nbuilt with CUDA: {}", QPROF_VERSION, kCuda);
}

void RegisterVersionCommand(CLI::App& app, CommandRunner& runner) {
  CLI::App* cmd = app.add_subcommand("version", "Print the qprof version and build options "
                                                "(also: qprof --version)");
  cmd->callback([&runner] {
    runner.action = [] {
      fmt::print("{}\n", VersionText());
      return absl::OkStatus();
    };
  });
}

}  // namespace qprof::cli
