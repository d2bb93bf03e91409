#include "CLI/CLI.hpp"
#include "cli/command.h"
#include "fmt/core.h"

#ifndef QPROF_VERSION
#define QPROF_VERSION "unknown"
#endif

namespace qprof::cli {

void RegisterVersionCommand(CLI::App& app, CommandRunner& runner) {
  CLI::App* cmd = app.add_subcommand("version", "Print the qprof version and build options");
  cmd->callback([&runner] {
    runner.action = [] {
      fmt::print("qprof {}\n", QPROF_VERSION);
#ifdef QPROF_WITH_CUDA
      fmt::print("built with CUDA: yes\n");
#else
      fmt::print("built with CUDA: no\n");
#endif
      return absl::OkStatus();
    };
  });
}

}  // namespace qprof::cli
