#include "analysis/occupancy/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "fmt/format.h"

namespace qprof::occupancy {
namespace {

// What caps the blocks per SM, in words, and how to lift it.
std::string LimiterRemedy(const proto::KernelLaunch& l) {
  const std::string& by = l.limited_by();
  std::string out;
  if (by.find("registers") != std::string::npos) {
    out += fmt::format("fewer registers per thread (now {}; they cap the SM at {} blocks)",
                       l.registers_per_thread(), l.active_blocks_per_sm());
  }
  if (by.find("shared_memory") != std::string::npos) {
    out += fmt::format("{}less shared memory per block (now {:.1f} KiB; it caps the SM at {} "
                       "blocks)",
                       out.empty() ? "" : "; ", l.shared_mem_bytes() / 1024.0,
                       l.active_blocks_per_sm());
  }
  return out;
}

}  // namespace

void Diagnose(double device_bandwidth_gbps, proto::Profile* profile) {
  const double total = static_cast<double>(profile->totals().kernel_time_ns());
  uint64_t flagged_time = 0, hypothesis_time = 0;
  uint32_t flagged = 0, hypotheses = 0;
  for (proto::KernelRow& k : *profile->mutable_kernels()) {
    k.clear_diagnosis();
    if (!k.has_launch() || k.launch().launches_with_occupancy() == 0) continue;
    // Collectives are bound by the link and pick their block count by channel count.
    if (k.class_() == "comm") continue;
    const proto::KernelLaunch& l = k.launch();
    const int64_t sms = l.sm_count();
    if (sms <= 0 || l.active_blocks_per_sm() == 0) continue;
    const int64_t slots = sms * l.active_blocks_per_sm();
    proto::LatencyDiagnosis d;
    // Where the kernel stands against the memory roof: from its work, else measured.
    if (k.has_achieved_gbps() && device_bandwidth_gbps > 0) {
      d.set_bandwidth_fraction(k.achieved_gbps() / device_bandwidth_gbps);
      d.set_bandwidth_source("work");
    } else if (k.has_dram_throughput_pct()) {
      d.set_bandwidth_fraction(k.dram_throughput_pct() / 100);
      d.set_bandwidth_source("measured");
    }
    const bool has_bw = d.has_bandwidth_fraction();
    const std::string limiter = LimiterRemedy(l);
    const int64_t blocks = static_cast<int64_t>(l.blocks());
    const int64_t idle = std::max<int64_t>(0, sms - blocks);
    const bool streams = has_bw && d.bandwidth_fraction() >= kStreamingFraction;
    // A grid that puts a block on (nearly) every SM is not starved of parallelism: one block
    // per SM at full shared memory is how persistent GEMM kernels are built (cuBLAS sm90).
    const bool fills = static_cast<double>(blocks) >= kFillsSmsFraction * static_cast<double>(sms);
    auto bandwidth_text = [&d]() {
      return fmt::format("; {:.0f}% of the device bandwidth ({})", 100 * d.bandwidth_fraction(),
                         d.bandwidth_source() == "work" ? "from its work" : "measured DRAM throughput");
    };
    if (l.waves() < 1.0 && !fills && (idle > 0 || l.est_occupancy_pct() < kLowOccupancyPct) &&
        !streams) {
      d.set_kind("parallelism_bound");
      std::string ev = fmt::format("{} blocks on {} SMs ({} fit per SM): {:.2f} waves", blocks,
                                   sms, l.active_blocks_per_sm(), l.waves());
      ev += idle > 0 ? fmt::format(", {} SMs idle", idle)
                     : fmt::format(", {:.0f}% of the block slots used", 100.0 * blocks / slots);
      ev += fmt::format("; est. occupancy {:.1f}%", l.est_occupancy_pct());
      if (has_bw) ev += bandwidth_text();
      d.set_evidence(ev);
      std::string remedy = fmt::format(
          "more blocks: {} fill one wave ({} SMs x {}); split the work further (split-K, more "
          "programs per token or head) or put more tokens into each launch",
          slots, sms, l.active_blocks_per_sm());
      if (idle == 0 && !limiter.empty()) remedy += "; or " + limiter;
      d.set_remedy(remedy);
      if (!has_bw) {
        d.set_hypothesis(true);
        d.set_settle(
            "its achieved bandwidth: the bytes it moves (PyTorch profiler record_shapes=True, "
            "or --model-shape for MoE) or ncu's dram__throughput (--ncu); near the bandwidth "
            "roof it is memory-bound, not starved");
      }
    } else if (l.est_occupancy_pct() < kLowOccupancyPct && has_bw &&
               d.bandwidth_fraction() < kFarUnderRooflineFraction) {
      d.set_kind("latency_bound");
      d.set_evidence(fmt::format(
          "est. occupancy {:.1f}% (theoretical {:.1f}%, {} blocks of {} threads per SM) at "
          "{:.0f}% of the device bandwidth ({}) over {:.1f} waves",
          l.est_occupancy_pct(), l.theoretical_occupancy_pct(), l.active_blocks_per_sm(),
          l.threads_per_block(), 100 * d.bandwidth_fraction(),
          d.bandwidth_source() == "work" ? "from its work" : "measured DRAM throughput",
          l.waves()));
      d.set_remedy(limiter.empty()
                       ? "more warps in flight per SM: larger blocks or more loads in flight "
                         "per thread (unrolling, vector loads, cp.async pipelining)"
                       : limiter + "; or more loads in flight per thread");
    } else {
      continue;
    }
    if (d.hypothesis()) {
      hypothesis_time += k.time_ns();
      ++hypotheses;
    } else {
      flagged_time += k.time_ns();
      ++flagged;
    }
    *k.mutable_diagnosis() = std::move(d);
  }
  proto::LaunchSummary* s = profile->mutable_launch_summary();
  s->set_latency_bound_kernels(flagged);
  s->set_latency_bound_time_share(total > 0 ? static_cast<double>(flagged_time) / total : 0);
  s->set_latency_hypothesis_kernels(hypotheses);
  s->set_latency_hypothesis_time_share(total > 0 ? static_cast<double>(hypothesis_time) / total
                                                 : 0);
}

}  // namespace qprof::occupancy
