// The in-process collector: CollectorCore with records kept in memory, handed over as a
// proto::Trace at Flush().
#include "profiler/cupti/cupti_collector.h"

#include <algorithm>

#include "profiler/cupti/chip_names.h"
#include "profiler/cupti/collector_callbacks.h"
#include "profiler/cupti/collector_core.h"
#include "profiler/cupti/cupti_api.h"
#include "profiler/cupti/range_profiler.h"
#include "profiler/trace_data_proto.h"

namespace qprof::profiler::cupti {
namespace {

// Kept in memory (default 4M GPU records, roughly 1.2 GB of trace records): a bound for
// long in-process runs; later records are counted as over the cap.
constexpr uint64_t kMaxInMemoryActivities = uint64_t{4} << 20;

CoreOptions ToCoreOptions(const CuptiOptions& o) {
  CoreOptions c;
  c.mode = o.mode == CuptiOptions::Mode::kMetrics ? CoreOptions::Mode::kMetrics
                                                  : CoreOptions::Mode::kTrace;
  c.buffer_bytes = o.buffer_bytes;
  c.max_buffer_bytes = o.max_buffer_bytes;
  c.duration_s = o.duration_s;
  c.max_activities = kMaxInMemoryActivities;
  c.max_metric_kernels = o.max_metric_kernels;
  c.extra_metrics = o.extra_metrics;
  c.metric_set = o.metric_set;
  c.route_nvtx = o.route_nvtx;
  c.activity_without_subscriber = o.activity_without_subscriber;
  c.on_context_teardown = o.on_context_teardown;
  c.capture = o.capture;
  return c;
}

class CuptiCollector : public Collector {
 public:
  CuptiCollector(CuptiApi& api, const CuptiOptions& options)
      : core_(api, ToCoreOptions(options)) {}

  absl::Status Start() override { return ToAbslStatus(core_.Start()); }
  absl::Status Stop() override { return ToAbslStatus(core_.Stop()); }
  absl::Status Flush(proto::Trace* trace) override;

 private:
  CollectorCore core_;
  bool flushed_ = false;
};

absl::Status CuptiCollector::Flush(proto::Trace* trace) {
  if (!core_.started()) return absl::FailedPreconditionError("CUPTI collector was not started");
  if (flushed_) return absl::FailedPreconditionError("CUPTI collector already flushed");
  // Flush() before Stop() would read a trace that is still being written.
  if (!core_.stopped()) return absl::FailedPreconditionError("Flush() before Stop()");
  flushed_ = true;
  DecodedBatch batch;
  core_.TakeRemaining(&batch);
  proto::TraceHeader* header = trace->mutable_header();
  if (header->provenance() == proto::PROVENANCE_UNSPECIFIED) {
    header->set_provenance(proto::PROVENANCE_MEASURED_GPU);
  }
  std::stable_sort(batch.activities.begin(), batch.activities.end(),
                   [](const ActivityData& a, const ActivityData& b) {
                     return a.start_ns < b.start_ns;
                   });
  for (const ActivityData& a : batch.activities) ToProto(a, trace->add_activities());
  for (const RangeData& r : batch.ranges) ToProto(r, trace->add_ranges());
  for (const DeviceData& d : batch.devices) {
    bool present = false;
    for (const proto::DeviceInfo& have : header->devices()) {
      present = present || (have.id() == d.id && have.kind() == "gpu");
    }
    if (!present) ToProto(d, header->add_devices());
  }
  CollectorStatsData stats;
  core_.FillStats(batch.activities.size(), &stats);
  ToProto(stats, header->mutable_collector());
  for (const auto& [key, value] : core_.CaptureSummary()) {
    (*header->mutable_run()->mutable_extra())[key] = value;
  }
  if (core_.metrics_mode()) {
    header->add_notes("metrics pass: kernels were replayed by CUPTI; activity times are not "
                      "measured here (join onto a trace pass)");
  }
  return absl::OkStatus();
}

}  // namespace

void RouteNvtxToCupti() { PointNvtxAtCupti(RealCuptiApi()); }

absl::StatusOr<MetricPassCost> MetricPassCostFor(int cc_major, int cc_minor, MetricSet set) {
  const ChipRow* row = ChipForComputeCapability(cc_major, cc_minor);
  if (row == nullptr) {
    return absl::NotFoundError("no CUPTI chip name known for compute capability " +
                               std::to_string(cc_major) + "." + std::to_string(cc_minor));
  }
  PlanCost cost;
  CoreStatus s = PlanCostOffline(RealCuptiApi(), row->chip, set, {}, &cost);
  if (!s.ok()) return ToAbslStatus(s);
  MetricPassCost out;
  out.chip = row->chip;
  out.products = row->products;
  out.passes = cost.passes;
  out.metrics = cost.plan.metrics;
  return out;
}

absl::StatusOr<std::unique_ptr<Collector>> MakeCuptiCollector(const CuptiOptions& options) {
  return MakeCuptiCollector(options, RealCuptiApi());
}

absl::StatusOr<std::unique_ptr<Collector>> MakeCuptiCollector(const CuptiOptions& options,
                                                              CuptiApi& api) {
  if (options.buffer_bytes < (1u << 20) || options.buffer_bytes > (64u << 20)) {
    return absl::InvalidArgumentError("CUPTI buffer size must be between 1 and 64 MiB");
  }
  if (options.max_buffer_bytes < options.buffer_bytes) {
    return absl::InvalidArgumentError("CUPTI buffer cap is below one buffer");
  }
  if (options.mode == CuptiOptions::Mode::kMetrics && options.max_metric_kernels == 0) {
    return absl::InvalidArgumentError("max_metric_kernels must be positive in metrics mode");
  }
  return std::unique_ptr<Collector>(new CuptiCollector(api, options));
}

}  // namespace qprof::profiler::cupti
