// GEMM rules of the op-rule table on the ops decode and torch.compile actually call: each
// expectation is the convention (analysis/work/op_work.h: kGemm) written out with the
// call's numbers, from shapes as the public traces record them.
#include "analysis/work/op_work.h"

#include "gtest/gtest.h"
#include "tests/analysis/work/rules_test_util.h"

namespace qprof::work {
namespace {

TEST(OutTensors, AGemmsOutArgumentIsWrittenOnceNeverRead) {
  // torch.compile's extern_kernels.mm(a, b, out=buf): aten::mm with three tensors.
  OpWork mm = Work(Call("aten::mm", "[[32768,2048],[2048,2048],[32768,2048]]",
                        R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16"])", R"(["","",""])"));
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 32768 * 2048 * 2048);
  // A and B read, C written: 3 tensors once each (reading C as an input too gave +50%).
  EXPECT_DOUBLE_EQ(mm.bytes, 2.0 * (32768.0 * 2048 + 2048.0 * 2048 + 32768.0 * 2048));
  EXPECT_DOUBLE_EQ(mm.weight_bytes, 2.0 * 2048 * 2048);
  // addmm(bias, mat1, mat2, beta, alpha, out=): xDiT SD-3.5's shapes.
  OpWork addmm = Work(Call("aten::addmm", "[[2432],[8192,2432],[2432,2432],[],[],[8192,2432]]",
                           R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar","c10::BFloat16"])",
                           R"(["","","","1","1",""])"));
  EXPECT_DOUBLE_EQ(addmm.flops, 2.0 * 8192 * 2432 * 2432 + 8192.0 * 2432);
  EXPECT_DOUBLE_EQ(addmm.bytes, 2.0 * (2432 + 8192.0 * 2432 + 2432.0 * 2432 + 8192.0 * 2432));
  // An out= tensor of another dtype sets the written bytes.
  OpWork f32 = Work(Call("aten::mm", "[[64,32],[32,16],[64,16]]",
                         R"(["c10::BFloat16","c10::BFloat16","float"])"));
  EXPECT_DOUBLE_EQ(f32.bytes, 2.0 * (64 * 32 + 32 * 16) + 4.0 * 64 * 16);
}

TEST(CustomGemms, VllmRocmUnquantizedGemmIsLinear) {
  // gpt-oss decode on MI300X: x [32,2880], weight [5120,2880], bias [5120].
  OpWork w = Work(Call("vllm::rocm_unquantized_gemm", "[[32,2880],[5120,2880],[5120]]",
                       R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16"])"));
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 32 * 5120 * 2880 + 32.0 * 5120);
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * (32 * 2880 + 5120.0 * 2880 + 5120 + 32 * 5120));
  EXPECT_DOUBLE_EQ(w.weight_bytes, 2.0 * 5120 * 2880);
  EXPECT_EQ(w.kind, "gemm");
  EXPECT_EQ(w.precision, "bf16");
  // The _impl spelling is the same op.
  EXPECT_DOUBLE_EQ(Work(Call("vllm::rocm_unquantized_gemm_impl", "[[32,2880],[5120,2880],[5120]]",
                             R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16"])"))
                       .flops,
                   w.flops);
}

TEST(CustomGemms, AiterGemmA16W16) {
  // SGLang Qwen3-8B decode capture: aiter::gemm_a16w16(x, w, bias=None, dtype=15, ...).
  OpWork w = Work(Call("aiter::gemm_a16w16", "[[32,4096],[6144,4096],[],[],[],[],[]]",
                       R"(["c10::BFloat16","c10::BFloat16","","Scalar","","",""])",
                       R"(["","","","15","","",""])"));
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 32 * 6144 * 4096);
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * (32 * 4096 + 6144.0 * 4096 + 32 * 6144));
}

TEST(CustomGemms, CutlassScaledMmWritesItsOutArgument) {
  // cutlass_scaled_mm(out [32,4096] bf16, a [32,7168] fp8, b [7168,4096] fp8 column-major,
  // a_scales [32,1], b_scales [1,4096], bias None)
  OpWork w = Work(Call("_C::cutlass_scaled_mm", "[[32,4096],[32,7168],[7168,4096],[32,1],[1,4096],[]]",
                       R"(["c10::BFloat16","c10::Float8_e4m3fn","c10::Float8_e4m3fn","float","float",""])"));
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 32 * 4096 * 7168);
  EXPECT_DOUBLE_EQ(w.bytes, 32.0 * 7168 + 7168.0 * 4096 + 4.0 * 32 + 4.0 * 4096 + 2.0 * 32 * 4096);
  EXPECT_EQ(w.precision, "fp8");
  EXPECT_EQ(w.weight_format, "fp8");
  EXPECT_DOUBLE_EQ(w.weight_bytes, 7168.0 * 4096);
  // Inner sizes that differ are an error naming the op.
  OpWorkResult bad = DeriveOpWork(Call("_C::cutlass_scaled_mm", "[[32,4096],[32,7168],[4096,4096],[32,1],[1,4096],[]]",
                                       R"(["c10::BFloat16","c10::Float8_e4m3fn","c10::Float8_e4m3fn","float","float",""])"));
  EXPECT_EQ(bad.outcome, Outcome::kInvalid);
  EXPECT_NE(bad.error.find("_C::cutlass_scaled_mm"), std::string::npos);
}

