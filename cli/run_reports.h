// The report-writing half of `qprof run`: after the formats ran and their traces were
// written, analyse each trace and write, into the output folder (atomically):
//   <format>.json, <format>.html, <format>.perfetto.json   per format
//   diff.json, diff.html                                  when two formats ran (A = first)
// and, when a modelled GPU projection was written beside host measurements, the same per
// projected trace plus diff.<suffix>.json/.html, shown on the main diff page as modelled.
// Prints where the files are and the diff's headline.
#ifndef QPROF_CLI_RUN_REPORTS_H_
#define QPROF_CLI_RUN_REPORTS_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/trace.pb.h"

namespace qprof::cli {

struct FormatRunOutput {
  std::string format;      // "mxfp4", "nvfp4"
  proto::Trace trace;      // as written to trace_path
  std::string trace_path;  // <out>/<format>.qtrace
};

// `projection_traces`: .qtrace files of a modelled projection (may be empty); they are
// paired by format in the order given. `ceiling_device`: spec-table device for the rooflines
// of `runs` (`qprof run --target`, so host-CPU reports and the projection name one GPU);
// "" = the analyzer's default (the trace's own device, else kDefaultProjectionDevice).
absl::Status WriteRunReports(const std::vector<FormatRunOutput>& runs,
                             const std::vector<std::string>& projection_traces,
                             const std::string& out_dir, std::FILE* out,
                             const std::string& ceiling_device = "");

// One line of the progress display for decode step `step` of `steps` of format number
// `index` (0-based) of `count`: "[1/2 mxfp4] [#######.......]  step 3/8". Fits `width`.
std::string RunProgressLine(const std::string& format, int index, int count, int step,
                            int steps, int width = 60);

}  // namespace qprof::cli

#endif  // QPROF_CLI_RUN_REPORTS_H_
