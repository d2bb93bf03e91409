#include "profiler/cupti/cupti_call.h"

#include <cstdio>
#include <cstdlib>

namespace qprof::profiler::cupti {

std::string CuptiResultName(CuptiApi& api, CUptiResult result) {
  const char* name = nullptr;
  if (api.GetResultString(result, &name) == CUPTI_SUCCESS && name != nullptr) return name;
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

CoreCode StatusCodeFor(CUptiResult result) {
  switch (result) {
    case CUPTI_SUCCESS:
      return CoreCode::kOk;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return CoreCode::kPermissionDenied;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return CoreCode::kFailedPrecondition;
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_HARDWARE_BUSY:
      return CoreCode::kUnavailable;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_API_NOT_IMPLEMENTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      return CoreCode::kUnimplemented;
    default:
      return CoreCode::kInternal;
  }
}

void LogWarning(const std::string& line) {
  static const bool quiet = std::getenv("QPROF_CUPTI_QUIET") != nullptr;
  if (!quiet) std::fprintf(stderr, "qprof[cupti]: %s\n", line.c_str());
}

CoreStatus CuptiCall(CuptiApi& api, CUptiResult result, const char* call, Severity severity) {
  if (result == CUPTI_SUCCESS) return OkCore();
  std::string text = std::string(call) + ": " + CuptiResultName(api, result) + " (" +
                     std::to_string(static_cast<int>(result)) + ")";
  const char* message = nullptr;
  if (api.GetErrorMessage(result, &message) == CUPTI_SUCCESS && message != nullptr) {
    text += std::string(": ") + message;
  }
  if (severity == Severity::kWarn) LogWarning("warning: " + text);
  return CoreStatus(StatusCodeFor(result), text);
}

}  // namespace qprof::profiler::cupti
