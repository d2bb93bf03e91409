// TraceSink: where an importer hands its records, one at a time, as it reads them.
//
// Every importer streams into a sink instead of building a proto::Trace itself, so the
// same reader serves two consumers:
//  - TraceBuilder (below) collects the records into a proto::Trace (ImportFile, `qprof
//    import`), and sorts them into the importers' documented order at the end;
//  - the aggregation (analysis/aggregate/accumulator.h) folds each record into running
//    statistics and keeps nothing per launch, so `qprof analyze` runs in memory bounded by
//    the number of distinct kernels, not by the number of launches.
//
// Contract (what an importer calls, in this order):
//   Begin(header)      once, first: what is known before any record (source path, kind,
//                      provenance; a .qtrace's whole header; devices when the format lists
//                      them up front);
//   Activity(a) and Range(r), any number, interleaved, in any time order (a sink must not
//                      assume records sorted by time); `a`'s nvtx_path and launch_context
//                      are already resolved;
//   LaunchContexts(t)  before the first Activity whose launch_context.stack is in neither
//                      Begin's header nor an earlier call: the trace's frame and stack
//                      tables so far (TraceHeader.launch_context_stats; they only grow), so
//                      a sink can read a launch's stack as it comes;
//   End(header, ...)   once, last: the final header (devices seen, run info, collector
//                      statistics and warnings) and whether the input ended early.
// Reset() may come between Begin and End: the importer starts over (it found its fast path
// does not apply to this input) and will send every record again; Begin is not repeated.
// Sinks are used from one thread at a time.
#ifndef QPROF_ANALYSIS_IMPORTERS_COMMON_TRACE_SINK_H_
#define QPROF_ANALYSIS_IMPORTERS_COMMON_TRACE_SINK_H_

#include <string>

#include "proto/trace.pb.h"

namespace qprof::importers {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void Begin(const proto::TraceHeader& header) = 0;
  virtual void Activity(const proto::Activity& activity) = 0;
  // The same, from an importer that refills `activity` for the next record anyway: the sink
  // may take its contents (swap them out) instead of copying them.
  virtual void TakeActivity(proto::Activity* activity) { Activity(*activity); }
  virtual void Range(const proto::NvtxRange& range) = 0;
  // See the contract above; TraceBuilder takes the tables from End's header.
  virtual void LaunchContexts(const proto::LaunchContextStats& tables) {}
  // `truncation_detail` says where the input was cut (with a byte offset or row when known).
  virtual void End(const proto::TraceHeader& header, bool truncated,
                   const std::string& truncation_detail) = 0;
  virtual void Reset() = 0;
  // False when the sink never reads a kernel's launch configuration (grid, block, registers,
  // shared memory, CUDA graph ids): importers that pay per field read (nsys: one SQLite call
  // per column and row) may then leave those fields unset.
  virtual bool WantsLaunchConfig() const { return true; }
};

// Collects records into a proto::Trace.
class TraceBuilder : public TraceSink {
 public:
  // With sort (the default), activities end up in (start, device, stream) order, ties in
  // the order they came, as every importer documents for ImportFile.
  explicit TraceBuilder(bool sort = true) : sort_(sort) {}
  void Begin(const proto::TraceHeader& header) override;
  void Activity(const proto::Activity& activity) override;
  void TakeActivity(proto::Activity* activity) override;
  void Range(const proto::NvtxRange& range) override;
  void End(const proto::TraceHeader& header, bool truncated,
           const std::string& truncation_detail) override;
  void Reset() override;
  // The trace; call after End.
  proto::Trace Take() { return std::move(trace_); }

 private:
  bool sort_;
  proto::Trace trace_;
};

// Replays a trace in memory into a sink: Begin, its activities and ranges in order, End.
void FeedTrace(const proto::Trace& trace, TraceSink* sink);

// Sorts activities by (start, device, stream), stably, so every importer hands out the same
// order.
void SortActivities(proto::Trace* trace);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_COMMON_TRACE_SINK_H_
