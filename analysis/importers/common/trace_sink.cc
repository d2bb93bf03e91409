#include "analysis/importers/common/trace_sink.h"

#include <algorithm>

namespace qprof::importers {

void TraceBuilder::Begin(const proto::TraceHeader& header) { *trace_.mutable_header() = header; }

void TraceBuilder::Activity(const proto::Activity& activity) {
  *trace_.add_activities() = activity;
}

void TraceBuilder::TakeActivity(proto::Activity* activity) {
  trace_.add_activities()->Swap(activity);
}

void TraceBuilder::Range(const proto::NvtxRange& range) { *trace_.add_ranges() = range; }

void TraceBuilder::End(const proto::TraceHeader& header, bool truncated,
                       const std::string& truncation_detail) {
  *trace_.mutable_header() = header;
  trace_.set_truncated(truncated);
  if (truncated) trace_.set_truncation_detail(truncation_detail);
  if (sort_) SortActivities(&trace_);
}

void TraceBuilder::Reset() {
  trace_.clear_activities();
  trace_.clear_ranges();
}

void FeedTrace(const proto::Trace& trace, TraceSink* sink) {
  sink->Begin(trace.header());
  for (const proto::Activity& a : trace.activities()) sink->Activity(a);
  for (const proto::NvtxRange& r : trace.ranges()) sink->Range(r);
  sink->End(trace.header(), trace.truncated(), trace.truncation_detail());
}

void SortActivities(proto::Trace* trace) {
  auto* acts = trace->mutable_activities();
  std::stable_sort(acts->pointer_begin(), acts->pointer_end(),
                   [](const proto::Activity* a, const proto::Activity* b) {
                     if (a->start_ns() != b->start_ns()) return a->start_ns() < b->start_ns();
                     if (a->device_id() != b->device_id()) return a->device_id() < b->device_id();
                     return a->stream_id() < b->stream_id();
                   });
}

}  // namespace qprof::importers
