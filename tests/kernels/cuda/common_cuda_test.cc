// GPU tests of the small decode kernels against kernels/common/common_cpu.h.
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/cuda/common_cuda.h"
#include "tests/kernels/cuda/gpu_test_util.h"

namespace qprof {
namespace {

using testing_cuda::DeviceBuffer;
using testing_cuda::RandomFloats;
using testing_cuda::RelError;

TEST(CommonCudaTest, RmsNormDenseGemmArgmaxRouterMatchCpu) {
  QPROF_SKIP_WITHOUT_GPU();
  std::mt19937 rng(17);
  for (int m : {1, 3, 17}) {
    const int n = 333, k = 288;  // n not a multiple of the 64-row block
    const std::vector<float> x = RandomFloats(m * k, rng);
    const std::vector<float> wf = RandomFloats(n * k, rng, 0.1f);
    std::vector<uint16_t> w(wf.size());
    kernels::FloatToBf16N(wf.data(), wf.size(), w.data());
    // RMSNorm
    std::vector<uint16_t> nw(w.begin(), w.begin() + k);
    std::vector<float> want(m * k);
    kernels::RmsNormParams rp{m, k, 0, 0, 1e-6f, x.data(), nw.data(), want.data()};
    ASSERT_TRUE(kernels::RmsNormCpu(rp).ok());
    DeviceBuffer<float> dx(x), dn(want.size());
    DeviceBuffer<uint16_t> dnw(nw), dw(w);
    dn.Poison();
    rp.x = dx.get(); rp.weight = dnw.get(); rp.out = dn.get();
    ASSERT_TRUE(kernels::cuda::LaunchRmsNorm(rp, nullptr).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_LT(RelError(dn.Download(), want), 1e-5) << "rmsnorm m=" << m;
    // Dense GEMM
    std::vector<float> y(m * n);
    kernels::DenseGemmParams gp{m, n, k, x.data(), w.data(), y.data(), false, nullptr};
    ASSERT_TRUE(kernels::DenseGemmReferenceCpu(gp).ok());
    DeviceBuffer<float> dy(y.size());
    dy.Poison();
    gp.x = dx.get(); gp.w = dw.get(); gp.y = dy.get();
    ASSERT_TRUE(kernels::cuda::LaunchDenseGemm(gp, nullptr).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_LT(RelError(dy.Download(), y), 1e-2) << "gemm m=" << m;  // BF16 activations in the MMA
    // Argmax over the GEMM output (rows m, cols n)
    std::vector<int32_t> ids(m);
    kernels::ArgmaxParams ap{m, n, y.data(), ids.data()};
    ASSERT_TRUE(kernels::ArgmaxCpu(ap).ok());
    DeviceBuffer<float> dlog(y);
    DeviceBuffer<int32_t> dids(m);
    dids.Poison();
    ap.logits = dlog.get(); ap.ids = dids.get();
    ASSERT_TRUE(kernels::cuda::LaunchArgmax(ap, nullptr).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(dids.Download(), ids);
    // Router top-6 of 37 experts
    const int experts = 37, topk = 6;
    const std::vector<float> logits = RandomFloats(m * experts, rng);
    const std::vector<float> bias = RandomFloats(experts, rng, 0.1f);
    std::vector<int32_t> rid(m * topk);
    std::vector<float> rw(m * topk);
    kernels::RouterTopkParams tp{m, experts, topk, 2.5f, logits.data(), bias.data(), rid.data(), rw.data()};
    ASSERT_TRUE(kernels::RouterTopkCpu(tp).ok());
    DeviceBuffer<float> dl(logits), db(bias), drw(rw.size());
    DeviceBuffer<int32_t> drid(rid.size());
    drid.Poison();
    drw.Poison();
    tp.logits = dl.get(); tp.bias = db.get(); tp.topk_ids = drid.get(); tp.topk_weights = drw.get();
    ASSERT_TRUE(kernels::cuda::LaunchRouterTopk(tp, nullptr).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(drid.Download(), rid);
    EXPECT_LT(RelError(drw.Download(), rw), 1e-5);
  }
}

}  // namespace
}  // namespace qprof

namespace qprof {
namespace {

// Bug 4: NaN logits must not select out-of-range ids (the kernel used to keep 0x7fffffff
// when every remaining key was NaN and write it as an expert id). Same rule as the CPU.
TEST(CommonCudaTest, RouterTopkWithNaNLogitsMatchesCpu) {
  QPROF_SKIP_WITHOUT_GPU();
  const int tokens = 3, experts = 37, topk = 6;
  std::vector<float> logits(tokens * experts, 0.5f), bias(experts, 0.f);
  for (int e = 0; e < experts; ++e) logits[e] = NAN;                         // all NaN
  for (int e = 0; e < experts; e += 3) logits[experts + e] = NAN;            // some NaN
  for (int e = 0; e < experts; ++e) logits[2 * experts + e] = e < 34 ? NAN : 0.1f * e;  // 3 finite
  std::vector<int32_t> rid(tokens * topk);
  std::vector<float> rw(tokens * topk);
  kernels::RouterTopkParams tp{tokens, experts, topk, 1.f, logits.data(), bias.data(), rid.data(), rw.data()};
  ASSERT_TRUE(kernels::RouterTopkCpu(tp).ok());
  DeviceBuffer<float> dl(logits), db(bias), drw(rw.size());
  DeviceBuffer<int32_t> drid(rid.size());
  drid.Poison();
  drw.Poison();
  tp.logits = dl.get(); tp.bias = db.get(); tp.topk_ids = drid.get(); tp.topk_weights = drw.get();
  ASSERT_TRUE(kernels::cuda::LaunchRouterTopk(tp, nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<int32_t> got = drid.Download();
  EXPECT_EQ(got, rid);
  for (int32_t id : got) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, experts);
  }
  EXPECT_LT(RelError(drw.Download(), rw), 1e-5);
}

}  // namespace
}  // namespace qprof
