// The work rules of analysis/work/op_work.h on hand-computed calls: each expectation is the
// convention written out with the call's numbers.
#include "analysis/work/op_work.h"

#include "gtest/gtest.h"

namespace qprof::work {
namespace {

OpCall Call(const std::string& op, const std::string& dims, const std::string& types,
            const std::string& concrete = "") {
  auto c = ParseKinetoOpCall(op, dims, types, concrete);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : OpCall{};
}

OpWork Work(const OpCall& c) {
  OpWorkResult r = DeriveOpWork(c);
  EXPECT_EQ(r.outcome, Outcome::kWork) << r.error;
  return r.work;
}

constexpr const char* kBf16x2 = R"(["c10::BFloat16","c10::BFloat16"])";
constexpr const char* kBf16x3 = R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16"])";

TEST(GemmWork, MmAndAddmm) {
  OpWork mm = Work(Call("aten::mm", "[[8944,1024],[1024,2816]]", kBf16x2));
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 8944 * 2816 * 1024);
  EXPECT_DOUBLE_EQ(mm.bytes, 2.0 * (8944.0 * 1024 + 1024.0 * 2816 + 8944.0 * 2816));
  EXPECT_DOUBLE_EQ(mm.weight_bytes, 2.0 * 1024 * 2816);
  EXPECT_EQ(mm.weight_format, "bf16");
  EXPECT_EQ(mm.precision, "bf16");
  EXPECT_EQ(mm.description, "aten::mm [8944,1024]x[1024,2816] bf16");
  OpWork addmm = Work(Call("aten::addmm", "[[1024],[8944,1024],[1024,1024],[],[]]",
                           R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"])",
                           R"(["","","","1","1"])"));
  // 2*M*N*K plus one add per output element for the bias.
  EXPECT_DOUBLE_EQ(addmm.flops, 2.0 * 8944 * 1024 * 1024 + 8944.0 * 1024);
  EXPECT_DOUBLE_EQ(addmm.bytes, 2.0 * (1024 + 8944.0 * 1024 + 1024.0 * 1024 + 8944.0 * 1024));
}

TEST(GemmWork, BatchedLinearMatmul) {
  OpWork bmm = Work(Call("aten::bmm", "[[8,64,32],[8,32,16]]", R"(["float","float"])"));
  EXPECT_DOUBLE_EQ(bmm.flops, 2.0 * 8 * 64 * 16 * 32);
  EXPECT_DOUBLE_EQ(bmm.bytes, 4.0 * (8 * 64 * 32 + 8 * 32 * 16 + 8 * 64 * 16));
  EXPECT_EQ(bmm.precision, "tf32");
  OpWork baddbmm = Work(Call("aten::baddbmm", "[[8,64,16],[8,64,32],[8,32,16]]", kBf16x3));
  EXPECT_DOUBLE_EQ(baddbmm.flops, 2.0 * 8 * 64 * 16 * 32 + 8.0 * 64 * 16);
  OpWork linear = Work(Call("aten::linear", "[[16,559,1024],[2816,1024],[]]",
                            R"(["c10::BFloat16","c10::BFloat16",""])"));
  EXPECT_DOUBLE_EQ(linear.flops, 2.0 * (16 * 559) * 2816 * 1024);
  EXPECT_DOUBLE_EQ(linear.weight_bytes, 2.0 * 2816 * 1024);
  OpWork with_bias = Work(Call("aten::linear", "[[4,64],[32,64],[32]]", kBf16x3));
  EXPECT_DOUBLE_EQ(with_bias.flops, 2.0 * 4 * 32 * 64 + 4.0 * 32);
  // matmul broadcasts batch dimensions: [2,1,5,6] x [3,6,7] -> batch 2*3.
  OpWork mat = Work(Call("aten::matmul", "[[2,1,5,6],[3,6,7]]", kBf16x2));
  EXPECT_DOUBLE_EQ(mat.flops, 2.0 * 6 * 5 * 7 * 6);
  OpWork vec = Work(Call("aten::matmul", "[[6],[6,7]]", kBf16x2));
  EXPECT_DOUBLE_EQ(vec.flops, 2.0 * 7 * 6);
}

TEST(GemmWork, ScaledAndGroupedMm) {
  // _scaled_mm(a, b, scale_a, scale_b, bias, scale_result, out_dtype=15 (bf16), fast_accum)
  OpWork s = Work(Call("aten::_scaled_mm", "[[64,128],[128,256],[],[],[],[],[],[]]",
                       R"(["c10::Float8_e4m3fn","c10::Float8_e4m3fn","float","float","","","Scalar","Scalar"])",
                       R"(["","","","","","","15","False"])"));
  EXPECT_DOUBLE_EQ(s.flops, 2.0 * 64 * 256 * 128);
  EXPECT_EQ(s.precision, "fp8");
  // FP8 inputs (scales are 0-dim: no bytes) and a BF16 output.
  EXPECT_DOUBLE_EQ(s.bytes, 64.0 * 128 + 128.0 * 256 + 2.0 * 64 * 256);
  EXPECT_EQ(s.weight_format, "fp8");
  // Without out_dtype the output has the input's dtype (PyTorch's default).
  OpWork s8 = Work(Call("aten::_scaled_mm", "[[64,128],[128,256]]",
                        R"(["c10::Float8_e4m3fn","c10::Float8_e4m3fn"])"));
  EXPECT_DOUBLE_EQ(s8.bytes, 64.0 * 128 + 128.0 * 256 + 64.0 * 256);
  // _grouped_mm 2-D x 3-D: 40 rows over 4 groups of [64, 32] weights.
  OpWork g = Work(Call("aten::_grouped_mm", "[[40,64],[4,64,32],[4]]",
                       R"(["c10::BFloat16","c10::BFloat16","int"])"));
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 40 * 32 * 64);
  EXPECT_DOUBLE_EQ(g.bytes, 2.0 * (40 * 64 + 4 * 64 * 32 + 40 * 32) + 4.0 * 4);
}

