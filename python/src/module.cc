// qprof._qprof: the Python binding, thin over qprof's library API (api/). Every figure comes
// from the same calls the `qprof` command makes (api/analyze.h, api/merge.h, api/diff.h);
// the pure-Python package (python/qprof) adds DataFrames, notebook display and Ray.
//
// Long work (reading and analysing traces, diffing files, SASS) runs with the GIL
// released. A failed absl::Status becomes a Python exception with the message the CLI
// prints after "qprof: error: " (status_exceptions.h).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "api/analyze.h"
#include "api/diff.h"
#include "api/inputs.h"
#include "api/merge.h"
#include "api/report_files.h"
#include "base/file_util.h"
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
                  const std::string& model_shape, const std::string& label,
                  const std::vector<std::string>& graph_capture, uint64_t tokens,
                  uint32_t steps, int threads, const std::string& perfetto) {
  api::AnalyzeRequest request;
  request.inputs = paths;
  request.graph_captures = graph_capture;
  request.device = device;
  request.sass_paths = sass;
  request.ncu_csv = ncu;
  request.model = model_shape;
  request.label = label;
  request.tokens = tokens;
  request.steps = steps;
  request.threads = threads;
  request.perfetto = !perfetto.empty();
  // The outputs are checked before any work, as the command does.
  ThrowIfError(api::CheckOutputs({{"--perfetto", perfetto}}));
  api::AnalyzeResult r = ValueOrThrow(api::Analyze(request));
  if (!perfetto.empty()) ThrowIfError(WriteFileAtomic(perfetto, r.perfetto_json));
  return PyProfile{std::move(r.profile)};
}

// `qprof analyze --partial`: the aggregation state of the traces, as the bytes of a
// .qprofile file (small: distinct kernels, devices, streams and steps, not launches).
// Built with the GIL released; the bytes object is made once it is held again.
nb::bytes AnalyzePartial(const std::vector<std::string>& paths, const std::string& ncu,
                         int threads, const std::vector<std::string>& graph_capture) {
  api::AnalyzeRequest request;
  request.inputs = paths;
  request.graph_captures = graph_capture;
  request.ncu_csv = ncu;
  request.threads = threads;
  std::string bytes;
  {
    nb::gil_scoped_release release;
    bytes = ValueOrThrow(api::AnalyzePartial(request)).bytes;
  }
  return nb::bytes(bytes.data(), bytes.size());
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
                const std::string& model_shape, const std::string& label) {
  api::MergeRequest request;
  request.bytes = Strings(partials);
  request.byte_names = names;
  request.analysis.device = device;
  request.analysis.sass_paths = sass;
  request.analysis.model = model_shape;
  request.analysis.label = label;
  nb::gil_scoped_release release;
  return PyProfile{ValueOrThrow(api::Merge(request))};
}

// `qprof merge --partial`: the partials merged into one, for a reduction in stages.
nb::bytes MergePartials(const std::vector<nb::bytes>& partials,
                        const std::vector<std::string>& names) {
  api::MergeRequest request;
  request.bytes = Strings(partials);
  request.byte_names = names;
  std::string out;
  {
    nb::gil_scoped_release release;
    out = ValueOrThrow(api::MergeToPartial(request)).bytes;
  }
  return nb::bytes(out.data(), out.size());
}

// A trace of any kind or a Profile JSON report, as `qprof diff` reads its inputs.
PyProfile LoadProfile(const std::string& path, const std::string& device,
                      const std::string& label) {
  api::AnalyzeRequest request;
  request.device = device;
  request.label = label;
  const AnalyzeOptions options = ValueOrThrow(api::OptionsFor(request));
  return PyProfile{ValueOrThrow(api::LoadProfileInput(path, options))};
}

PyProfile ProfileFromJson(const std::string& text) {
  return PyProfile{ValueOrThrow(reports::ProfileFromJson(text, "profile JSON"))};
}