TEST(CustomGemms, Fp4GemmsPackTwoValuesPerByte) {
  // cutlass_scaled_fp4_mm(out [16,8192] bf16, a [16,K/2] u8, b [8192,K/2] u8, a_sf [16,K/16],
  // b_sf [8192,K/16], alpha): K = 4096.
  for (const char* op : {"_C::cutlass_scaled_fp4_mm", "sgl_kernel::cutlass_scaled_fp4_mm"}) {
    OpWork w = Work(Call(op, "[[16,8192],[16,2048],[8192,2048],[16,256],[8192,256],[]]",
                         R"(["c10::BFloat16","unsigned char","unsigned char","c10::Float8_e4m3fn","c10::Float8_e4m3fn","float"])"));
    EXPECT_DOUBLE_EQ(w.flops, 2.0 * 16 * 8192 * 4096) << op;
    EXPECT_DOUBLE_EQ(w.bytes, 16.0 * 2048 + 8192.0 * 2048 + 16.0 * 256 + 8192.0 * 256 + 2.0 * 16 * 8192)
        << op;
    EXPECT_EQ(w.precision, "fp4");
    EXPECT_EQ(w.weight_bits, 4);
    EXPECT_EQ(w.weight_format, "fp4");
  }
}

TEST(CustomGemms, SglKernelFp8ScaledMmHasAnOutDtype) {
  // fp8_scaled_mm(mat_a [32,7168], mat_b [7168,4096], scales_a, scales_b, out_dtype=bf16, bias)
  OpWork w = Work(Call("sgl_kernel::fp8_scaled_mm", "[[32,7168],[7168,4096],[32,1],[1,4096],[],[]]",
                       R"(["c10::Float8_e4m3fn","c10::Float8_e4m3fn","float","float","ScalarType",""])",
                       R"(["","","","","15",""])"));
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 32 * 4096 * 7168);
  EXPECT_DOUBLE_EQ(w.bytes, 32.0 * 7168 + 7168.0 * 4096 + 4.0 * 32 + 4.0 * 4096 + 2.0 * 32 * 4096);
}

TEST(CustomGemms, AiterA8W8WritesBf16) {
  // gemm_a8w8_blockscale_ck(XQ [32,7168], WQ [2112,7168], x_scale [32,56], w_scale [17,56], Out)
  const char* types =
      R"(["c10::Float8_e4m3fnuz","c10::Float8_e4m3fnuz","float","float","c10::BFloat16"])";
  const double want = 32.0 * 7168 + 2112.0 * 7168 + 4.0 * 32 * 56 + 4.0 * 17 * 56 + 2.0 * 32 * 2112;
  OpWork with_out = Work(Call("aiter::gemm_a8w8_blockscale_ck",
                              "[[32,7168],[2112,7168],[32,56],[17,56],[32,2112]]", types));
  EXPECT_DOUBLE_EQ(with_out.flops, 2.0 * 32 * 2112 * 7168);
  EXPECT_DOUBLE_EQ(with_out.bytes, want);
  // Without the Out argument the output is BF16 all the same.
  OpWork no_out = Work(Call("aiter::gemm_a8w8_blockscale_ck", "[[32,7168],[2112,7168],[32,56],[17,56]]",
                            R"(["c10::Float8_e4m3fnuz","c10::Float8_e4m3fnuz","float","float"])"));
  EXPECT_DOUBLE_EQ(no_out.bytes, want);
}

TEST(CustomGemms, ScaledMmKeepsTorchsConvention) {
  // torch._scaled_mm with out_dtype bf16 (15): FP8 inputs, BF16 output.
  OpWork s = Work(Call("aten::_scaled_mm", "[[64,128],[128,256],[],[],[],[],[],[]]",
                       R"(["c10::Float8_e4m3fn","c10::Float8_e4m3fn","float","float","","","Scalar","Scalar"])",
                       R"(["","","","","","","15","False"])"));
  EXPECT_DOUBLE_EQ(s.bytes, 64.0 * 128 + 128.0 * 256 + 2.0 * 64 * 256);
  EXPECT_NE(s.description.find("-> bf16"), std::string::npos) << s.description;
}

}  // namespace
}  // namespace qprof::work
