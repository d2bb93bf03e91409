// How subcommands plug into the `qprof` binary.
//
// Each subcommand lives in its own file (cli/<name>_command.cc) and exposes one
// Register function. The function adds a CLI11 subcommand with its options (stored in
// a shared_ptr the callback captures) and, when the subcommand is chosen, sets
// `runner.action`. main() parses the command line and then runs the chosen action,
// turning a non-ok status into one error line and a non-zero exit code.
#ifndef QPROF_CLI_COMMAND_H_
#define QPROF_CLI_COMMAND_H_

#include <functional>

#include "absl/status/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace qprof::cli {

struct CommandRunner {
  std::function<absl::Status()> action;
};

// Exit codes: 0 ok; 2 bad input (malformed, missing, wrong kind, invalid option);
// 1 anything else (internal errors, unavailable hardware).
int ExitCodeFor(const absl::Status& status);

// True when stderr is a terminal (progress bars, colour).
bool StderrIsTty();
bool StdoutIsTty();

}  // namespace qprof::cli

#endif  // QPROF_CLI_COMMAND_H_
