// Chrome/Perfetto trace-event JSON from a qprof Trace, for ui.perfetto.dev or
// chrome://tracing (`qprof analyze --perfetto OUT`, `<format>.perfetto.json` of `qprof run`).
//
// Layout:
// - One process per device ("GPU 0: NVIDIA H200"), one thread (track) per stream. Events on
//   one track must nest, so work that overlaps without nesting (concurrent kernels of one
//   stream as seen through graphs, clock jitter) moves to an extra track of that stream,
//   "stream 7 (overlap 2)". Placement is greedy, in start order.
// - NVTX ranges go to their own process "NVTX ranges", one track per launching thread,
//   with the same nesting rule.
// - ts/dur are microseconds with nanosecond decimals, relative to the earliest start in the
//   trace; that origin (ns on the trace's clock) is in otherData.time_origin_ns, so
//   ts * 1000 + time_origin_ns is the record's start_ns exactly.
// - Strings are escaped; invalid UTF-8 becomes U+FFFD so the JSON is always valid.
#ifndef QPROF_REPORTS_PERFETTO_PERFETTO_EXPORT_H_
#define QPROF_REPORTS_PERFETTO_PERFETTO_EXPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/trace.pb.h"

namespace qprof::reports {

std::string TraceToPerfettoJson(const proto::Trace& trace);
absl::Status WritePerfettoJson(const proto::Trace& trace, const std::string& path);

// Several traces in one file (e.g. one per rank, each on its own clock): trace i's
// processes are numbered from i * 2000000 and named after its source file; otherData.inputs
// lists each trace's pid base and time origin.
std::string TracesToPerfettoJson(const std::vector<const proto::Trace*>& traces);
absl::Status WritePerfettoJson(const std::vector<const proto::Trace*>& traces,
                               const std::string& path);

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_PERFETTO_PERFETTO_EXPORT_H_
