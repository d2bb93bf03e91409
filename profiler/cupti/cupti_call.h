// The one wrapper around CUPTI calls. Every call goes through CuptiCall(), which turns a
// CUptiResult into a CoreStatus whose message names the call and CUPTI's error string,
// and logs failures on stderr with a "qprof[cupti]" prefix. The call site says whether a
// failure is fatal for what it is doing:
//
//   QPROF_CORE_RETURN_IF_ERROR(
//       QPROF_CUPTI_FATAL(api, api.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)));
//   QPROF_CUPTI_WARN(api, api.ActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD));  // keep going
//
// Fatal failures are logged by whoever reports the returned status (not here, to avoid
// printing them twice); warnings are logged here because nobody else will.
// Set QPROF_CUPTI_QUIET=1 to silence warnings (e.g. in tests).
#ifndef QPROF_PROFILER_CUPTI_CUPTI_CALL_H_
#define QPROF_PROFILER_CUPTI_CUPTI_CALL_H_

#include <string>

#include "profiler/core_status.h"
#include "profiler/cupti/cupti_api.h"

namespace qprof::profiler::cupti {

enum class Severity { kFatal, kWarn };

// OK for CUPTI_SUCCESS; otherwise a status (code from StatusCodeFor) whose message is
// "<call>: <CUPTI error name> (<code>): <description>".
CoreStatus CuptiCall(CuptiApi& api, CUptiResult result, const char* call, Severity severity);

// CUPTI's name for a result ("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"), or "CUPTI error N".
std::string CuptiResultName(CuptiApi& api, CUptiResult result);

// Insufficient privileges -> PermissionDenied; another subscriber -> FailedPrecondition;
// no device / no driver / not initialised -> Unavailable; unsupported -> Unimplemented;
// anything else -> Internal.
CoreCode StatusCodeFor(CUptiResult result);

// Logs one line on stderr unless QPROF_CUPTI_QUIET is set. Safe from any thread.
void LogWarning(const std::string& line);

}  // namespace qprof::profiler::cupti

#define QPROF_CUPTI_FATAL(api, expr) \
  ::qprof::profiler::cupti::CuptiCall((api), (expr), #expr, ::qprof::profiler::cupti::Severity::kFatal)
#define QPROF_CUPTI_WARN(api, expr) \
  ::qprof::profiler::cupti::CuptiCall((api), (expr), #expr, ::qprof::profiler::cupti::Severity::kWarn)

#endif  // QPROF_PROFILER_CUPTI_CUPTI_CALL_H_
