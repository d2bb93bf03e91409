#include "python/src/status_exceptions.h"

#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace qprof::python {
namespace {

PyObject* ExceptionFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kNotFound:
      return PyExc_FileNotFoundError;
    case absl::StatusCode::kPermissionDenied:
      return PyExc_PermissionError;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kAlreadyExists:
      return PyExc_ValueError;
    default:
      return PyExc_RuntimeError;
  }
}

}  // namespace

void RegisterStatusExceptions() {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError& e) {
      PyErr_SetString(ExceptionFor(e.code()), e.what());
    }
  });
}

}  // namespace qprof::python
