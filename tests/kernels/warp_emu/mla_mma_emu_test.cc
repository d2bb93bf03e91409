// Warp emulation of the tensor-core sparse MLA decode kernel (qprof_attn_sparse_mla_mma) and
// of its split-K combine (qprof_attn_sparse_mla_mma_combine): the kernels' own bodies
// (SparseMlaMmaBody, SparseMlaCombineBody, sparse_mla_mma.cuh) run for every thread of every
// block of the launcher's plan (SparseMlaMmaPlan: grid, split count, workspace layout)
// through the PTX model: mma.m16n8k16 for QK^T and PV, ldmatrix.x4.trans for the V
// fragments, shfl.sync for the quad reductions, and the shared-memory checks of the
// cp.async double buffer and of the score exchange between warps, and the ldmatrix bank
// conflicts of the padded KV tile (none). Unsplit and split (the
// split count the launcher picks for a GPU with `sms` SMs, including a split with no tile)
// are compared with SparseMlaDecodeReferenceCpu within the GPU test's bound (2e-2 for out
// and lse); the launches must record no emulation error.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/common_cpu.h"
#include "kernels/mla/cuda/sparse_mla_mma.cuh"
#include "kernels/mla/mla_cpu.h"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {
namespace {

using namespace kernels::cuda;  // the kernels under test

struct Shape {
  int batch, heads, topk;
  int sms;  // 0: unsplit; else split as the launcher would on a GPU with this many SMs
};

class MlaMmaEmuTest : public ::testing::TestWithParam<Shape> {};

TEST_P(MlaMmaEmuTest, MatchesReference) {
  const Shape sh = GetParam();
  std::mt19937 rng(7 + sh.batch + sh.topk);
  const int stride = sh.topk + 37;
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
    lens[b] = stride - b % 7;
    std::uniform_int_distribution<int> tok(0, lens[b] - 1);
    for (int i = 0; i < sh.topk; ++i) idx[b * sh.topk + i] = (i >= sh.topk - 1 - b % 5) ? -1 : tok(rng);
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
  const int splits = sh.sms > 0 ? SparseMlaMmaSplitCount(p, sh.sms) : 1;
  if (sh.sms > 0) {
    ASSERT_GT(splits, 1) << "the shape must make the launcher split";
  }
  std::vector<float> workspace((SparseMlaMmaWorkspaceBytesFor(p, splits) + 3) / 4, NAN);
  const SparseMlaMmaLaunch l = SparseMlaMmaPlan(p, splits, workspace.data());
  WarpEmu emu;
  emu.AddGlobal(q, "q");
  emu.AddGlobal(kv, "kv");
  emu.AddGlobal(idx, "indices");
  emu.AddGlobal(got, "out");
  emu.AddGlobal(got_lse, "lse");
  emu.AddGlobal(workspace, "workspace");
  emu.Launch("sparse_mla_mma", l.grid, kMlaMmaThreads, kMmaSmemBytes, [&] { SparseMlaMmaBody(l.args); });
  if (l.args.splits > 1) {
    emu.Launch("sparse_mla_mma_combine", l.combine_grid, kMlaCombineThreads, 0, [&] { SparseMlaCombineBody(l.args); });
  }
  EXPECT_EQ(emu.error_count(), 0) << emu.ErrorReport();
  const double err = RelError(got, want), lse_err = RelError(got_lse, want_lse);
  const WarpEmu::Counters c = emu.counters();
  std::printf("[ emu      ] sparse_mla_mma batch %d heads %d topk %d splits %d: rel error out %.3g, lse %.3g"
              " (%lld warp collectives, %lld barriers, %lld ldmatrix, %lld extra wavefronts)\n", sh.batch,
              sh.heads, sh.topk, l.args.splits, err, lse_err, static_cast<long long>(c.warp_collectives),
              static_cast<long long>(c.barriers), static_cast<long long>(c.ldmatrix),
              static_cast<long long>(c.ldmatrix_extra_wavefronts));
  // The padded KV rows (kMmaRowBytes = 1168: 8 consecutive rows start in 8 bank groups)
  // make every ldmatrix.x4.trans of the PV step conflict-free.
  EXPECT_GT(c.ldmatrix, 0);
  EXPECT_EQ(c.ldmatrix_extra_wavefronts, 0) << "ldmatrix bank conflicts on the KV tile";
  EXPECT_EQ(l.args.splits, splits);
  EXPECT_LT(err, 2e-2) << "batch " << sh.batch << " topk " << sh.topk;
  EXPECT_GT(err, 0.0);  // BF16 q and P cannot be exact
  EXPECT_LT(lse_err, 2e-2);
}

// 20 heads: a second head block with 4 real rows; topk 100 = three full tiles and a tail
// of 4, topk 17 a single partial tile; the last indices of each sequence are padding (-1).
// Split: topk 100 on 132 SMs = 2 splits of 2 tiles; topk 288 (9 tiles) on 132 SMs = 4
// splits of 3 tiles, the last with none (its partial has l = 0 and the combine skips it).
INSTANTIATE_TEST_SUITE_P(Shapes, MlaMmaEmuTest,
                         ::testing::Values(Shape{1, 20, 100, 0}, Shape{3, 16, 17, 0}, Shape{2, 20, 64, 0},
                                           Shape{1, 20, 100, 132}, Shape{2, 20, 288, 132}));

}  // namespace
}  // namespace qprof::warp
