// Per-architecture limits that decide how many thread blocks an SM can hold: the inputs of
// the CUDA occupancy calculation (analysis/occupancy). One row per compute capability,
// every figure from the CUDA C++ Programming Guide's "Technical Specifications per Compute
// Capability" table and its occupancy discussion, cross-checked against the toolkit's
// header-only calculator `cuda_occupancy.h` (CUDA 13.0) by tests/analysis/occupancy (built only
// where the toolkit is present; this file never includes it).
//
// A trace that reports device properties (Kineto deviceProperties, nsys TARGET_INFO_GPU)
// overrides the per-SM and per-block sizes here (DeviceLimitsFor in
// analysis/occupancy/device_limits.h); the allocation rules (granularities, register
// sub-partitions, shared-memory carveouts, the driver's per-block reserve) come only from
// this table because no trace records them.
#ifndef QPROF_ANALYSIS_DEVICES_ARCH_LIMITS_H_
#define QPROF_ANALYSIS_DEVICES_ARCH_LIMITS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace qprof::devices {

struct ArchLimits {
  int cc_major = 0;
  int cc_minor = 0;
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 0;       // resident threads (max warps x 32)
  int max_blocks_per_sm = 0;        // resident blocks
  int regs_per_sm = 65536;          // 32-bit registers
  int regs_per_block = 65536;
  int max_regs_per_thread = 255;
  // Registers are allocated per warp in units of reg_alloc_unit, and a warp's registers
  // come from one of sub_partitions equal slices of the register file (one per scheduler).
  int reg_alloc_unit = 256;
  int sub_partitions = 4;
  // Shared memory: allocated per block in units of smem_alloc_unit, plus a reserve the
  // driver keeps per block (1 KiB from compute capability 8.0 on); the per-SM capacity is
  // one of `smem_carveouts` (KiB), the L1/shared split the driver picks per launch.
  int smem_alloc_unit = 256;
  int64_t smem_per_sm = 0;          // largest carveout, bytes
  int64_t smem_per_block = 48 * 1024;  // without opt-in
  int64_t smem_per_block_optin = 0;    // with cudaFuncAttributeMaxDynamicSharedMemorySize
  int64_t reserved_smem_per_block = 0;
  std::vector<int> smem_carveouts_kib;
  std::string source;
};

// The row for a compute capability, or nullptr when the table has none (then occupancy is
// not computed and the reason says so; nothing is guessed).
const ArchLimits* FindArchLimits(int cc_major, int cc_minor);

// "sm_90" / "sm_90a" / "sm_120" -> (9, 0) / (12, 0); false when `arch` is not of that form.
bool ParseSmArch(const std::string& arch, int* cc_major, int* cc_minor);

// Every row, in compute-capability order (for tests and `qprof devices`).
const std::vector<ArchLimits>& AllArchLimits();

}  // namespace qprof::devices

#endif  // QPROF_ANALYSIS_DEVICES_ARCH_LIMITS_H_