TEST(GemmWork, ShapesThatDoNotAddUp) {
  OpWorkResult r = DeriveOpWork(Call("aten::mm", "[[8,4],[5,2]]", R"(["float","float"])"));
  EXPECT_EQ(r.outcome, Outcome::kInvalid);
  EXPECT_NE(r.error.find("inner dimensions differ"), std::string::npos);
  EXPECT_NE(r.error.find("[8,4],[5,2]"), std::string::npos);
  EXPECT_EQ(DeriveOpWork(Call("aten::mm", "[[8,4]]", R"(["float"])")).outcome, Outcome::kInvalid);
  EXPECT_EQ(DeriveOpWork(Call("aten::bmm", "[[2,8,4],[3,4,2]]", R"(["float","float"])")).outcome,
            Outcome::kInvalid);
  EXPECT_EQ(DeriveOpWork(Call("aten::matmul", "[[2,5,6],[3,6,7]]", R"(["float","float"])")).outcome,
            Outcome::kInvalid);  // batch 2 and 3 do not broadcast
  EXPECT_EQ(DeriveOpWork(Call("aten::view", "[[8,4],[]]", R"(["float","ScalarList"])")).outcome,
            Outcome::kNoRule);
}

TEST(AttentionWork, FlashCausalAndGqa) {
  // _flash_attention_forward(q [B,S,H,d], k, v, cum_q, cum_k, max_q, max_k, dropout,
  // is_causal=True, ...): 4*B*H*Nq*Nkv*d halved.
  OpWork a = Work(Call(
      "aten::_flash_attention_forward",
      "[[16,559,16,64],[16,559,16,64],[16,559,16,64],[],[],[],[],[],[],[],[]]",
      R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","","","Scalar","Scalar","Scalar","Scalar","Scalar","Scalar"])",
      R"(["","","","","","559","559","0.","True","False","0.125"])"));
  EXPECT_DOUBLE_EQ(a.flops, 4.0 * 16 * 16 * 559 * 559 * 64 / 2);
  EXPECT_DOUBLE_EQ(a.bytes, 2.0 * 4 * 16 * 559 * 16 * 64);
  EXPECT_EQ(a.kind, "attention");
  // SDPA layout [B,H,S,d], GQA (8 query heads on 2 key heads), not causal, dv != d.
  OpWork g = Work(Call("aten::_scaled_dot_product_flash_attention",
                       "[[2,8,1,128],[2,2,300,128],[2,2,300,64],[],[],[],[]]",
                       R"(["c10::Half","c10::Half","c10::Half","Scalar","Scalar","Scalar","Scalar"])",
                       R"(["","","","0.","False","False",""])"));
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 2 * 8 * 1 * 300 * (128 + 64));
  EXPECT_DOUBLE_EQ(g.bytes, 2.0 * (2 * 8 * 128 + 2 * 2 * 300 * 128 + 2 * 2 * 300 * 64 + 2 * 8 * 64));
  EXPECT_EQ(g.precision, "fp16");
}

