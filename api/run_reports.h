// The report-writing half of `qprof run`: after the formats ran and their traces were
// written, analyse each trace and write, into the output folder (atomically):
//   <format>.json, <format>.html, <format>.perfetto.json   per format
//   diff.json, diff.html                                  when two formats ran (A = first)
// and, when a modelled GPU projection was written beside host measurements, the same per
// projected trace plus diff.<suffix>.json/.html, shown on the main diff page as modelled.
// Returns the text that says where the files are and the diff's headline, for the caller to
// print.
#ifndef QPROF_API_RUN_REPORTS_H_
#define QPROF_API_RUN_REPORTS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/trace.pb.h"

namespace qprof::api {

struct FormatRunOutput {
  std::string format;      // "mxfp4", "nvfp4"
  proto::Trace trace;      // as written to trace_path
  std::string trace_path;  // <out>/<format>.qtrace
};

// `projection_traces`: .qtrace files of a modelled projection (may be empty); they are
// paired by format in the order given. `ceiling_device`: spec-table device for the rooflines
// of `runs` (`qprof run --target`, so host-CPU reports and the projection name one GPU);
// "" = the analyzer's default (the trace's own device, else kDefaultProjectionDevice).
// `stage` gets a line as each stage starts ("analysing mxfp4 ...").
absl::StatusOr<std::string> WriteRunReports(
    const std::vector<FormatRunOutput>& runs, const std::vector<std::string>& projection_traces,
    const std::string& out_dir, const std::string& ceiling_device = "",
    const std::function<void(const std::string&)>& stage = {});

}  // namespace qprof::api

#endif  // QPROF_API_RUN_REPORTS_H_
