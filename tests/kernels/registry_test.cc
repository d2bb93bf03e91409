#include "kernels/registry/registry.h"

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "kernels/registry/entries.h"
#include "kernels/registry/work_models.h"
#include "proto/vocabulary.h"

namespace qprof::kernels {
namespace {

TEST(RegistryTest, EveryVariantIsRegisteredWithKnownVocabulary) {
  const KernelRegistry& r = KernelRegistry::Global();
  for (const char* id :
       {"moe.slot_gemv.mxfp4", "moe.slot_gemv.nvfp4", "moe.w4a16_mma.mxfp4",
        "moe.w4a16_mma.nvfp4", "moe.fp4_mma.mxfp4", "moe.fp4_mma.nvfp4", "moe.grouped.mxfp4",
        "moe.grouped.nvfp4", "attn.sparse_mla.simt", "attn.sparse_mla.mma", "attn.indexer",
        "attn.kv_append", "norm.rmsnorm", "rope", "moe.router", "embedding", "gemm.lm_head",
        "sampling.argmax", "gemm.dense", "comm.allreduce"}) {
    const KernelInfo* k = r.Find(id);
    ASSERT_NE(k, nullptr) << id;
    EXPECT_TRUE(IsKnownRole(k->role)) << id << " " << k->role;
    EXPECT_TRUE(IsKnownPipeClass(k->gpu_pipe_class)) << id;
    EXPECT_TRUE(static_cast<bool>(k->work)) << id;
  }
  std::set<std::string> ids;
  for (const KernelInfo& k : r.All()) EXPECT_TRUE(ids.insert(k.id).second) << k.id;
}

TEST(RegistryTest, PipeClassesFollowTheStory) {
  const KernelRegistry& r = KernelRegistry::Global();
  EXPECT_EQ(r.Find("moe.slot_gemv.mxfp4")->gpu_pipe_class, "simt");
  EXPECT_EQ(r.Find("moe.w4a16_mma.nvfp4")->gpu_pipe_class, "tensor");
  EXPECT_EQ(r.Find("moe.fp4_mma.nvfp4")->compute_pipe, "tensor_fp4");
  EXPECT_EQ(r.Find("attn.sparse_mla.simt")->gpu_pipe_class, "simt");
  EXPECT_EQ(r.Find("attn.sparse_mla.mma")->gpu_pipe_class, "tensor");
}

TEST(RegistryTest, FindByCudaNameHandlesReturnTypesNamespacesAndLongestMatch) {
  const KernelRegistry& r = KernelRegistry::Global();
  EXPECT_EQ(CudaNameForId("moe.slot_gemv.mxfp4"), "qprof_moe_slot_gemv_mxfp4");
  const KernelInfo* k =
      r.FindByCudaName("void qprof::cuda::qprof_moe_slot_gemv_mxfp4_w13<128>(Params)");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->id, "moe.slot_gemv.mxfp4");
  k = r.FindByCudaName("qprof_gemm_lm_head(float const*)");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->id, "gemm.lm_head");
  EXPECT_EQ(r.FindByCudaName("not_qprof_moe_slot_gemv_mxfp4"), nullptr);
  EXPECT_EQ(r.FindByCudaName("sm90_xmma_gemm_bf16"), nullptr);
}

TEST(WorkModelTest, SlotPathReadsWeightsPerSlotGroupedPerUniqueExpert) {
  KernelShape s = {{"tokens", 16}, {"topk", 6}, {"experts", 256}, {"dim", 4096},
                   {"inter", 2048}, {"unique_experts", 80}};
  const KernelRegistry& r = KernelRegistry::Global();
  proto::WorkModel slot = r.Find("moe.slot_gemv.mxfp4")->work(s);
  proto::WorkModel mma = r.Find("moe.w4a16_mma.mxfp4")->work(s);
  double expert = 3.0 * 2048 * 4096 * 4.25 / 8;
  EXPECT_DOUBLE_EQ(slot.weight_bytes(), 96 * expert);
  EXPECT_DOUBLE_EQ(mma.weight_bytes(), 80 * expert);
  EXPECT_DOUBLE_EQ(slot.flops(), 2.0 * 96 * 3 * 2048 * 4096);
  EXPECT_DOUBLE_EQ(slot.flops(), mma.flops());
  EXPECT_EQ(mma.compute_pipe(), "tensor_bf16");
  proto::WorkModel nv = r.Find("moe.w4a16_mma.nvfp4")->work(s);
  EXPECT_DOUBLE_EQ(nv.weight_bytes(), 80 * (3.0 * 2048 * 4096 * 4.5 / 8 + 8));
  EXPECT_DOUBLE_EQ(nv.bytes(), nv.weight_bytes() + nv.activation_bytes() + nv.kv_bytes());
}

TEST(WorkModelTest, DenseAndAttention) {
  proto::WorkModel g = DenseGemmWork({{"m", 3}, {"n", 5}, {"k", 7}});
  EXPECT_DOUBLE_EQ(g.flops(), 2.0 * 3 * 5 * 7);
  EXPECT_DOUBLE_EQ(g.weight_bytes(), 5 * 7 * 2);
  proto::WorkModel a = SparseMlaWork(
      {{"batch", 2}, {"heads", 4}, {"selected", 10}, {"d_qk", 576}, {"d_v", 512}}, "simt_fp32");
  EXPECT_DOUBLE_EQ(a.kv_bytes(), 2 * 10 * 576 * 2);
  EXPECT_DOUBLE_EQ(a.flops(), 2.0 * 2 * 4 * 10 * (576 + 512));
  EXPECT_DOUBLE_EQ(format::BitsPerWeight("mxfp4"), 4.25);
  EXPECT_DOUBLE_EQ(format::BitsPerWeight("nvfp4"), 4.5);
  // FP8 is the block-scaled DeepSeek layout (one FP32 per 128x128), as the analysis uses.
  EXPECT_DOUBLE_EQ(format::BitsPerWeight("fp8"), 8.0 + 32.0 / 16384);
}

}  // namespace
}  // namespace qprof::kernels
