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

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "analysis/aggregate/partial.h"
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
                  const std::string& model, const std::string& label,
                  const std::vector<std::string>& graph_capture) {
  cli::AnalysisRequest request;
  request.inputs = paths;
  request.graph_captures = graph_capture;
  request.device = device;
  request.sass_paths = sass;
  request.ncu_csv = ncu;
  request.model = model;
  request.label = label;
  if (paths.empty()) ThrowIfError(absl::InvalidArgumentError("no traces to analyse"));
  return PyProfile{ValueOrThrow(cli::AnalyzeRequest(request))};
}

// `qprof analyze --partial`: the aggregation state of the traces, as the bytes of a
// .qprofile file (small: distinct kernels, devices, streams and steps, not launches).
// Built with the GIL released; the bytes object is made once it is held again.
nb::bytes AnalyzePartial(const std::vector<std::string>& paths, const std::string& ncu,
                         int threads, const std::vector<std::string>& graph_capture) {
  cli::AnalysisRequest request;
  request.inputs = paths;
  request.graph_captures = graph_capture;
  request.ncu_csv = ncu;
  request.threads = threads;
  std::string bytes;
  {
    nb::gil_scoped_release release;
    aggregate::ProfileState state = ValueOrThrow(cli::AccumulateRequest(request));
    bytes = ValueOrThrow(aggregate::PartialBytes(state));
  }
  return nb::bytes(bytes.data(), bytes.size());
}

// Partial profiles (bytes of .qprofile files; `names` say which in errors) merged in order.
aggregate::ProfileState MergedState(const std::vector<std::string>& partials,
                                    const std::vector<std::string>& names) {
  if (partials.empty()) ThrowIfError(absl::InvalidArgumentError("no partial profiles to merge"));
  aggregate::ProfileState state;
  for (size_t i = 0; i < partials.size(); ++i) {
    const std::string what = i < names.size() ? names[i] : "partial " + std::to_string(i);
    state.Merge(ValueOrThrow(aggregate::ParsePartialBytes(partials[i], what)));
  }
  return state;
}

// The bytes objects copied into strings while the GIL is held.
std::vector<std::string> Strings(const std::vector<nb::bytes>& partials) {
  std::vector<std::string> out;
  out.reserve(partials.size());
  for (const nb::bytes& b : partials) out.emplace_back(b.c_str(), b.size());
  return out;
}

// `qprof merge`: the partials merged in order and analysed; the same Profile as analysing
// all their traces at once.
PyProfile Merge(const std::vector<nb::bytes>& partials, const std::vector<std::string>& names,
                const std::string& device, const std::vector<std::string>& sass,
                const std::string& model, const std::string& label) {
  std::vector<std::string> bytes = Strings(partials);
  nb::gil_scoped_release release;
  cli::AnalysisRequest request;
  request.device = device;
  request.sass_paths = sass;
  request.model = model;
  request.label = label;
  AnalyzeOptions options = ValueOrThrow(cli::OptionsForRequest(request));
  return PyProfile{ValueOrThrow(AnalyzeState(MergedState(bytes, names), options))};
}

// `qprof merge --partial`: the partials merged into one, for a reduction in stages.
nb::bytes MergePartials(const std::vector<nb::bytes>& partials,
                        const std::vector<std::string>& names) {
  std::vector<std::string> bytes = Strings(partials);
  std::string out;
  {
    nb::gil_scoped_release release;
    out = ValueOrThrow(aggregate::PartialBytes(MergedState(bytes, names)));
  }
  return nb::bytes(out.data(), out.size());
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
        "graph_capture"_a = std::vector<std::string>{},
        nb::call_guard<nb::gil_scoped_release>(),
        "Reads the traces (any kind qprof reads) and analyses them together, as "
        "`qprof analyze`; graph_capture: traces taken while CUDA graphs were captured "
        "(`--graph-capture`).");
  m.def("analyze_partial", &AnalyzePartial, "paths"_a, "ncu"_a = "", "threads"_a = 0,
        "graph_capture"_a = std::vector<std::string>{},
        "The traces' aggregation state as the bytes of a partial profile, as "
        "`qprof analyze --partial`; threads: files read at once (0: one per core).");
  m.def("merge", &Merge, "partials"_a, "names"_a = std::vector<std::string>{}, "device"_a = "",
        "sass"_a = std::vector<std::string>{}, "model"_a = "", "label"_a = "",
        "Partial profiles (bytes) merged in order and analysed, as `qprof merge`.");
  m.def("merge_partials", &MergePartials, "partials"_a, "names"_a = std::vector<std::string>{},
        "Partial profiles (bytes) merged in order into one, as `qprof merge --partial`.");
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
