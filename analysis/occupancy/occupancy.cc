#include "analysis/occupancy/occupancy.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace qprof::occupancy {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

}  // namespace

int64_t AlignToCarveout(const devices::ArchLimits& a, int64_t bytes) {
  for (int kib : a.smem_carveouts_kib) {
    if (bytes <= int64_t{kib} * 1024) return int64_t{kib} * 1024;
  }
  return -1;
}

absl::StatusOr<Occupancy> ComputeOccupancy(const DeviceLimits& d, const LaunchConfig& c) {
  const devices::ArchLimits& a = d.arch;
  if (c.threads_per_block <= 0) return absl::InvalidArgumentError("block has no threads");
  if (a.max_threads_per_sm <= 0 || a.warp_size <= 0) {
    return absl::InvalidArgumentError("device limits are missing");
  }
  if (c.threads_per_block > a.max_threads_per_block) {
    return absl::InvalidArgumentError(absl::StrCat(c.threads_per_block, " threads per block > ",
                                                   a.max_threads_per_block));
  }
  Occupancy o;
  const int64_t warps = CeilDiv(c.threads_per_block, a.warp_size);
  const int64_t max_warps = a.max_threads_per_sm / a.warp_size;
  o.limit_warps = static_cast<int>(max_warps / warps);

  // Registers: per warp, rounded to the allocation unit; warps draw from sub-partitions.
  if (c.registers_per_thread > a.max_regs_per_thread) {
    return absl::InvalidArgumentError(absl::StrCat(c.registers_per_thread,
                                                   " registers per thread > ",
                                                   a.max_regs_per_thread));
  }
  const int64_t regs_per_warp = RoundUp(int64_t{c.registers_per_thread} * a.warp_size,
                                        a.reg_alloc_unit);
  o.registers_per_block = regs_per_warp * warps;
  if (regs_per_warp == 0) {
    o.limit_registers = INT_MAX;
  } else {
    // The hardware checks a block against the per-block limit as if its warps were spread
    // over every sub-partition, so the warp count rounds up to a multiple of them.
    if (regs_per_warp * RoundUp(warps, a.sub_partitions) > a.regs_per_block ||
        o.registers_per_block > a.regs_per_block) {
      return absl::InvalidArgumentError(absl::StrCat(
          c.registers_per_thread, " registers x ", c.threads_per_block,
          " threads exceed the per-block register file (", a.regs_per_block, ")"));
    }
    const int64_t warps_per_sub = a.regs_per_sm / a.sub_partitions / regs_per_warp;
    o.limit_registers = static_cast<int>(warps_per_sub * a.sub_partitions / warps);
  }

  // Shared memory: footprint with the driver's reserve, against the per-block limit (the
  // opt-in limit when the kernel uses more than the default) and the SM's carveout.
  const int64_t used = c.static_smem + c.dynamic_smem;
  o.shared_optin = used > a.smem_per_block;
  o.shared_per_block = RoundUp(used + a.reserved_smem_per_block, a.smem_alloc_unit);
  const int64_t block_limit =
      (o.shared_optin ? a.smem_per_block_optin : a.smem_per_block) + a.reserved_smem_per_block;
  if (o.shared_per_block > block_limit) {
    return absl::InvalidArgumentError(absl::StrCat(used, " bytes of shared memory per block > ",
                                                   block_limit - a.reserved_smem_per_block));
  }
  if (o.shared_per_block == 0) {
    o.limit_shared = INT_MAX;
  } else {
    int64_t capacity = AlignToCarveout(a, a.smem_per_sm);
    if (capacity < o.shared_per_block) capacity = AlignToCarveout(a, o.shared_per_block);
    if (capacity < 0) return absl::InvalidArgumentError("shared memory beyond every carveout");
    o.limit_shared = static_cast<int>(capacity / o.shared_per_block);
  }
  o.limit_blocks = a.max_blocks_per_sm;

  o.active_blocks_per_sm =
      std::min({o.limit_warps, o.limit_registers, o.limit_shared, o.limit_blocks});
  const std::pair<int, const char*> limits[] = {{o.limit_warps, "warps"},
                                                {o.limit_registers, "registers"},
                                                {o.limit_shared, "shared_memory"},
                                                {o.limit_blocks, "blocks"}};
  for (const auto& [v, name] : limits) {
    if (v == o.active_blocks_per_sm) absl::StrAppend(&o.limited_by, o.limited_by.empty() ? "" : "+", name);
  }
  o.theoretical_pct = 100.0 * static_cast<double>(o.active_blocks_per_sm * warps) /
                      static_cast<double>(max_warps);
  return o;
}

LaunchFill ComputeFill(const DeviceLimits& d, const LaunchConfig& c, const Occupancy& o) {
  LaunchFill f;
  if (d.sm_count <= 0 || c.blocks <= 0) return f;
  const double sms = d.sm_count;
  const double blocks = static_cast<double>(c.blocks);
  // Kineto's estimate: blocks spread evenly over SMs, capped by what fits.
  const double per_sm = std::min<double>(o.active_blocks_per_sm, blocks / sms);
  f.est_occupancy_pct = 100.0 * per_sm * static_cast<double>(c.threads_per_block) /
                        static_cast<double>(d.arch.max_threads_per_sm);
  if (o.active_blocks_per_sm <= 0) return f;
  const int64_t per_wave = int64_t{d.sm_count} * o.active_blocks_per_sm;
  f.waves = blocks / static_cast<double>(per_wave);
  const int64_t full = c.blocks / per_wave;
  const int64_t rest = c.blocks - full * per_wave;
  // Blocks are handed out across SMs first, so a partial wave of r blocks touches
  // min(r, S) SMs.
  const int64_t busy = rest == 0 ? d.sm_count : std::min<int64_t>(rest, d.sm_count);
  f.last_wave_sm_fill = static_cast<double>(busy) / sms;
  f.idle_sms_last_wave = d.sm_count - busy;
  return f;
}

}  // namespace qprof::occupancy
