#include "cli/command.h"

#include <unistd.h>

#include "absl/strings/cord.h"

namespace qprof::cli {
namespace {
// Marks the status of a failed regression gate (a payload: no status code means it).
constexpr char kRegressionPayload[] = "qprof/regression";
}  // namespace

absl::Status RegressionError(const std::string& message) {
  absl::Status s = absl::AbortedError(message);
  s.SetPayload(kRegressionPayload, absl::Cord("1"));
  return s;
}

bool IsRegression(const absl::Status& status) {
  return status.GetPayload(kRegressionPayload).has_value();
}

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return 0;
  if (IsRegression(status)) return kExitRegression;
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
