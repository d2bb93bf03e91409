// A status for the collector core: the code and one line of text, nothing else.
//
// The core (profiler/cupti minus its in-process adapter, and profiler/inject) runs inside
// other people's processes and links neither Abseil nor protobuf (see trace_data.h), so
// it cannot return absl::Status. The codes are the subset of absl::StatusCode the
// collector uses; cupti_collector.cc converts at the boundary, so in-process callers
// still see absl::Status.
#ifndef QPROF_PROFILER_CORE_STATUS_H_
#define QPROF_PROFILER_CORE_STATUS_H_

#include <string>
#include <utility>

namespace qprof::profiler {

// Same numbering as absl::StatusCode, so the conversion is a cast.
enum class CoreCode : int {
  kOk = 0,
  kInvalidArgument = 3,
  kNotFound = 5,
  kPermissionDenied = 7,
  kFailedPrecondition = 9,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
};

class CoreStatus {
 public:
  CoreStatus() = default;
  CoreStatus(CoreCode code, std::string message) : code_(code), message_(std::move(message)) {
    if (code_ == CoreCode::kOk) message_.clear();
  }
  bool ok() const { return code_ == CoreCode::kOk; }
  CoreCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  CoreCode code_ = CoreCode::kOk;
  std::string message_;
};

inline CoreStatus OkCore() { return CoreStatus(); }

}  // namespace qprof::profiler

// Early return of a failed CoreStatus (the core's RETURN_IF_ERROR).
#define QPROF_CORE_RETURN_IF_ERROR(expr)                     \
  do {                                                      \
    ::qprof::profiler::CoreStatus qprof_core_status = (expr); \
    if (!qprof_core_status.ok()) return qprof_core_status;  \
  } while (0)

#endif  // QPROF_PROFILER_CORE_STATUS_H_