// `qprof diff A B` of two files (traces or Profile JSON reports), with every option the
// command has: the same Profiles, labels and Diff as the command.
PyDiff DiffPaths(const std::string& a, const std::string& b, const std::string& label_a,
                 const std::string& label_b, const std::string& ncu_a, const std::string& ncu_b,
                 uint64_t tokens_a, uint64_t tokens_b, uint32_t steps_a, uint32_t steps_b,
                 const std::vector<std::string>& graph_capture_a,
                 const std::vector<std::string>& graph_capture_b, const std::string& ncu,
                 const std::string& device, const std::vector<std::string>& sass,
                 const std::string& model_shape, const std::string& max_regression) {
  api::DiffRequest request;
  request.a = {a, ncu_a, label_a, tokens_a, steps_a, graph_capture_a};
  request.b = {b, ncu_b, label_b, tokens_b, steps_b, graph_capture_b};
  request.analysis.ncu_csv = ncu;
  request.analysis.device = device;
  request.analysis.sass_paths = sass;
  request.analysis.model = model_shape;
  request.max_regression = max_regression;
  api::DiffResult r = ValueOrThrow(api::Diff(request));
  PyDiff d;
  d.a = std::move(r.a);
  d.b = std::move(r.b);
  d.diff = std::move(r.diff);
  return d;
}

// `qprof diff` of two profiles, with the regression gate's verdict when limits are given.
PyDiff Diff(const PyProfile& a, const PyProfile& b, const std::string& max_regression) {
  PyDiff d;
  d.a = a.profile;
  d.b = b.profile;
  d.diff = ValueOrThrow(api::DiffProfiles(a.profile, b.profile, max_regression));
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
        "ncu"_a = "", "model_shape"_a = "", "label"_a = "",
        "graph_capture"_a = std::vector<std::string>{}, "tokens"_a = 0, "steps"_a = 0,
        "threads"_a = 0, "perfetto"_a = "",
        nb::call_guard<nb::gil_scoped_release>(),
        "Reads the traces (any kind qprof reads) and analyses them together, as "
        "`qprof analyze` with the options of the same names.");
  m.def("diff_paths", &DiffPaths, "a"_a, "b"_a, "label_a"_a = "", "label_b"_a = "",
        "ncu_a"_a = "", "ncu_b"_a = "", "tokens_a"_a = 0, "tokens_b"_a = 0, "steps_a"_a = 0,
        "steps_b"_a = 0, "graph_capture_a"_a = std::vector<std::string>{},
        "graph_capture_b"_a = std::vector<std::string>{}, "ncu"_a = "", "device"_a = "",
        "sass"_a = std::vector<std::string>{}, "model_shape"_a = "", "max_regression"_a = "",
        nb::call_guard<nb::gil_scoped_release>(),
        "`qprof diff A B` of two files with the command's options.");
  m.def("analyze_partial", &AnalyzePartial, "paths"_a, "ncu"_a = "", "threads"_a = 0,
        "graph_capture"_a = std::vector<std::string>{},
        "The traces' aggregation state as the bytes of a partial profile, as "
        "`qprof analyze --partial`; threads: the most threads used, files read at once and "
        "the workers of one large file (0: one per core), as `qprof analyze --threads`.");
  m.def("merge", &Merge, "partials"_a, "names"_a = std::vector<std::string>{}, "device"_a = "",
        "sass"_a = std::vector<std::string>{}, "model_shape"_a = "", "label"_a = "",
        "Partial profiles (bytes) merged in order and analysed, as `qprof merge`.");
  m.def("merge_partials", &MergePartials, "partials"_a, "names"_a = std::vector<std::string>{},
        "Partial profiles (bytes) merged in order into one, as `qprof merge --partial`.");
  m.def("load_profile", &LoadProfile, "path"_a, "device"_a = "", "label"_a = "",
        nb::call_guard<nb::gil_scoped_release>(),
        "A Profile JSON report read back, or a trace analysed: the inputs of `qprof diff`.");
  m.def("profile_from_json", &ProfileFromJson, "text"_a,
        nb::call_guard<nb::gil_scoped_release>());
  m.def("diff", &Diff, "a"_a, "b"_a, "max_regression"_a = "",
        nb::call_guard<nb::gil_scoped_release>(),
        "Two profiles matched by role, as `qprof diff`; with max_regression (\"10%\", "
        "\"10%,comm=50%\") the Diff carries the regression gate's verdict.");
  m.def("read_trace", &ReadTraceFile, "path"_a, nb::call_guard<nb::gil_scoped_release>(),
        "Any trace qprof reads, as qprof's own trace records.");
  m.def("schema", &qprof::reports::ShippedJsonSchema, "name"_a,
        "The JSON Schema of the Profile (\"profile\") or the Diff (\"diff\") JSON.");
  m.attr("__version__") = QPROF_VERSION;
  m.attr("SCHEMA_VERSION") = qprof::kProfileSchemaVersion;
}
