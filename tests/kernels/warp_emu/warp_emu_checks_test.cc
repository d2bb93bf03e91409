// Self-checks of the warp emulation (warp_emu.h): small bodies written against the warp
// primitives show that each check fires on the bug it is for and stays quiet on correct
// code, so that "no emulation error" in the kernel tests means something: barriers order
// shared memory, cp.async data is visible only after its group completes (and to other
// threads only after a barrier), a buffer refilled before every reader is done is a race,
// uninitialised, misaligned and out-of-allocation accesses are caught, global accesses must
// hit a registered buffer, warps that diverge or deadlock stop the launch, and ldmatrix bank
// conflicts are counted.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/cuda/warp_ops.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {
namespace {

using namespace kernels::cuda;  // the primitives

constexpr unsigned kThreads = 64;

// Every thread writes its slot, then reads its neighbour's (with or without a barrier).
void NeighbourExchange(bool barrier, std::vector<int>* out) {
  int* s = SharedStatic<int[kThreads]>();
  const int t = ThreadIdxX();
  StShared<int>(s + t, 100 + t);
  if (barrier) SyncThreads();
  (*out)[t] = LdShared<int>(s + (t + 1) % kThreads);
}

TEST(WarpEmuChecksTest, BarrierOrdersSharedMemory) {
  WarpEmu emu;
  std::vector<int> out(kThreads, -1);
  EXPECT_TRUE(emu.Launch("exchange", {2, 1, 1}, kThreads, 0, [&] { NeighbourExchange(true, &out); }))
      << emu.ErrorReport();
  for (unsigned t = 0; t < kThreads; ++t) EXPECT_EQ(out[t], 100 + static_cast<int>((t + 1) % kThreads));
  EXPECT_EQ(emu.counters().blocks, 2);
  EXPECT_EQ(emu.counters().barriers, 2);
}

TEST(WarpEmuChecksTest, ReadWithoutBarrierIsAnError) {
  WarpEmu emu;
  std::vector<int> out(kThreads, -1);
  EXPECT_FALSE(emu.Launch("exchange", {1, 1, 1}, kThreads, 0, [&] { NeighbourExchange(false, &out); }));
  EXPECT_NE(emu.ErrorReport().find("no barrier in between"), std::string::npos) << emu.ErrorReport();
}

TEST(WarpEmuChecksTest, UninitialisedReadIsAnError) {
  WarpEmu emu;
  std::vector<int> out(kThreads, -1);
  EXPECT_FALSE(emu.Launch("uninit", {1, 1, 1}, kThreads, 64, [&] {
    out[ThreadIdxX()] = LdShared<int>(DynamicShared() + 4 * (ThreadIdxX() % 16));
  }));
  EXPECT_NE(emu.ErrorReport().find("which no thread wrote"), std::string::npos) << emu.ErrorReport();
}

// Thread t copies global word t into shared memory with cp.async, then (optionally) waits
// and (optionally) passes a barrier, and reads word `(t + shift) % n`.
void CpAsyncExchange(const std::vector<uint32_t>& src, bool wait, bool barrier, int shift, std::vector<uint32_t>* out) {
  unsigned char* s = DynamicShared();
  const int t = ThreadIdxX();
  CpAsync16(s + 16 * t, src.data() + 4 * t, 16);
  CpAsyncCommit();
  if (wait) CpAsyncWait<0>();
  if (barrier) SyncThreads();
  (*out)[t] = LdShared<uint32_t>(s + 16 * ((t + shift) % kThreads));
}

struct CpAsyncCase {
  bool wait, barrier;
  int shift;
  const char* error;  // null: no error expected
};

class WarpEmuCpAsyncTest : public ::testing::TestWithParam<CpAsyncCase> {};

TEST_P(WarpEmuCpAsyncTest, VisibleOnlyAfterItsGroupAndABarrier) {
  const CpAsyncCase c = GetParam();
  std::vector<uint32_t> src(4 * kThreads), out(kThreads, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = 1000 + static_cast<uint32_t>(i);
  WarpEmu emu;
  emu.AddGlobal(src, "src");
  const bool ok = emu.Launch("cp_async", {1, 1, 1}, kThreads, 16 * kThreads,
                             [&] { CpAsyncExchange(src, c.wait, c.barrier, c.shift, &out); });
  if (c.error == nullptr) {
    EXPECT_TRUE(ok) << emu.ErrorReport();
    for (unsigned t = 0; t < kThreads; ++t) EXPECT_EQ(out[t], 1000 + 4 * ((t + c.shift) % kThreads));
  } else {
    EXPECT_FALSE(ok);
    EXPECT_NE(emu.ErrorReport().find(c.error), std::string::npos) << emu.ErrorReport();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WarpEmuCpAsyncTest,
    ::testing::Values(CpAsyncCase{true, true, 1, nullptr},    // wait, barrier: others' data
                      CpAsyncCase{true, false, 0, nullptr},   // wait: the thread's own data
                      CpAsyncCase{false, true, 0, "cp.async is still filling"},  // no wait
                      CpAsyncCase{true, false, 1, "no barrier in between"}));    // no barrier

// The double-buffer hazard: every thread reads slot t+1, then (without a barrier) thread t
// refills its own slot, which thread t-1 has read.
TEST(WarpEmuChecksTest, RefillBeforeEveryReaderIsDoneIsAnError) {
  WarpEmu emu;
  std::vector<int> out(kThreads, -1);
  EXPECT_FALSE(emu.Launch("refill", {1, 1, 1}, kThreads, 0, [&] {
    int* s = SharedStatic<int[kThreads]>();
    const int t = ThreadIdxX();
    StShared<int>(s + t, t);
    SyncThreads();
    out[t] = LdShared<int>(s + (t + 1) % kThreads);
    StShared<int>(s + t, -t);
  }));
  EXPECT_NE(emu.ErrorReport().find("overwrites"), std::string::npos) << emu.ErrorReport();
}

TEST(WarpEmuChecksTest, MisalignedAndOutOfRangeSharedAccessesAreErrors) {
  WarpEmu emu;
  EXPECT_FALSE(emu.Launch("misaligned", {1, 1, 1}, 32, 64, [&] { StShared<U32x2>(DynamicShared() + 4, U32x2{1, 2}); }));
  EXPECT_NE(emu.ErrorReport().find("is not 8-byte aligned"), std::string::npos) << emu.ErrorReport();
  WarpEmu emu2;
  EXPECT_FALSE(emu2.Launch("out_of_range", {1, 1, 1}, 32, 64, [&] { StShared<int>(DynamicShared() + 64, 1); }));
  EXPECT_NE(emu2.ErrorReport().find("outside every shared allocation"), std::string::npos) << emu2.ErrorReport();
}

TEST(WarpEmuChecksTest, GlobalAccessesMustHitARegisteredAlignedBuffer) {
  std::vector<uint32_t> buf(64, 7), other(64, 9);
  WarpEmu emu;
  emu.AddGlobal(buf, "buf");
  uint32_t sum = 0;
  EXPECT_TRUE(emu.Launch("ldg", {1, 1, 1}, 32, 0, [&] { sum += Ldg<uint32_t>(buf.data() + ThreadIdxX()); }));
  EXPECT_EQ(sum, 32u * 7);
  EXPECT_FALSE(emu.Launch("unregistered", {1, 1, 1}, 32, 0, [&] { sum += Ldg<uint32_t>(other.data()); }));
  EXPECT_NE(emu.ErrorReport().find("outside every buffer the test registered"), std::string::npos);
  WarpEmu emu2;
  emu2.AddGlobal(buf, "buf");
  EXPECT_FALSE(emu2.Launch("misaligned", {1, 1, 1}, 32, 0, [&] {
    sum += LdgNc128(buf.data() + 1).x;  // ld.global.nc.v4 needs 16-byte alignment
  }));
  EXPECT_NE(emu2.ErrorReport().find("16-byte aligned"), std::string::npos) << emu2.ErrorReport();
}

TEST(WarpEmuChecksTest, ShuffleExchangesAcrossTheWarp) {
  WarpEmu emu;
  std::vector<float> out(64, 0.f);
  EXPECT_TRUE(emu.Launch("shfl", {1, 1, 1}, 64, 0, [&] {
    const int t = ThreadIdxX();
    out[t] = WarpSum(static_cast<float>(t)) + ShflXor(static_cast<float>(t), 5) / 1000.f;
  })) << emu.ErrorReport();
  for (int t = 0; t < 64; ++t) {
    const float warp_sum = t < 32 ? 496.f : 1520.f;  // 0+..+31, 32+..+63
    EXPECT_FLOAT_EQ(out[t], warp_sum + static_cast<float>(t ^ 5) / 1000.f) << t;
  }
}

TEST(WarpEmuChecksTest, DivergentCollectivesStopTheLaunch) {
  WarpEmu emu;
  EXPECT_FALSE(emu.Launch("diverge", {1, 1, 1}, 32, 0, [&] {
    if (ThreadIdxX() < 16) {
      ShflXor(1.f, 1);
    } else {
      uint32_t r0, r1, r2, r3;
      LdmatrixX4Trans(0, r0, r1, r2, r3);
    }
  }));
  EXPECT_NE(emu.ErrorReport().find("diverges"), std::string::npos) << emu.ErrorReport();
  WarpEmu emu2;
  EXPECT_FALSE(emu2.Launch("exited", {1, 1, 1}, 32, 0, [&] {
    if (ThreadIdxX() == 3) return;
    ShflXor(1.f, 1);
  }));
  EXPECT_NE(emu2.ErrorReport().find("exited lanes"), std::string::npos) << emu2.ErrorReport();
  WarpEmu emu3;
  EXPECT_FALSE(emu3.Launch("deadlock", {1, 1, 1}, 64, 0, [&] {
    if (ThreadIdxX() % 32 < 16) {
      SyncThreads();
    } else {
      ShflXor(1.f, 1);
    }
  }));
  EXPECT_NE(emu3.ErrorReport().find("deadlock"), std::string::npos) << emu3.ErrorReport();
}

// ldmatrix of 32 rows with a row stride of 128 bytes puts the 8 rows of each matrix in the
// same 16-byte bank group (7 extra wavefronts per matrix); 144 bytes spreads them.
TEST(WarpEmuChecksTest, LdmatrixBankConflictsAreCounted) {
  for (const int stride : {128, 144}) {
    WarpEmu emu;
    EXPECT_TRUE(emu.Launch("ldmatrix", {1, 1, 1}, 32, 32 * 144, [&] {
      unsigned char* s = DynamicShared();
      const int t = ThreadIdxX();
      for (int i = 0; i < 144; i += 4) StShared<uint32_t>(s + 144 * t + i, 0u);
      SyncThreads();
      uint32_t r0, r1, r2, r3;
      LdmatrixX4Trans(SharedAddr(s + stride * t), r0, r1, r2, r3);
    })) << emu.ErrorReport();
    EXPECT_EQ(emu.counters().ldmatrix, 1);
    EXPECT_EQ(emu.counters().ldmatrix_extra_wavefronts, stride == 128 ? 28 : 0) << "stride " << stride;
  }
}

TEST(WarpEmuChecksTest, InlinePtxOperandsAreChecked) {
  WarpEmu emu;
  EXPECT_FALSE(emu.Launch("unknown", {1, 1, 1}, 32, 0, [&] { QPROF_PTX("bar.warp.sync 0xffffffff;", (), ()); }));
  EXPECT_NE(emu.ErrorReport().find("is not modelled"), std::string::npos) << emu.ErrorReport();
  WarpEmu emu2;
  EXPECT_FALSE(emu2.Launch("write_only_read", {1, 1, 1}, 32, 0, [&] {
    uint32_t a[4] = {0, 0, 0, 0}, d[4];
    // D bound as "=r" outputs and read back as C: the model reads a write-only operand.
    QPROF_PTX("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};",
              (QPROF_PTX_OUT_R(d[0]), QPROF_PTX_OUT_R(d[1]), QPROF_PTX_OUT_R(d[2]), QPROF_PTX_OUT_R(d[3])),
              (QPROF_PTX_IN_R(a[0]), QPROF_PTX_IN_R(a[1]), QPROF_PTX_IN_R(a[2]), QPROF_PTX_IN_R(a[3]),
               QPROF_PTX_IN_R(a[0]), QPROF_PTX_IN_R(a[1])));
  }));
  EXPECT_NE(emu2.ErrorReport().find("where the instruction reads 'f'"), std::string::npos) << emu2.ErrorReport();
}

}  // namespace
}  // namespace qprof::warp
