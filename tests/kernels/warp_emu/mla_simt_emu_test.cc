// Warp emulation of the SIMT sparse MLA decode kernel (qprof_attn_sparse_mla_simt): the
// kernel's own body (SparseMlaSimtBody, sparse_mla_simt.cuh) runs for every thread of every
// block of the launcher's plan (SparseMlaSimtPlan), blocks interleaved at their barriers.
// Checked: the KV tile staged (BF16 -> FP32) and read only after the barrier, the next
// tile staged only after every warp left the previous one, the per-warp score exchange
// through shared memory ordered by __syncwarp, the warp sums, the online softmax, -1
// padding masked, loads in bounds and aligned; out and lse against
// SparseMlaDecodeReferenceCpu within the GPU test's bound for this kernel (1e-4: FP32
// throughout; the emulation's exp is the host's, the GPU's __expf differs by a few ulp).
//
// Every shape has a partial last tile (topk % 16 != 0), a partial head block (heads % 8
// != 0) and, as its last sequence, an all-masked one (every index -1: out 0, lse -inf).
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/common_cpu.h"
#include "kernels/mla/cuda/sparse_mla_simt.cuh"
#include "kernels/mla/mla_cpu.h"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {
namespace {

using namespace kernels::cuda;  // the kernel under test

struct Shape {
  int batch, heads, topk;
};

class MlaSimtEmuTest : public ::testing::TestWithParam<Shape> {};

TEST_P(MlaSimtEmuTest, MatchesReference) {
  const Shape sh = GetParam();
  std::mt19937 rng(5 + sh.batch + sh.topk);
  const int stride = sh.topk + 23;
  kernels::SparseMlaParams p;
  p.batch = sh.batch;
  p.heads = sh.heads;
  p.topk = sh.topk;
  p.kv_seq_stride = stride;
  p.softmax_scale = 1.f / 24.f;
  const std::vector<float> q = RandomFloats(static_cast<size_t>(sh.batch) * sh.heads * kMlaDqk, rng);
  const std::vector<float> kvf = RandomFloats(static_cast<size_t>(sh.batch) * stride * kMlaDqk, rng);
  std::vector<uint16_t> kv(kvf.size());
  kernels::FloatToBf16N(kvf.data(), static_cast<int64_t>(kvf.size()), kv.data());
  std::vector<int32_t> lens(sh.batch), idx(static_cast<size_t>(sh.batch) * sh.topk);
  for (int b = 0; b < sh.batch; ++b) {
    lens[b] = stride - b % 3;
    std::uniform_int_distribution<int> tok(0, lens[b] - 1);
    const bool masked = b == sh.batch - 1;  // the all-masked sequence
    for (int i = 0; i < sh.topk; ++i) {
      idx[b * sh.topk + i] = masked || i >= sh.topk - 1 - b % 4 ? -1 : tok(rng);
    }
  }
  std::vector<float> want(static_cast<size_t>(sh.batch) * sh.heads * kMlaDv), want_lse(sh.batch * sh.heads);
  p.q = q.data();
  p.kv = kv.data();
  p.seq_lens = lens.data();
  p.indices = idx.data();
  p.out = want.data();
  p.lse = want_lse.data();
  ASSERT_TRUE(kernels::SparseMlaDecodeReferenceCpu(p).ok());

  std::vector<float> got(want.size(), NAN), got_lse(want_lse.size(), NAN);
  p.out = got.data();
  p.lse = got_lse.data();
  const SparseMlaSimtLaunch l = SparseMlaSimtPlan(p);
  WarpEmu emu;
  emu.set_resident_blocks(3);
  emu.AddGlobal(q, "q");
  emu.AddGlobal(kv, "kv");
  emu.AddGlobal(idx, "indices");
  emu.AddGlobal(got, "out");
  emu.AddGlobal(got_lse, "lse");
  emu.Launch("sparse_mla_simt", l.grid, kSimtThreads, 0, [&] { SparseMlaSimtBody(l.args); });
  EXPECT_EQ(emu.error_count(), 0) << emu.ErrorReport();
  const double err = RelError(got, want), lse_err = RelError(got_lse, want_lse);
  const WarpEmu::Counters c = emu.counters();
  std::printf("[ emu      ] sparse_mla_simt batch %d heads %d topk %d: rel error out %.3g, lse %.3g"
              " (%lld blocks, %lld warp collectives, %lld barriers)\n", sh.batch, sh.heads, sh.topk, err, lse_err,
              static_cast<long long>(c.blocks), static_cast<long long>(c.warp_collectives),
              static_cast<long long>(c.barriers));
  EXPECT_LT(err, 1e-4) << "batch " << sh.batch << " topk " << sh.topk;
  EXPECT_LT(lse_err, 1e-4);
  // The all-masked sequence: every head's output exactly 0 and lse -inf (RelError demands
  // the -inf match exactly; the zeros are checked here too).
  const int last = sh.batch - 1;
  for (int h = 0; h < sh.heads; ++h) {
    EXPECT_EQ(got_lse[last * sh.heads + h], -INFINITY) << "head " << h;
    for (int i = 0; i < kMlaDv; ++i) ASSERT_EQ(got[(static_cast<size_t>(last) * sh.heads + h) * kMlaDv + i], 0.f);
  }
}

// topk 37: two full tiles and a tail of 5; topk 20: one full tile and a tail of 4, the
// last indices of each sequence padding (-1). heads 12 and 5: a partial block of heads.
INSTANTIATE_TEST_SUITE_P(Shapes, MlaSimtEmuTest,
                         ::testing::Values(Shape{2, 12, 37}, Shape{3, 5, 20}));

}  // namespace
}  // namespace qprof::warp
