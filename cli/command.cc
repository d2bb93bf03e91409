#include "cli/command.h"

#include <unistd.h>

namespace qprof::cli {

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return 0;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kAlreadyExists:
      return 2;
    default:
      return 1;
  }
}

bool StderrIsTty() { return isatty(STDERR_FILENO) == 1; }
bool StdoutIsTty() { return isatty(STDOUT_FILENO) == 1; }

}  // namespace qprof::cli
