// Our occupancy rules against the CUDA toolkit's header-only calculator (cuda_occupancy.h,
// no runtime, no GPU) on many seeded random launches for several architectures. Built only
// where the toolkit's include directory exists (tests/analysis/occupancy/CMakeLists.txt); analysis/
// itself never includes the header.
#include <cuda_occupancy.h>

#include <random>

#include "analysis/devices/arch_limits.h"
#include "analysis/occupancy/occupancy.h"
#include "gtest/gtest.h"

namespace qprof::occupancy {
namespace {

cudaOccDeviceProp PropsOf(const devices::ArchLimits& a) {
  cudaOccDeviceProp p;
  p.computeMajor = a.cc_major;
  p.computeMinor = a.cc_minor;
  p.maxThreadsPerBlock = a.max_threads_per_block;
  p.maxThreadsPerMultiprocessor = a.max_threads_per_sm;
  p.regsPerBlock = a.regs_per_block;
  p.regsPerMultiprocessor = a.regs_per_sm;
  p.warpSize = a.warp_size;
  p.sharedMemPerBlock = static_cast<size_t>(a.smem_per_block);
  p.sharedMemPerMultiprocessor = static_cast<size_t>(a.smem_per_sm);
  p.numSms = 100;
  p.sharedMemPerBlockOptin = static_cast<size_t>(a.smem_per_block_optin);
  p.reservedSharedMemPerBlock = static_cast<size_t>(a.reserved_smem_per_block);
  return p;
}

struct Counts {
  int compared = 0, impossible = 0;
};

// Active blocks per SM from the toolkit for one launch: static shared memory in the
// function attributes, dynamic at launch, opted in (as a real launch above 48 KiB must be),
// one block barrier (what __syncthreads compiles to).
int ToolkitActive(const cudaOccDeviceProp& prop, int threads, int regs, size_t static_smem,
                  size_t dynamic_smem) {
  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = 1024;
  attr.numRegs = regs;
  attr.sharedSizeBytes = static_smem;
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attr.maxDynamicSharedSizeBytes = dynamic_smem;
  attr.numBlockBarriers = 1;
  attr.virtualResourceCount = 0;
  cudaOccDeviceState state;
  cudaOccResult result;
  cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state,
                                                             threads, dynamic_smem);
  return err == CUDA_OCC_SUCCESS ? result.activeBlocksPerMultiprocessor : -1;
}

TEST(CudaOccupancyCrossCheck, RandomLaunchesOnEveryArchitecture) {
  std::mt19937 rng(20240613);
  for (const devices::ArchLimits& a : devices::AllArchLimits()) {
    const cudaOccDeviceProp prop = PropsOf(a);
    DeviceLimits d;
    d.arch = a;
    d.sm_count = 100;
    Counts n;
    for (int i = 0; i < 4000; ++i) {
      // Thread counts: warp multiples and awkward sizes; registers 0..255; shared memory
      // up to the opt-in limit, split between static and dynamic.
      int threads = (i % 3 == 0) ? 32 * (1 + static_cast<int>(rng() % 32))
                                 : 1 + static_cast<int>(rng() % 1024);
      int regs = static_cast<int>(rng() % 256);
      int64_t smem = (i % 4 == 0) ? 0 : static_cast<int64_t>(rng() % (a.smem_per_block_optin + 1));
      int64_t dyn = smem > 0 ? static_cast<int64_t>(rng() % (smem + 1)) : 0;
      LaunchConfig c;
      c.threads_per_block = threads;
      c.blocks = 1;
      c.registers_per_thread = regs;
      c.static_smem = smem - dyn;
      c.dynamic_smem = dyn;
      const int theirs = ToolkitActive(prop, threads, regs, static_cast<size_t>(smem - dyn),
                                       static_cast<size_t>(dyn));
      auto ours = ComputeOccupancy(d, c);
      SCOPED_TRACE(testing::Message() << "sm_" << a.cc_major << a.cc_minor << " threads "
                                      << threads << " regs " << regs << " smem " << smem
                                      << " (dynamic " << dyn << ")");
      ASSERT_GE(theirs, 0) << "toolkit calculator refused the launch";
      if (!ours.ok()) {
        // We call a launch impossible exactly where the toolkit finds 0 blocks.
        EXPECT_EQ(theirs, 0) << ours.status();
        ++n.impossible;
        continue;
      }
      EXPECT_EQ(ours->active_blocks_per_sm, theirs);
      ++n.compared;
    }
    // Random registers x threads overflow the register file for a good part of the draws;
    // both calculators must then say 0 blocks. Most draws still fit.
    EXPECT_GT(n.compared, 2000) << "sm_" << a.cc_major << a.cc_minor;
    std::printf("sm_%d%d: %d launches agree, %d impossible on both\n", a.cc_major, a.cc_minor,
                n.compared, n.impossible);
  }
}

}  // namespace
}  // namespace qprof::occupancy
