// qprof._qprof: the Python binding, thin over the C++ libraries. Every figure comes from
// the same code the `qprof` command runs (cli/analysis_request.h, analysis/, reports/);
// the pure-Python package (python/qprof) adds DataFrames, notebook display and Ray.
//
// Long work (reading and analysing traces, diffing files, SASS) runs with the GIL
// released. A failed absl::Status becomes a Python exception with the message the CLI
// prints after "qprof: error: " (status_exceptions.h).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "analysis/diff/diff.h"
#include "cli/analysis_inputs.h"
#include "cli/analysis_request.h"
#include "proto/vocabulary.h"
#include "python/src/py_objects.h"
#include "python/src/status_exceptions.h"
#include "reports/json/json_report.h"
#include "reports/json/json_schema.h"

#ifndef QPROF_VERSION
#define QPROF_VERSION "unknown"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace qprof::python {
namespace {

PyProfile Analyze(const std::vector<std::string>& paths, const std::string& device,
                  const std::vector<std::string>& sass, const std::string& ncu,
                  const std::string& model, const std::string& label) {
  cli::AnalysisRequest request;
  request.inputs = paths;
  request.device = device;
  request.sass_paths = sass;
  request.ncu_csv = ncu;
  request.model = model;
  request.label = label;
  if (paths.empty()) ThrowIfError(absl::InvalidArgumentError("no traces to analyse"));
  return PyProfile{ValueOrThrow(cli::AnalyzeRequest(request))};
}

// A trace of any kind or a Profile JSON report, as `qprof diff` reads its inputs.
PyProfile LoadProfile(const std::string& path, const std::string& device,
                      const std::string& label) {
  AnalyzeOptions options;
  options.known_kernels = cli::RegistryKnownKernels();
  options.device = device;
  options.label = label;
  return PyProfile{ValueOrThrow(cli::LoadProfileInput(path, options))};
}

PyProfile ProfileFromJson(const std::string& text) {
  return PyProfile{ValueOrThrow(reports::ProfileFromJson(text, "profile JSON"))};
}

PyDiff Diff(const PyProfile& a, const PyProfile& b) {
  PyDiff d;
  d.a = a.profile;
  d.b = b.profile;
  d.diff = diff::DiffProfiles(a.profile, b.profile);
  return d;
}

}  // namespace
}  // namespace qprof::python

NB_MODULE(_qprof, m) {
  using namespace qprof::python;
  m.doc() = "qprof's C++ core; use the `qprof` package, not this module directly.";
  RegisterStatusExceptions();
  RegisterObjects(m);

  m.def("analyze", &Analyze, "paths"_a, "device"_a = "", "sass"_a = std::vector<std::string>{},
        "ncu"_a = "", "model"_a = "", "label"_a = "",
        nb::call_guard<nb::gil_scoped_release>(),
        "Reads the traces (any kind qprof reads) and analyses them together, as "
        "`qprof analyze`.");
  m.def("load_profile", &LoadProfile, "path"_a, "device"_a = "", "label"_a = "",
        nb::call_guard<nb::gil_scoped_release>(),
        "A Profile JSON report read back, or a trace analysed: the inputs of `qprof diff`.");
  m.def("profile_from_json", &ProfileFromJson, "text"_a,
        nb::call_guard<nb::gil_scoped_release>());
  m.def("diff", &Diff, "a"_a, "b"_a, nb::call_guard<nb::gil_scoped_release>(),
        "Two profiles matched by role, as `qprof diff`.");
  m.def("read_trace", &ReadTraceFile, "path"_a, nb::call_guard<nb::gil_scoped_release>(),
        "Any trace qprof reads, as qprof's own trace records.");
  m.def("schema", &qprof::reports::ShippedJsonSchema, "name"_a,
        "The JSON Schema of the Profile (\"profile\") or the Diff (\"diff\") JSON.");
  m.attr("__version__") = QPROF_VERSION;
  m.attr("SCHEMA_VERSION") = qprof::kProfileSchemaVersion;
}
