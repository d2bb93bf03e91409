// Memory-bound rules (analysis/work/op_work.h: kElementwise with out=, kReduce, kMoved,
// kRope, kKvStore, kTriton) on calls with the shapes TraceLens's public vLLM, SGLang and
// torch.compile traces record; bytes written out by hand.
#include "analysis/work/op_work.h"

#include "gtest/gtest.h"
#include "tests/analysis/work/rules_test_util.h"

namespace qprof::work {
namespace {

// Memory-bound work: bytes only.
OpWork MemoryWork(const OpCall& c) {
  OpWorkResult r = DeriveOpWork(c);
  EXPECT_EQ(r.outcome, Outcome::kWork) << c.op << ": " << r.error;
  EXPECT_EQ(r.work.flops, 0) << c.op;
  EXPECT_EQ(r.work.kind, "memory") << c.op;
  return r.work;
}

TEST(MemoryRules, ElementwiseOutTensorIsTheOutput) {
  // add(self [4,64], other [64], alpha, out [4,64] bf16): reads the inputs, writes out once.
  OpWork w = MemoryWork(Call("aten::add", "[[4,64],[64],[],[4,64]]", R"(["float","float","Scalar","c10::BFloat16"])"));
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (256 + 64) + 2.0 * 256);
  OpWork plain = MemoryWork(Call("aten::add", "[[4,64],[64],[]]", R"(["float","float","Scalar"])"));
  EXPECT_DOUBLE_EQ(plain.bytes, 4.0 * (256 + 64) + 4.0 * 256);
}

TEST(MemoryRules, Reductions) {
  // mean(x [16,559,1024], dim [-1], keepdim): read x, write [16,559,1].
  OpWork mean = MemoryWork(Call("aten::mean", "[[16,559,1024],[],[],[]]",
                          R"(["c10::BFloat16","ScalarList","Scalar",""])", R"(["","[-1]","True",""])"));
  EXPECT_DOUBLE_EQ(mean.bytes, 2.0 * 16 * 559 * 1024 + 2.0 * 16 * 559);
  // sum(x): every dimension, one element.
  OpWork sum = MemoryWork(Call("aten::sum", "[[10,1000]]", R"(["float"])"));
  EXPECT_DOUBLE_EQ(sum.bytes, 4.0 * 10000 + 4.0);
  // argmax(x, dim, keepdim) whose dim the trace blanked: the input only, said so.
  OpWork arg = MemoryWork(Call("aten::argmax", "[[32,151936],[],[]]", R"(["float","Scalar","Scalar"])",
                         R"(["","","False"])"));
  EXPECT_DOUBLE_EQ(arg.bytes, 4.0 * 32 * 151936);
  EXPECT_NE(arg.description.find("not recorded"), std::string::npos);
  // max(self, other) is elementwise.
  OpWork mx = MemoryWork(Call("aten::max", "[[8,8],[8,8]]", R"(["float","float"])"));
  EXPECT_DOUBLE_EQ(mx.bytes, 4.0 * 64 * 3);
}

TEST(MemoryRules, CustomOpsWithOutputArguments) {
  // aiter add_rmsnorm(out, input, residual_in, residual_out, weight, eps): each once.
  OpWork add = MemoryWork(Call("aiter::add_rmsnorm", "[[32,4096],[32,4096],[32,4096],[32,4096],[4096],[]]",
                         R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar"])"));
  EXPECT_DOUBLE_EQ(add.bytes, 2.0 * (4 * 32 * 4096 + 4096));
  // vLLM fused_add_rms_norm(input!, residual!, weight, eps): input and residual in place.
  OpWork fused = MemoryWork(Call("_C::fused_add_rms_norm", "[[888,2880],[888,2880],[2880],[]]",
                           R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar"])"));
  EXPECT_DOUBLE_EQ(fused.bytes, 2.0 * (2 * 2 * 888 * 2880 + 2880));
  // aiter rms_norm(x, weight, eps, ...) returns its output.
  OpWork rms = MemoryWork(Call("aiter::rms_norm", "[[8192,2880],[2880],[],[]]",
                         R"(["c10::BFloat16","c10::BFloat16","Scalar","Scalar"])"));
  EXPECT_DOUBLE_EQ(rms.bytes, 2.0 * (2 * 8192 * 2880 + 2880));
  // sgl-kernel silu_and_mul(out [32,12288], input [32,24576]).
  OpWork act = MemoryWork(Call("sgl_kernel::silu_and_mul", "[[32,12288],[32,24576]]",
                         R"(["c10::BFloat16","c10::BFloat16"])"));
  EXPECT_DOUBLE_EQ(act.bytes, 2.0 * 32 * (12288 + 24576));
}

TEST(MemoryRules, RopeRotatesQAndKInPlace) {
  // rotary_embedding(positions [32], query [32,4096], key [32,1024], head_size, cos_sin_cache
  // [41216,128], is_neox): Q and K read and written, one cache row per position.
  OpWork w = MemoryWork(Call("sgl_kernel::rotary_embedding", "[[32],[32,4096],[32,1024],[],[41216,128],[]]",
                       R"(["long int","c10::BFloat16","c10::BFloat16","Scalar","c10::BFloat16","Scalar"])",
                       R"(["","","","128","","True"])"));
  EXPECT_DOUBLE_EQ(w.bytes, 2 * 2.0 * 32 * 4096 + 2 * 2.0 * 32 * 1024 + 8.0 * 32 + 2.0 * 32 * 128);
}

TEST(MemoryRules, KvCacheStoreWritesTheNewRowsOnly) {
  // reshape_and_cache_flash(key [32,8,64], value, key_cache [blocks,32,8,64], value_cache,
  // slot_mapping [32], kv_cache_dtype, k_scale, v_scale)
  OpWork w = MemoryWork(Call("_C_cache_ops::reshape_and_cache_flash",
                       "[[32,8,64],[32,8,64],[224304,32,8,64],[224304,32,8,64],[32],[],[],[]]",
                       R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","long int","","float","float"])"));
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * 2 * 32 * 512 + 8.0 * 32 + 2.0 * 2 * 32 * 512);
  // An FP8 cache takes one byte per element.
  OpWork f8 = MemoryWork(Call("_C_cache_ops::reshape_and_cache_flash",
                        "[[32,8,64],[32,8,64],[224304,32,8,64],[224304,32,8,64],[32],[],[],[]]",
                        R"(["c10::BFloat16","c10::BFloat16","c10::Float8_e4m3fn","c10::Float8_e4m3fn","long int","","float","float"])"));
  EXPECT_DOUBLE_EQ(f8.bytes, 2.0 * 2 * 32 * 512 + 8.0 * 32 + 1.0 * 2 * 32 * 512);
  // SGLang store_cache(k [32,1024], v, k_cache, v_cache, indices [32], ...)
  OpWork s = MemoryWork(Call("sglang::store_cache", "[[32,1024],[32,1024],[835874,1024],[835874,1024],[32],[],[]]",
                       R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","long int","Scalar","Scalar"])"));
  EXPECT_DOUBLE_EQ(s.bytes, 4 * 2.0 * 32 * 1024 + 8.0 * 32);
}

TEST(MemoryRules, TritonInductorKernelsMoveEachPointerOnce) {
  // torch.compile's fused RMSNorm: in_ptr0 [8,4096,2048], in_ptr1 [2048], out_ptr0, xnumel, rnumel.
  OpWork w = MemoryWork(Call("triton_red_fused_add_mean_mul_pow_rsqrt_0", "[[8,4096,2048],[2048],[8,4096,2048],[],[]]",
                       R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"])",
                       R"(["","","","32768","2048"])"));
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * (2 * 8.0 * 4096 * 2048 + 2048));
  OpWork poi = MemoryWork(Call("triton_poi_fused__unsafe_view_mul_silu_2", "[[8,4096,8192],[32768,8192],[]]",
                         R"(["c10::BFloat16","c10::BFloat16","Scalar"])", R"(["","","268435456"])"));
  EXPECT_DOUBLE_EQ(poi.bytes, 2.0 * 2 * 8 * 4096 * 8192);
}

}  // namespace
}  // namespace qprof::work
