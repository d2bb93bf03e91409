// The C++ objects the Python package wraps: a Profile, a Diff (with the two profiles it
// compares, for its HTML page) and a Trace. Each holds the proto message; the Python side
// reads them as JSON (reports::MessageToJson, the `--json` form) or, for a trace's
// records, as columns.
#ifndef QPROF_PYTHON_SRC_PY_OBJECTS_H_
#define QPROF_PYTHON_SRC_PY_OBJECTS_H_

#include <nanobind/nanobind.h>

#include <string>

#include "proto/diff.pb.h"
#include "proto/profile.pb.h"
#include "proto/trace.pb.h"

namespace qprof::python {

struct PyProfile {
  proto::Profile profile;
};

struct PyDiff {
  proto::Diff diff;
  proto::Profile a, b;
};

struct PyTrace {
  proto::Trace trace;
};

// Any trace qprof reads (api::LoadTraceInput).
PyTrace ReadTraceFile(const std::string& path);

void RegisterObjects(nanobind::module_& m);

}  // namespace qprof::python

#endif  // QPROF_PYTHON_SRC_PY_OBJECTS_H_