TEST(AttentionWork, VarlenDecodeOnly) {
  // 4 sequences, one query each; 1000 keys in all.
  const char* types = R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","int","int","Scalar","Scalar","Scalar","Scalar","Scalar"])";
  OpWork d = Work(Call("flash_attn::_flash_attn_varlen_forward",
                       "[[4,32,128],[1000,8,128],[1000,8,128],[5],[5],[],[],[],[],[]]", types,
                       R"(["","","","","","1","400","0.","0.088","True"])"));
  EXPECT_DOUBLE_EQ(d.flops, 2.0 * 32 * 1000 * (128 + 128));
  OpWorkResult prefill = DeriveOpWork(Call("flash_attn::_flash_attn_varlen_forward",
                                           "[[64,32,128],[1000,8,128],[1000,8,128],[5],[5],[],[],[],[],[]]",
                                           types, R"(["","","","","","16","400","0.","0.088","True"])"));
  EXPECT_EQ(prefill.outcome, Outcome::kInvalid);
  EXPECT_NE(prefill.error.find("per-sequence lengths"), std::string::npos);
}

TEST(ConvWork, OutputSizeFromPaddingStrideDilation) {
  // cudnn_convolution(x [8,3,224,224], w [64,3,11,11], padding [2,2], stride [4,4],
  // dilation [1,1], groups 1): P = (224 + 4 - 10 - 1) / 4 + 1 = 55.
  OpWork c = Work(Call("aten::cudnn_convolution", "[[8,3,224,224],[64,3,11,11],[],[],[],[],[],[],[]]",
                       R"(["float","float","ScalarList","ScalarList","ScalarList","Scalar","Scalar","Scalar","Scalar"])",
                       R"(["","","[2, 2]","[4, 4]","[1, 1]","1","False","False","True"])"));
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 8 * 64 * 3 * 11 * 11 * 55 * 55);
  EXPECT_DOUBLE_EQ(c.bytes, 4.0 * (8 * 3 * 224 * 224 + 64 * 3 * 11 * 11 + 8 * 64 * 55 * 55));
  // convolution(x, w, bias, stride, padding, dilation, transposed, output_padding, groups)
  // grouped: 4 groups of 16 channels.
  OpWork g = Work(Call("aten::convolution", "[[2,64,10,10],[32,16,3,3],[32],[],[],[],[],[],[]]",
                       R"(["c10::Half","c10::Half","c10::Half","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar"])",
                       R"(["","","","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","4"])"));
  // 2*N*K*(C/groups)*R*S*P*Q plus one add per output element for the bias [32].
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 2 * 32 * 16 * 9 * 10 * 10 + 2.0 * 32 * 10 * 10);
  EXPECT_EQ(DeriveOpWork(Call("aten::convolution", "[[2,64,10,10],[32,16,3,3],[32],[],[],[],[],[],[]]",
                              R"(["float","float","float","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar"])",
                              R"(["","","","[1, 1]","[1, 1]","[1, 1]","True","[0, 0]","4"])"))
                .outcome,
            Outcome::kInvalid);  // transposed
}

TEST(MemoryWork, ReadsAndWrites) {
  // Broadcast multiply: reads both, writes the broadcast shape at the largest input's dtype.
  OpWork mul = Work(Call("aten::mul", "[[1024],[16,559,1024]]", kBf16x2));
  EXPECT_DOUBLE_EQ(mul.bytes, 2.0 * (1024 + 16 * 559 * 1024 + 16 * 559 * 1024));
  EXPECT_EQ(mul.flops, 0);
  // copy_(self, src): reads src at its dtype, writes self at its dtype.
  OpWork copy = Work(Call("aten::copy_", "[[16,559,1024],[16,559,1024],[]]",
                          R"(["c10::BFloat16","float","Scalar"])", R"(["","","False"])"));
  EXPECT_DOUBLE_EQ(copy.bytes, (4.0 + 2.0) * 16 * 559 * 1024);
  OpWork cat = Work(Call("aten::cat", "[[[16,16,559,32],[16,16,559,32]],[]]",
                         R"(["TensorList","Scalar"])", R"(["","-1"])"));
  EXPECT_FALSE(cat.bytes_known);  // a TensorList records no dtype
  OpWork add_ = Work(Call("aten::add_", "[[64,64],[64],[]]", R"(["float","float","Scalar"])"));
  EXPECT_DOUBLE_EQ(add_.bytes, 4.0 * (64 * 64 + 64 + 64 * 64));
  OpWork fill = Work(Call("aten::fill_", "[[10,10],[]]", R"(["long int","Scalar"])"));
  EXPECT_DOUBLE_EQ(fill.bytes, 8.0 * 100);
  EXPECT_EQ(DeriveOpWork(Call("aten::add", "[[3,4],[5,4]]", R"(["float","float"])")).outcome,
            Outcome::kInvalid);
}

}  // namespace
}  // namespace qprof::work
