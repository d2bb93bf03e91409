// Self-checks of the warp emulation's warp-level and grid-level rules (warp_emu.h): the
// SIMT kernels exchange data between the lanes of a warp through shared memory (ordered by
// __syncwarp, and a read before a warp collective by a write after it), vote with ballot,
// shuffle ints, and must not communicate between blocks through global memory. Each rule
// fires on a small body with the bug and stays quiet on the correct one; the block
// interleaving runs blocks round robin at their barriers, and a planted race between blocks
// is reported by the race check and changes the result when blocks interleave.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/cuda/warp_ops.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {
namespace {

using namespace kernels::cuda;  // the primitives

bool Has(const WarpEmu& emu, const char* what) { return emu.ErrorReport().find(what) != std::string::npos; }

// Lane 0 writes a value, every lane reads it (with or without __syncwarp in between).
TEST(WarpEmuWarpSyncTest, SyncWarpOrdersALanesWriteBeforeTheOthersRead) {
  for (const bool sync : {true, false}) {
    WarpEmu emu;
    std::vector<int> out(64, -1);
    const bool ok = emu.Launch("broadcast", {1, 1, 1}, 64, 0, [&] {
      int* s = SharedStatic<int[2]>();
      const int t = ThreadIdxX();
      if (t % 32 == 0) StShared<int>(s + t / 32, 100 + t);
      if (sync) SyncWarp();
      out[t] = LdShared<int>(s + t / 32);
    });
    if (sync) {
      EXPECT_TRUE(ok) << emu.ErrorReport();
      for (int t = 0; t < 64; ++t) EXPECT_EQ(out[t], t < 32 ? 100 : 132);
    } else {
      EXPECT_FALSE(ok);
      EXPECT_TRUE(Has(emu, "of its warp with no barrier or __syncwarp in between")) << emu.ErrorReport();
    }
  }
}

// __syncwarp orders only its own warp: warp 1 reading warp 0's write needs __syncthreads.
TEST(WarpEmuWarpSyncTest, SyncWarpDoesNotOrderOtherWarps) {
  WarpEmu emu;
  EXPECT_FALSE(emu.Launch("cross_warp", {1, 1, 1}, 64, 0, [&] {
    int* s = &SharedStatic<int>();
    if (ThreadIdxX() == 0) StShared<int>(s, 1);
    SyncWarp();
    if (ThreadIdxX() == 40) LdShared<int>(s);
  }));
  EXPECT_TRUE(Has(emu, "written by thread 0 with no barrier in between")) << emu.ErrorReport();
}

// The router's pattern: every lane reads its slot, the warp votes (a collective), then lane
// 0 overwrites a slot another lane read. The collective orders the read before the write;
// without it the two race (the emulation runs lane 0 first, so it reports lane 7's read
// of lane 0's unordered write). A write before a collective and a read after it is not
// ordered by the collective (only __syncwarp orders memory).
TEST(WarpEmuWarpSyncTest, ACollectiveOrdersReadsBeforeItWithWritesAfterIt) {
  for (const bool vote : {true, false}) {
    WarpEmu emu;
    const bool ok = emu.Launch("war", {1, 1, 1}, 32, 0, [&] {
      int* s = SharedStatic<int[32]>();
      const int t = ThreadIdxX();
      StShared<int>(s + t, t);
      SyncWarp();
      const int mine = LdShared<int>(s + t);
      if (vote) Ballot(mine > 3);
      if (t == 0) StShared<int>(s + 7, -1);
    });
    EXPECT_EQ(ok, vote) << emu.ErrorReport();
    if (!vote) {
      EXPECT_TRUE(Has(emu, "thread 7 reads static#0+28 written by thread 0 of its warp with no barrier"))
          << emu.ErrorReport();
    }
  }
  WarpEmu emu;
  EXPECT_FALSE(emu.Launch("raw", {1, 1, 1}, 32, 0, [&] {
    int* s = &SharedStatic<int>();
    if (ThreadIdxX() == 0) StShared<int>(s, 5);
    ShflXor(1, 1);
    if (ThreadIdxX() == 9) LdShared<int>(s);
  }));
  EXPECT_TRUE(Has(emu, "no barrier or __syncwarp")) << emu.ErrorReport();
}

TEST(WarpEmuWarpSyncTest, BallotAndIntegerShuffles) {
  WarpEmu emu;
  std::vector<unsigned> mask(64, 0);
  std::vector<int> other(64, 0), rank(64, -1);
  EXPECT_TRUE(emu.Launch("ballot", {1, 1, 1}, 64, 0, [&] {
    const int t = ThreadIdxX(), lane = t & 31;
    const bool pred = t % 3 == 0;
    mask[t] = Ballot(pred);
    rank[t] = Popc(mask[t] & ((1u << lane) - 1u));  // the indexer's prefix count
    other[t] = ShflXor(-1000 * t, 6);
  })) << emu.ErrorReport();
  for (int t = 0; t < 64; ++t) {
    unsigned want = 0;
    for (int l = 0; l < 32; ++l) want |= ((32 * (t / 32) + l) % 3 == 0 ? 1u : 0u) << l;
    EXPECT_EQ(mask[t], want) << t;
    EXPECT_EQ(rank[t], __builtin_popcount(want & ((1u << (t & 31)) - 1u))) << t;
    EXPECT_EQ(other[t], -1000 * (t ^ 6)) << t;
  }
}

TEST(WarpEmuWarpSyncTest, SyncWarpWithExitedLanesOrAnotherCollectiveStopsTheLaunch) {
  WarpEmu emu;
  EXPECT_FALSE(emu.Launch("exited", {1, 1, 1}, 32, 0, [&] {
    if (ThreadIdxX() == 5) return;
    SyncWarp();
  }));
  EXPECT_TRUE(Has(emu, "exited lanes")) << emu.ErrorReport();
  WarpEmu emu2;
  EXPECT_FALSE(emu2.Launch("diverge", {1, 1, 1}, 32, 0, [&] {
    if (ThreadIdxX() < 8) {
      SyncWarp();
    } else {
      Ballot(true);
    }
  }));
  EXPECT_TRUE(Has(emu2, "diverges")) << emu2.ErrorReport();
}

// Blocks log (block, phase) as they pass two barriers. One resident block: block after
// block. Three resident: phase 0 of blocks 0-2, then their phase 1, ..., and block 3
// starts in the slot block 0 leaves.
TEST(WarpEmuBlocksTest, ResidentBlocksInterleaveAtBarriers) {
  for (const int resident : {1, 3}) {
    WarpEmu emu;
    emu.set_resident_blocks(resident);
    std::vector<int> log;
    EXPECT_TRUE(emu.Launch("phases", {5, 1, 1}, 64, 0, [&] {
      for (int phase = 0; phase < 3; ++phase) {
        if (ThreadIdxX() == 0) log.push_back(10 * BlockIdxX() + phase);
        SyncThreads();
      }
    })) << emu.ErrorReport();
    const std::vector<int> sequential = {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42};
    const std::vector<int> interleaved = {0, 10, 20, 1, 11, 21, 2, 12, 22, 30, 40, 31, 41, 32, 42};
    EXPECT_EQ(log, resident == 1 ? sequential : interleaved) << "resident " << resident;
    EXPECT_EQ(emu.counters().blocks, 5);
    EXPECT_EQ(emu.counters().barriers, 15);
  }
}

// A planted race between blocks: block b writes flags[b], passes a barrier, and reads
// flags[b + 1], which block b + 1 writes. Nothing orders two blocks, so the race check
// reports it whatever the order; and the result depends on the order: one block at a time,
// block b reads the poison (block b + 1 has not run); interleaved, it reads b + 2.
void RacyBody(std::vector<int>* flags, std::vector<int>* seen, int n, bool racy) {
  const int b = BlockIdxX();
  if (ThreadIdxX() == 0) StGlobal<int>(flags->data() + b, b + 1);
  SyncThreads();
  const int peer = racy ? (b + 1) % n : b;
  if (ThreadIdxX() == 0) StGlobal<int>(seen->data() + b, LdGlobal<int>(flags->data() + peer));
}

TEST(WarpEmuBlocksTest, PlantedRaceBetweenBlocksIsCaught) {
  const int n = 4;
  std::vector<int> seen_at[2];
  for (const int resident : {1, n}) {
    std::vector<int> flags(n, -1), seen(n, -2);
    WarpEmu emu;
    emu.set_resident_blocks(resident);
    emu.AddGlobal(flags, "flags");
    emu.AddGlobal(seen, "seen");
    EXPECT_FALSE(emu.Launch("racy", {n, 1, 1}, 32, 0, [&] { RacyBody(&flags, &seen, n, true); }));
    // One block at a time, block 1's store follows block 0's load; interleaved, block 0's
    // load follows block 1's store. Either way it is the same race.
    EXPECT_TRUE(Has(emu, resident == 1 ? "store to flags+4, which block #0 read in the same launch: a race"
                                       : "load from flags+4, which block #1 wrote in the same launch: a race"))
        << emu.ErrorReport();
    seen_at[resident == 1 ? 0 : 1] = seen;
  }
  EXPECT_EQ(seen_at[0], (std::vector<int>{-1, -1, -1, 1}));  // one block at a time
  EXPECT_EQ(seen_at[1], (std::vector<int>{2, 3, 4, 1}));     // interleaved at the barrier
  // The same body reading its own flag: no race, the same result in both orders.
  for (const int resident : {1, n}) {
    std::vector<int> flags(n, -1), seen(n, -2);
    WarpEmu emu;
    emu.set_resident_blocks(resident);
    emu.AddGlobal(flags, "flags");
    emu.AddGlobal(seen, "seen");
    EXPECT_TRUE(emu.Launch("own", {n, 1, 1}, 32, 0, [&] { RacyBody(&flags, &seen, n, false); }))
        << emu.ErrorReport();
    EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
  }
}

TEST(WarpEmuBlocksTest, BlocksMayShareReadsAndLaunchesAreOrdered) {
  std::vector<int> in(8, 3), out(8, 0);
  WarpEmu emu;
  emu.AddGlobal(in, "in");
  emu.AddGlobal(out, "out");
  // Every block reads all of `in` and writes its own element of `out`.
  EXPECT_TRUE(emu.Launch("gather", {8, 1, 1}, 32, 0, [&] {
    int s = 0;
    for (int i = 0; i < 8; ++i) s += LdGlobal<int>(in.data() + i);
    if (ThreadIdxX() == 0) StGlobal<int>(out.data() + BlockIdxX(), s);
  })) << emu.ErrorReport();
  // The next launch reads what other blocks of the previous launch wrote: ordered.
  EXPECT_TRUE(emu.Launch("next", {8, 1, 1}, 32, 0, [&] {
    if (ThreadIdxX() == 0) StGlobal<int>(in.data() + BlockIdxX(), LdGlobal<int>(out.data() + (BlockIdxX() + 1) % 8));
  })) << emu.ErrorReport();
  EXPECT_EQ(in, std::vector<int>(8, 24));
  // Two blocks writing the same element: a race.
  EXPECT_FALSE(emu.Launch("collide", {2, 1, 1}, 32, 0, [&] {
    if (ThreadIdxX() == 0) StGlobal<int>(out.data(), static_cast<int>(BlockIdxX()));
  }));
  EXPECT_TRUE(Has(emu, "store to out+0, which block #0 wrote in the same launch")) << emu.ErrorReport();
}

}  // namespace
}  // namespace qprof::warp
