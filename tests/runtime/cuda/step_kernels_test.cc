// GPU tests (label gpu) of the small kernels of a decode step that had none: rope (the
// query heads and the latent key, as CudaDecoder launches it), the embedding lookup, the
// KV append into the BF16 caches, and the tensor-parallel expert-id remap, each against its
// CPU twin, with poisoned outputs and awkward sizes. Without a GPU every test skips with
// "no CUDA device: <reason>".
#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/cuda/common_cuda.h"
#include "runtime/cuda/tp_ops.h"
#include "runtime/tp_partition.h"
#include "tests/kernels/cuda/gpu_test_util.h"

namespace qprof {
namespace {

using testing_cuda::DeviceBuffer;
using testing_cuda::RandomFloats;
using testing_cuda::RelError;

TEST(StepKernelsTest, RopeMatchesCpuForHeadsAndLatentKey) {
  QPROF_SKIP_WITHOUT_GPU();
  std::mt19937 rng(5);
  for (int rows : {1, 3, 17}) {
    const int heads = 7, dqk = 576, dv = 512, rope = 64;
    std::vector<int32_t> pos(rows);
    for (int r = 0; r < rows; ++r) pos[r] = 1 + 977 * r % 30011;  // large positions too
    // Query heads: rope part at dv within each head's d_qk row.
    std::vector<float> q = RandomFloats(size_t(rows) * heads * dqk, rng);
    std::vector<float> want = q;
    kernels::RopeParams p{rows, heads, rope, dqk, heads * dqk, 10000.f, pos.data(), want.data() + dv};
    ASSERT_TRUE(kernels::RopeCpu(p).ok());
    DeviceBuffer<float> dq(q);
    DeviceBuffer<int32_t> dpos(pos);
    p.positions = dpos.get();
    p.x = dq.get() + dv;
    ASSERT_TRUE(kernels::cuda::LaunchRope(p, nullptr).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float> got = dq.Download();
    EXPECT_LT(RelError(got, want), 1e-5) << "rows " << rows;
    // The non-rope part is untouched.
    for (size_t i = 0; i < size_t(dv); ++i) ASSERT_EQ(got[i], q[i]) << i;
    // The one latent key per row (heads 1, row stride d_qk).
    std::vector<float> k = RandomFloats(size_t(rows) * dqk, rng);
    std::vector<float> kwant = k;
    kernels::RopeParams pk{rows, 1, rope, dqk, dqk, 10000.f, pos.data(), kwant.data() + dv};
    ASSERT_TRUE(kernels::RopeCpu(pk).ok());
    DeviceBuffer<float> dk(k);
    pk.positions = dpos.get();
    pk.x = dk.get() + dv;
    ASSERT_TRUE(kernels::cuda::LaunchRope(pk, nullptr).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_LT(RelError(dk.Download(), kwant), 1e-5) << "rows " << rows;
  }
}

TEST(StepKernelsTest, EmbeddingMatchesCpuAndRefusesBadIds) {
  QPROF_SKIP_WITHOUT_GPU();
  std::mt19937 rng(9);
  const int vocab = 1031, dim = 96;
  const std::vector<float> tf = RandomFloats(size_t(vocab) * dim, rng);
  std::vector<uint16_t> table(tf.size());
  kernels::FloatToBf16N(tf.data(), tf.size(), table.data());
  for (int rows : {1, 5, 64}) {
    std::vector<int32_t> ids(rows);
    for (int r = 0; r < rows; ++r) ids[r] = (r * 389 + 7) % vocab;
    ids[0] = vocab - 1;  // the last row of the table
    std::vector<float> want(size_t(rows) * dim);
    kernels::EmbeddingParams p{rows, dim, vocab, ids.data(), table.data(), want.data()};
    ASSERT_TRUE(kernels::EmbeddingCpu(p).ok());
    DeviceBuffer<int32_t> did(ids);
    DeviceBuffer<uint16_t> dtable(table);
    DeviceBuffer<float> dout(want.size());
    dout.Poison();
    p.ids = did.get();
    p.table = dtable.get();
    p.out = dout.get();
    ASSERT_TRUE(kernels::cuda::LaunchEmbedding(p, nullptr).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(dout.Download(), want) << "rows " << rows;  // a copy: bit-exact
  }
}

TEST(StepKernelsTest, KvAppendWritesOnlyEachSequencesNewRow) {
  QPROF_SKIP_WITHOUT_GPU();
  std::mt19937 rng(13);
  const int batch = 5, stride = 37, dqk = 576, di = 128;
  const std::vector<float> kv_new = RandomFloats(size_t(batch) * dqk, rng);
  const std::vector<float> ik_new = RandomFloats(size_t(batch) * di, rng);
  const std::vector<int32_t> pos = {0, 36, 5, 17, 1};  // first and last row of a sequence
  // Caches start as a known pattern; only row (b*stride + pos[b]) of each sequence changes.
  std::vector<uint16_t> kv(size_t(batch) * stride * dqk, 0x3f80), ik(size_t(batch) * stride * di, 0x4000);
  std::vector<uint16_t> kv_want = kv, ik_want = ik;
  for (int b = 0; b < batch; ++b) {
    const size_t r = size_t(b) * stride + pos[b];
    kernels::FloatToBf16N(&kv_new[size_t(b) * dqk], dqk, &kv_want[r * dqk]);
    kernels::FloatToBf16N(&ik_new[size_t(b) * di], di, &ik_want[r * di]);
  }
  DeviceBuffer<float> dkv_new(kv_new), dik_new(ik_new);
  DeviceBuffer<int32_t> dpos(pos);
  DeviceBuffer<uint16_t> dkv(kv), dik(ik);
  ASSERT_TRUE(kernels::cuda::LaunchKvAppend(dkv_new.get(), dik_new.get(), dpos.get(), batch,
                                            stride, dqk, di, dkv.get(), dik.get(), nullptr)
                  .ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(dkv.Download(), kv_want);  // BF16 rounding as the CPU's (RNE): bit-exact
  EXPECT_EQ(dik.Download(), ik_want);
}

TEST(StepKernelsTest, LocalExpertIdsMatchTheCpuTwin) {
  QPROF_SKIP_WITHOUT_GPU();
  std::mt19937 rng(21);
  std::uniform_int_distribution<int32_t> any(-3, 300);  // includes -1 and out-of-range ids
  for (int n : {1, 127, 128, 129, 6 * 64}) {
    std::vector<int32_t> ids(n);
    for (int32_t& v : ids) v = any(rng);
    for (auto [begin, end] : std::vector<std::pair<int, int>>{{0, 64}, {192, 256}, {64, 65}}) {
      std::vector<int32_t> want(n);
      runtime::LocalExpertIds(ids.data(), n, begin, end, want.data());
      DeviceBuffer<int32_t> din(ids), dout(n);
      dout.Poison();
      ASSERT_EQ(runtime::cuda::LaunchLocalExpertIds(din.get(), n, begin, end, dout.get(), nullptr),
                cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(dout.Download(), want) << "n " << n << " experts [" << begin << ", " << end << ")";
    }
  }
}

}  // namespace
}  // namespace qprof
