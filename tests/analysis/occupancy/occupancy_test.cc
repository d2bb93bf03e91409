// The occupancy calculator on launches worked out by hand from the CUDA occupancy rules
// (the arithmetic is in each test's comment), and the fill formulas.
#include "analysis/occupancy/occupancy.h"

#include "analysis/devices/arch_limits.h"
#include "analysis/devices/device_specs.h"
#include "analysis/occupancy/device_limits.h"
#include "gtest/gtest.h"

namespace qprof::occupancy {
namespace {

DeviceLimits Arch(int major, int minor, int sms) {
  DeviceLimits d;
  d.arch = *devices::FindArchLimits(major, minor);
  d.sm_count = sms;
  return d;
}

LaunchConfig Cfg(int64_t threads, int64_t blocks, int regs, int64_t smem) {
  LaunchConfig c;
  c.threads_per_block = threads;
  c.blocks = blocks;
  c.registers_per_thread = regs;
  c.static_smem = smem;
  return c;
}

TEST(Occupancy, A100CutlassGemmWithSharedMemoryOptIn) {
  // 128 threads = 4 warps; 144 regs x 32 = 4608 per warp (a multiple of 256); a quarter of
  // the register file (16384) holds 3 warps -> 12 warps per SM -> 3 blocks. Shared memory:
  // 73728 + 1024 reserve = 74752 per block, 164 KiB carveout / 74752 = 2 blocks. Warps:
  // 64 / 4 = 16; blocks 32. So 2 blocks (shared memory), 8 of 64 warps = 12.5%.
  DeviceLimits d = Arch(8, 0, 108);
  auto o = ComputeOccupancy(d, Cfg(128, 64, 144, 73728));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->limit_registers, 3);
  EXPECT_EQ(o->limit_shared, 2);
  EXPECT_EQ(o->limit_warps, 16);
  EXPECT_EQ(o->active_blocks_per_sm, 2);
  EXPECT_EQ(o->limited_by, "shared_memory");
  EXPECT_TRUE(o->shared_optin);
  EXPECT_DOUBLE_EQ(o->theoretical_pct, 12.5);
  LaunchFill f = ComputeFill(d, Cfg(128, 64, 144, 73728), *o);
  EXPECT_NEAR(f.waves, 64.0 / 216.0, 1e-12);
  // Kineto: min(2, 64/108) x 128 / 2048.
  EXPECT_NEAR(f.est_occupancy_pct, 100.0 * (64.0 / 108.0) * 128 / 2048, 1e-9);
  EXPECT_NEAR(f.last_wave_sm_fill, 64.0 / 108.0, 1e-12);
  EXPECT_EQ(f.idle_sms_last_wave, 44);
}

TEST(Occupancy, H100HopperGemmOneBlockPerSm) {
  // 384 threads = 12 warps; 168 x 32 = 5376 regs per warp; 16384 / 5376 = 3 warps per
  // sub-partition -> 12 per SM -> 1 block. Shared: 231424 + 1024 = 227 KiB of 228 -> 1.
  DeviceLimits d = Arch(9, 0, 132);
  auto o = ComputeOccupancy(d, Cfg(384, 120, 168, 231424));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->active_blocks_per_sm, 1);
  EXPECT_EQ(o->limited_by, "registers+shared_memory");
  EXPECT_DOUBLE_EQ(o->theoretical_pct, 100.0 * 12 / 64);
  LaunchFill f = ComputeFill(d, Cfg(384, 120, 168, 231424), *o);
  EXPECT_NEAR(f.waves, 120.0 / 132.0, 1e-12);
  EXPECT_EQ(f.idle_sms_last_wave, 12);
  EXPECT_NEAR(f.est_occupancy_pct, 100.0 * (120.0 / 132.0) * 384 / 2048, 1e-9);
}

TEST(Occupancy, Sm120SmallGridOfTheStory) {
  // 128 threads, 64 regs, no shared memory on 188 SMs: 64 x 32 = 2048 regs per warp,
  // 16384 / 2048 = 8 warps per sub-partition = 32 per SM = 8 blocks; warps 48 / 4 = 12;
  // blocks 24 -> 8 blocks (registers), 32 of 48 warps. 96 blocks = 0.064 waves.
  DeviceLimits d = Arch(12, 0, 188);
  auto o = ComputeOccupancy(d, Cfg(128, 96, 64, 0));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->active_blocks_per_sm, 8);
  EXPECT_EQ(o->limited_by, "registers");
  EXPECT_NEAR(o->theoretical_pct, 100.0 * 32 / 48, 1e-12);
  LaunchFill f = ComputeFill(d, Cfg(128, 96, 64, 0), *o);
  EXPECT_NEAR(f.waves, 96.0 / (188 * 8), 1e-12);
  EXPECT_EQ(f.idle_sms_last_wave, 92);
  EXPECT_NEAR(f.est_occupancy_pct, 100.0 * (96.0 / 188) * 128 / 1536, 1e-9);
}

TEST(Occupancy, WavesAndLastWaveFill) {
  // 1000 blocks, 4 per SM on 108 SMs: 432 per wave -> 2.31 waves; the last 136 blocks
  // touch 108 SMs (all), so the last wave's SM fill is 1 but its slots are 136/432 full.
  DeviceLimits d = Arch(8, 0, 108);
  auto o = ComputeOccupancy(d, Cfg(512, 1000, 32, 0));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->active_blocks_per_sm, 4);  // 64 warps / 16
  LaunchFill f = ComputeFill(d, Cfg(512, 1000, 32, 0), *o);
  EXPECT_NEAR(f.waves, 1000.0 / 432, 1e-12);
  EXPECT_DOUBLE_EQ(f.last_wave_sm_fill, 1.0);
  EXPECT_EQ(f.idle_sms_last_wave, 0);
  // Exactly full waves: the last wave is full.
  f = ComputeFill(d, Cfg(512, 864, 32, 0), *o);
  EXPECT_DOUBLE_EQ(f.waves, 2.0);
  EXPECT_DOUBLE_EQ(f.last_wave_sm_fill, 1.0);
}

