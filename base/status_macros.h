// Status propagation macros. Debian's Abseil (20220623) ships absl::Status but no
// RETURN_IF_ERROR / ASSIGN_OR_RETURN, so they are defined here, once, for the project.
//
//   RETURN_IF_ERROR(DoThing());                 // returns the status if not ok
//   ASSIGN_OR_RETURN(auto value, ParseThing()); // declares value, or returns the error
#ifndef QPROF_BASE_STATUS_MACROS_H_
#define QPROF_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define QPROF_CONCAT_INNER_(a, b) a##b
#define QPROF_CONCAT_(a, b) QPROF_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                                  \
  do {                                                         \
    ::absl::Status qprof_status_ = (expr);                     \
    if (!qprof_status_.ok()) return qprof_status_;             \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, rexpr) \
  QPROF_ASSIGN_OR_RETURN_IMPL_(QPROF_CONCAT_(qprof_statusor_, __LINE__), lhs, rexpr)

#define QPROF_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                 \
  if (!statusor.ok()) return statusor.status();            \
  lhs = std::move(statusor).value()

#endif  // QPROF_BASE_STATUS_MACROS_H_
