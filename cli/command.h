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
#include <string>

#include "absl/status/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace qprof::cli {

struct CommandRunner {
  std::function<absl::Status()> action;
};

// Exit codes: 0 ok; 2 bad input (malformed, missing, wrong kind, invalid option);
// 3 a regression past `qprof diff --max-regression`'s limits (RegressionError);
// 1 anything else (internal errors, unavailable hardware).
inline constexpr int kExitRegression = 3;
int ExitCodeFor(const absl::Status& status);

// The status a failed regression gate returns: main() prints "qprof: <message>" (it is a
// verdict, not an error) and exits with kExitRegression.
absl::Status RegressionError(const std::string& message);
bool IsRegression(const absl::Status& status);

// True when stderr is a terminal (progress bars, colour).
bool StderrIsTty();
bool StdoutIsTty();

}  // namespace qprof::cli

#endif  // QPROF_CLI_COMMAND_H_
