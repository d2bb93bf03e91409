// Profile.idle: span, busy and idle time of the GPUs, the gaps between kernels by length and
// by cause (gap_stats.h: HTA's host wait / kernel wait / other), the host's runtime calls and
// the time it sat in synchronising calls when the input recorded them, and whether the work
// looks launch-bound.
//
// Everything comes from the per-device interval unions (their gaps merge exactly) and the
// trace headers, so nothing here is kept per launch.
#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "analysis/aggregate/interval_union.h"
#include "analysis/aggregate/tables.h"
#include "proto/vocabulary.h"

namespace qprof::aggregate {
namespace {

// Idle more than this share of the span: the GPU is not what limits the work.
constexpr double kIdleMostly = 0.5;
// Gaps shorter than this are launch overhead between back-to-back kernels (a launch costs a
// few microseconds on the host; tens when the host is slow or busy).
constexpr uint64_t kShortGapNs = 100'000;

std::string Verdict(const proto::IdleSummary& s) {
  if (s.idle_share() <= kIdleMostly) return "busy";
  return s.short_gap_share() >= 0.5 ? "launch-bound" : "idle";
}

std::string Note(const proto::IdleSummary& s) {
  const double span_ms = static_cast<double>(s.span_ns()) / 1e6;
  std::string n = absl::StrFormat(
      "the GPUs are idle %.1f%% of their span (%.3g ms idle of %.3g ms, in %d gaps between "
      "kernels; %.0f%% of the idle time in gaps shorter than 100 us)",
      100 * s.idle_share(), static_cast<double>(s.idle_ns()) / 1e6, span_ms, s.gap_count(),
      100 * s.short_gap_share());
  if (s.verdict() == "launch-bound") {
    n += ": launch-bound, the GPU waits between many short kernels for the host to launch the "
         "next (fewer, larger kernels or CUDA graphs help)";
  } else if (s.verdict() == "idle") {
    n += ": mostly long gaps, so the GPU waits on something other than launches (the host's "
         "own work, data, synchronisation or a peer); kernel-time shares overstate what "
         "speeding up a kernel gains in wall time";
  } else {
    n += ": kernels cover most of the span";
  }
  return n;
}

void AddHost(const ProfileState& state, proto::IdleSummary* s) {
  proto::HostSummary* h = s->mutable_host();
  std::map<std::string, std::pair<uint64_t, uint64_t>> sync;  // kind -> calls, ns
  for (const TraceState& t : state.traces) {
    const proto::HostCalls& c = t.header.host_calls();
    h->set_runtime_calls(h->runtime_calls() + c.runtime_calls());
    h->set_runtime_ns(h->runtime_ns() + c.runtime_ns());
    h->set_launch_calls(h->launch_calls() + c.launch_calls());
    h->set_launch_ns(h->launch_ns() + c.launch_ns());
    for (const proto::HostSyncCalls& k : c.sync()) {
      sync[k.kind()].first += k.calls();
      sync[k.kind()].second += k.ns();
    }
  }
  for (const auto& [kind, v] : sync) {
    proto::HostSyncRow* r = h->add_sync();
    r->set_kind(kind);
    r->set_calls(v.first);
    r->set_time_ns(v.second);
    h->set_sync_calls(h->sync_calls() + v.first);
    h->set_sync_ns(h->sync_ns() + v.second);
  }
  if (h->runtime_calls() > 0) h->set_provenance(s->provenance());
}

void AddCauses(const GapStats& gaps, proto::IdleSummary* s) {
  if (gaps.count == 0) return;
  for (int i = 0; i < GapStats::kCauses; ++i) {
    proto::IdleCauseRow* r = s->add_causes();
    r->set_cause(GapStats::CauseName(i));
    r->set_gaps(gaps.cause_count[i]);
    r->set_time_ns(gaps.cause_ns[i]);
    r->set_share(gaps.total_ns > 0 ? static_cast<double>(gaps.cause_ns[i]) /
                                         static_cast<double>(gaps.total_ns)
                                   : 0.0);
  }
  s->set_cause_rule(absl::StrFormat(
      "HTA's idle-time categories applied to the kernel that ends each gap on a device: host "
      "wait = its launch call began after the previous kernel ended; kernel wait = launched in "
      "time and the gap is under %d ns (HTA's consecutive_kernel_delay); other = launched in "
      "time but started later (waiting on an event, a peer or a synchronisation); "
      "no_launch_time = the trace has no launch call for it",
      GapStats::kKernelWaitNs));
}

}  // namespace

void EmitIdle(const ProfileState& state, proto::Profile* profile) {
  proto::IdleSummary* s = profile->mutable_idle();
  GapStats gaps;
  uint64_t span = 0, busy = 0, late = 0;
  uint32_t timelines = 0;
  for (const TraceState& t : state.traces) {
    for (const auto& [id, u] : t.devices) {
      if (u.busy.count() == 0) continue;
      ++timelines;
      const uint64_t dev_span = SpanNs(u.busy.first(), u.busy.last());
      const uint64_t dev_busy = std::min(dev_span, u.busy.length());
      span += dev_span;
      busy += dev_busy;
      late += u.busy.late_bound_ns();
      gaps.Merge(u.busy.gaps());
    }
  }
  if (span == 0) return;
  s->set_span_ns(span);
  s->set_device_timelines(timelines);
  s->set_busy_ns(busy);
  s->set_idle_ns(span - busy);
  s->set_idle_share(static_cast<double>(span - busy) / static_cast<double>(span));
  s->set_gap_count(gaps.count);
  s->set_gap_max_ns(gaps.max_ns);
  s->set_gap_error_ns(late);
  uint64_t short_ns = 0;
  for (int i = 0; i < GapStats::kBuckets; ++i) {
    proto::GapBucket* b = s->add_gaps();
    b->set_label(GapStats::BucketLabel(i));
    b->set_min_ns(i == 0 ? 0 : GapStats::kEdgesNs[i - 1]);
    b->set_count(gaps.bucket_count[i]);
    b->set_time_ns(gaps.bucket_ns[i]);
    if (i == 0 || GapStats::kEdgesNs[i - 1] < kShortGapNs) short_ns += gaps.bucket_ns[i];
  }
  s->set_short_gap_share(gaps.total_ns > 0 ? static_cast<double>(short_ns) /
                                                 static_cast<double>(gaps.total_ns)
                                           : 0.0);
  s->set_provenance(profile->totals().provenance());
  s->set_verdict(Verdict(*s));
  s->set_note(Note(*s));
  AddCauses(gaps, s);
  AddHost(state, s);
}

}  // namespace qprof::aggregate