TEST(Occupancy, NoRegistersOrSharedMemoryLeaveWarpsAndBlocks) {
  DeviceLimits d = Arch(9, 0, 132);
  auto o = ComputeOccupancy(d, Cfg(32, 1, 0, 0));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->active_blocks_per_sm, 32);  // blocks limit (64 warps would allow 64)
  EXPECT_EQ(o->limited_by, "blocks");
}

TEST(Occupancy, VoltaAllocatesSharedMemoryIn256ByteUnitsWithoutReserve) {
  // 1000 bytes -> 1024 per block; 96 KiB / 1 KiB = 96, capped by 32 blocks.
  DeviceLimits d = Arch(7, 0, 80);
  auto o = ComputeOccupancy(d, Cfg(64, 10, 16, 1000));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->shared_per_block, 1024);
  EXPECT_EQ(o->limit_shared, 96);
  EXPECT_EQ(o->active_blocks_per_sm, 32);
}

TEST(Occupancy, ImpossibleLaunchesAreErrors) {
  DeviceLimits d = Arch(9, 0, 132);
  EXPECT_FALSE(ComputeOccupancy(d, Cfg(2048, 1, 32, 0)).ok());     // > 1024 threads
  EXPECT_FALSE(ComputeOccupancy(d, Cfg(1024, 1, 255, 0)).ok());    // 255 x 1024 registers
  EXPECT_FALSE(ComputeOccupancy(d, Cfg(128, 1, 32, 240 * 1024)).ok());  // > 227 KiB
  EXPECT_FALSE(ComputeOccupancy(d, Cfg(0, 1, 32, 0)).ok());
}

TEST(DeviceLimits, TraceSizesOverrideAndSourcesAreNamed) {
  proto::DeviceInfo dev;
  dev.set_id(0);
  dev.set_name("NVIDIA A100-PG509-200");
  dev.set_kind("gpu");
  dev.set_cc_major(8);
  dev.set_cc_minor(0);
  dev.set_sm_count(108);
  dev.set_shared_mem_per_sm(167936);
  dev.set_max_threads_per_sm(2048);
  dev.set_limits_source("Kineto deviceProperties");
  auto d = DeviceLimitsFor(dev);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->sm_count, 108);
  EXPECT_EQ(d->arch.smem_per_sm, 167936);
  EXPECT_NE(d->source.find("Kineto deviceProperties"), std::string::npos);
  EXPECT_NE(d->source.find("sm_80"), std::string::npos);

  // No cc and no SM count in the trace: both from the spec table by name.
  proto::DeviceInfo h200;
  h200.set_name("NVIDIA H200");
  h200.set_kind("gpu");
  auto h = DeviceLimitsFor(h200);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->sm_count, 132);
  EXPECT_EQ(h->arch.cc_major, 9);
  EXPECT_NE(h->source.find("spec table"), std::string::npos);

  proto::DeviceInfo unknown;
  unknown.set_name("unknown");
  unknown.set_kind("gpu");
  EXPECT_FALSE(DeviceLimitsFor(unknown).ok());
  proto::DeviceInfo host;
  host.set_name("host CPU");
  host.set_kind("host_cpu");
  EXPECT_FALSE(DeviceLimitsFor(host).ok());
}

TEST(DeviceLimits, EveryGpuOfTheSpecTableHasRules) {
  for (const devices::DeviceSpec& s : devices::AllDevices()) {
    auto d = DeviceLimitsForSpec(s);
    if (s.vendor == "AMD") {
      // No AMD rules yet, and never NVIDIA's: refused, saying why.
      ASSERT_FALSE(d.ok()) << s.name;
      EXPECT_NE(d.status().message().find("AMD's rules"), std::string::npos) << d.status();
      continue;
    }
    ASSERT_TRUE(d.ok()) << s.name << ": " << d.status();
    EXPECT_GT(d->sm_count, 0);
  }
}

TEST(DeviceLimits, AmdDevicesGetNoCudaRules) {
  // An AMD device as a ROCm trace describes it: named, wave64, and refused whatever else it
  // says (HIP's major.minor 9.4 would otherwise read as a compute capability).
  proto::DeviceInfo d;
  d.set_name("AMD Instinct MI300X");
  d.set_kind("gpu");
  d.set_vendor("AMD");
  d.set_warp_size(64);
  d.set_sm_count(304);
  d.set_cc_major(9);
  d.set_cc_minor(4);
  auto l = DeviceLimitsFor(d);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("NVIDIA's rules do not apply"), std::string::npos);
  // The spec table's AMD name alone is enough.
  d.clear_vendor();
  EXPECT_FALSE(DeviceLimitsFor(d).ok());
}

TEST(ArchLimits, ParseSmArch) {
  int ma = 0, mi = 0;
  ASSERT_TRUE(devices::ParseSmArch("sm_120a", &ma, &mi));
  EXPECT_EQ(ma, 12);
  EXPECT_EQ(mi, 0);
  ASSERT_TRUE(devices::ParseSmArch("sm_90", &ma, &mi));
  EXPECT_EQ(ma, 9);
  EXPECT_FALSE(devices::ParseSmArch("x86_64", &ma, &mi));
}

}  // namespace
}  // namespace qprof::occupancy
