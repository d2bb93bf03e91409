// Occupancy, waves and SM fill of one kernel launch, by the CUDA occupancy rules of its
// architecture (analysis/devices/arch_limits.h). No CUDA dependency: this is the same
// arithmetic the toolkit's header-only calculator does, written from the rules, and
// tests/analysis/occupancy compares the two on random configurations where the toolkit exists.
//
// Resident blocks per SM are the smallest of four limits:
//   warps      floor(max warps per SM / warps per block)          (warps = ceil(threads/32))
//   registers  registers are allocated per warp in units of 256 (regs x 32 rounded up) from
//              one of 4 equal sub-partitions of the register file:
//              floor(4 * floor(regs per SM / 4 / regs per warp) / warps per block);
//              0 when a block needs more than the per-block register limit
//   shared     floor(SM capacity / per-block footprint), footprint = static + dynamic + the
//              driver's per-block reserve rounded up to the allocation unit; the capacity
//              is the largest shared-memory carveout (the split the driver may choose);
//              a block above the default 48 KiB opted in and may use up to the opt-in
//              limit; 0 when the footprint exceeds the per-block limit
//   blocks     the architecture's resident-block limit
// (Block-barrier and virtual-resource limits of the toolkit's calculator need per-kernel
// counts no trace records; with one barrier per block they never bind on these
// architectures.)
//
// Per launch on a device with S SMs and A = active blocks per SM, for G blocks of T threads:
//   theoretical occupancy = A * warps per block / max warps per SM
//   waves                 = G / (S * A)
//   last-wave SM fill     = min(S, G - floor-waves * S * A) / S  (1 when the last wave is full)
//   est. achieved occ.    = min(A, G / S) * T / max threads per SM   (Kineto's estimate)
#ifndef QPROF_ANALYSIS_OCCUPANCY_OCCUPANCY_H_
#define QPROF_ANALYSIS_OCCUPANCY_OCCUPANCY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/devices/arch_limits.h"

namespace qprof::occupancy {

// The limits of one device: architecture rules with the sizes the trace reported (when it
// did) and the SM count.
struct DeviceLimits {
  devices::ArchLimits arch;
  int sm_count = 0;
  std::string source;  // where the sizes and the SM count came from
};

struct LaunchConfig {
  int64_t threads_per_block = 0;
  int64_t blocks = 0;
  int registers_per_thread = 0;
  int64_t static_smem = 0;
  int64_t dynamic_smem = 0;
};

struct Occupancy {
  int active_blocks_per_sm = 0;
  int limit_warps = 0, limit_registers = 0, limit_shared = 0, limit_blocks = 0;
  std::string limited_by;          // "warps", "registers+shared_memory", ...
  double theoretical_pct = 0;
  bool shared_optin = false;       // static + dynamic above the default per-block limit
  int64_t shared_per_block = 0;    // allocated footprint
  int64_t registers_per_block = 0; // allocated
};

// InvalidArgument when the launch cannot run under these limits (more threads per block
// than allowed, too many registers or too much shared memory per block) or has no threads.
absl::StatusOr<Occupancy> ComputeOccupancy(const DeviceLimits& d, const LaunchConfig& c);

struct LaunchFill {
  double waves = 0;
  double last_wave_sm_fill = 0;
  int64_t idle_sms_last_wave = 0;
  double est_occupancy_pct = 0;
};

LaunchFill ComputeFill(const DeviceLimits& d, const LaunchConfig& c, const Occupancy& o);

// The smallest carveout of `a` (KiB list) holding `bytes`, in bytes; -1 if none does.
int64_t AlignToCarveout(const devices::ArchLimits& a, int64_t bytes);

}  // namespace qprof::occupancy

#endif  // QPROF_ANALYSIS_OCCUPANCY_OCCUPANCY_H_
