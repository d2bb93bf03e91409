#include "analysis/work/op_call.h"

#include "gtest/gtest.h"

namespace qprof::work {
namespace {

TEST(OpCall, KinetoArraysLineUp) {
  auto c = ParseKinetoOpCall("aten::addmm", "[[1024],[8944,1024],[1024,1024],[],[]]",
                             R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"])",
                             R"(["","","","1","1"])");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->args.size(), 5u);
  EXPECT_EQ(c->args[1].dims, (std::vector<int64_t>{8944, 1024}));
  ASSERT_TRUE(c->args[1].dtype.has_value());
  EXPECT_EQ(c->args[1].dtype->name, "bf16");
  EXPECT_EQ(c->args[1].dtype->bytes, 2);
  EXPECT_FALSE(c->args[3].dtype.has_value());  // "Scalar"
  EXPECT_EQ(c->args[3].value, "1");
  EXPECT_DOUBLE_EQ(c->args[1].Elements(), 8944.0 * 1024);
  EXPECT_EQ(DimsText(c->args[1]), "[8944,1024]");
}

TEST(OpCall, TensorListsAndZeroDim) {
  auto c = ParseKinetoOpCall("aten::cat", "[[[16,16,559,32],[16,16,559,32]],[]]",
                             R"(["TensorList","Scalar"])", R"(["","-1"])");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->args[0].is_list);
  EXPECT_EQ(c->args[0].list.size(), 2u);
  EXPECT_DOUBLE_EQ(c->args[0].Elements(), 2.0 * 16 * 16 * 559 * 32);
  EXPECT_EQ(DimsText(c->args[0]), "[2x[16,16,559,32]]");
  EXPECT_FALSE(c->args[1].IsTensor());
}

TEST(OpCall, RejectsShapesThatCannotBe) {
  EXPECT_FALSE(ParseDims("[[3,-4]]").ok());             // negative
  EXPECT_FALSE(ParseDims("[[1099511627777]]").ok());     // beyond kMaxDim (2^40)
  EXPECT_FALSE(ParseDims("[[1048576,1048576,1048576]]").ok());  // 2^60 elements
  EXPECT_FALSE(ParseDims("[[1.5]]").ok());               // not an integer
  EXPECT_FALSE(ParseDims("[[\"8\"]]").ok());
  EXPECT_FALSE(ParseDims("[3]").ok());                    // an argument that is not a list
  EXPECT_FALSE(ParseDims("{").ok());
  EXPECT_FALSE(ParseDims("[[[1,2],3]]").ok());            // a list mixing sizes and numbers
  EXPECT_FALSE(ParseDims("[[18446744073709551615]]").ok());
  EXPECT_FALSE(ParseDims("[[1,1,1,1,1,1,1,1,1,1,1,1,1]]").ok());  // rank 13
  EXPECT_TRUE(ParseDims("[[0,5],[]]").ok());              // empty tensors are tensors
  // Arrays of different lengths, and a type that is not a string.
  EXPECT_FALSE(ParseKinetoOpCall("aten::mm", "[[2,3],[3,4]]", R"(["float"])", "").ok());
  EXPECT_FALSE(ParseKinetoOpCall("aten::mm", "[[2,3],[3,4]]", R"(["float",3])", "").ok());
  EXPECT_FALSE(ParseKinetoOpCall("aten::mm", "[[2,3],[3,4]]", "", R"(["",""," "])").ok());
}

TEST(OpCall, EmitNvtxRangeNames) {
  auto none = ParseNvtxOpCall("decode/step 3");
  EXPECT_FALSE(none.has_value());
  auto c = ParseNvtxOpCall(
      "aten::mm, seq = 12, op_id = 34, sizes = [[8944, 1024], [1024, 2816]], input_op_ids = [(33,0)]");
  ASSERT_TRUE(c.has_value());
  ASSERT_TRUE(c->ok()) << c->status();
  EXPECT_EQ((*c)->op, "aten::mm");
  ASSERT_EQ((*c)->args.size(), 2u);
  EXPECT_EQ((*c)->args[1].dims, (std::vector<int64_t>{1024, 2816}));
  EXPECT_FALSE((*c)->args[0].dtype.has_value());  // nsys records no types
  FillMissingDtypes(DtypeByName("fp16"), &**c);
  EXPECT_EQ((*c)->args[0].dtype->name, "fp16");
  // Without seq (sizes only) and with a cut list.
  auto d = ParseNvtxOpCall("aten::add, sizes = [[4], []]");
  ASSERT_TRUE(d.has_value() && d->ok());
  EXPECT_EQ((*d)->op, "aten::add");
  auto cut = ParseNvtxOpCall("aten::mm, sizes = [[8944, 1024], [1024");
  ASSERT_TRUE(cut.has_value());
  EXPECT_FALSE(cut->ok());
}

TEST(OpCall, DtypesFromTorchNamesAndKernelNames) {
  EXPECT_EQ(DtypeOfTorchType("c10::Float8_e4m3fn")->precision, "fp8");
  EXPECT_EQ(DtypeOfTorchType("long int")->bytes, 8);
  EXPECT_EQ(DtypeOfTorchType("c10::Float4_e2m1fn_x2")->bytes, 1);
  EXPECT_FALSE(DtypeOfTorchType("ScalarList").has_value());
  EXPECT_TRUE(IsNonTensorType("TensorList"));
  EXPECT_EQ(DtypeOfKernelName("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64")->name, "bf16");
  EXPECT_EQ(DtypeOfKernelName("sm90_xmma_gemm_e4m3e4m3_bf16f32_f32_tn_n")->name, "fp8_e4m3");
  EXPECT_EQ(DtypeOfKernelName("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_tn")->name, "fp16");
  EXPECT_EQ(DtypeOfKernelName("void flash_fwd_kernel<Flash_fwd_kernel_traits<64, cutlass::bfloat16_t>>")->name, "bf16");
  EXPECT_EQ(DtypeOfKernelName("ampere_sgemm_32x32_sliced1x4_tn")->name, "fp32");
  EXPECT_FALSE(DtypeOfKernelName("nvjet_tst_64x8_64x16_4x1_v_bz_TNT").has_value());
  EXPECT_EQ(DtypeOfKernelName("CatArrayBatchedCopy<at::native::OpaqueType<2u>, unsigned int, 4, 64, 64>")->bytes, 2);
  EXPECT_FALSE(DtypeOfKernelName("void at::native::reduce_kernel<512, 1, float>").has_value());
}

}  // namespace
}  // namespace qprof::work
