#include "profiler/cupti/cupti_call.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace qprof::profiler::cupti {

std::string CuptiResultName(CUptiResult result) {
  const char* name = nullptr;
  if (cuptiGetResultString(result, &name) == CUPTI_SUCCESS && name != nullptr) return name;
  return absl::StrCat("CUPTI error ", static_cast<int>(result));
}

absl::StatusCode StatusCodeFor(CUptiResult result) {
  switch (result) {
    case CUPTI_SUCCESS:
      return absl::StatusCode::kOk;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return absl::StatusCode::kPermissionDenied;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return absl::StatusCode::kFailedPrecondition;
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_HARDWARE_BUSY:
      return absl::StatusCode::kUnavailable;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_API_NOT_IMPLEMENTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      return absl::StatusCode::kUnimplemented;
    default:
      return absl::StatusCode::kInternal;
  }
}

void LogWarning(const std::string& line) {
  static const bool quiet = std::getenv("QPROF_CUPTI_QUIET") != nullptr;
  if (!quiet) std::fprintf(stderr, "qprof[cupti]: %s\n", line.c_str());
}

absl::Status CuptiCall(CUptiResult result, const char* call, Severity severity) {
  if (result == CUPTI_SUCCESS) return absl::OkStatus();
  const char* message = nullptr;
  std::string text = absl::StrCat(call, ": ", CuptiResultName(result), " (",
                                  static_cast<int>(result), ")");
  if (cuptiGetErrorMessage(result, &message) == CUPTI_SUCCESS && message != nullptr) {
    absl::StrAppend(&text, ": ", message);
  }
  if (severity == Severity::kWarn) LogWarning(absl::StrCat("warning: ", text));
  return absl::Status(StatusCodeFor(result), text);
}

}  // namespace qprof::profiler::cupti
