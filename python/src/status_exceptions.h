// absl::Status -> Python exceptions, with the status message as the CLI prints it:
//   NotFound -> FileNotFoundError, PermissionDenied -> PermissionError (both OSError);
//   InvalidArgument, DataLoss, FailedPrecondition, OutOfRange, Unimplemented,
//   AlreadyExists -> ValueError (bad or unsupported input, the CLI's exit code 2);
//   anything else -> RuntimeError.
// ThrowIfError may run without the GIL: it throws a C++ exception that a translator
// registered here turns into the Python one once nanobind holds the GIL again.
#ifndef QPROF_PYTHON_SRC_STATUS_EXCEPTIONS_H_
#define QPROF_PYTHON_SRC_STATUS_EXCEPTIONS_H_

#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace qprof::python {

class StatusError : public std::runtime_error {
 public:
  explicit StatusError(const absl::Status& s)
      : std::runtime_error(std::string(s.message())), code_(s.code()) {}
  absl::StatusCode code() const { return code_; }

 private:
  absl::StatusCode code_;
};

inline void ThrowIfError(const absl::Status& s) {
  if (!s.ok()) throw StatusError(s);
}

template <typename T>
T ValueOrThrow(absl::StatusOr<T> v) {
  ThrowIfError(v.status());
  return *std::move(v);
}

// Installs the translator; call once from the module's init.
void RegisterStatusExceptions();

}  // namespace qprof::python

#endif  // QPROF_PYTHON_SRC_STATUS_EXCEPTIONS_H_
