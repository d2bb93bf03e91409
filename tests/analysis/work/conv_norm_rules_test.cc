// Convolution (forward, backward) and normalisation (forward, backward) rules on calls as
// Kineto records them (shapes from TraceLens's public ResNet and ViT traces, MIOpen and
// cuDNN): each expectation is the convention (analysis/work/op_work.h) written out by hand.
#include "analysis/work/op_work.h"

#include "gtest/gtest.h"
#include "tests/analysis/work/rules_test_util.h"

namespace qprof::work {
namespace {

constexpr double kBf16 = 2;

TEST(ConvRules, MiopenForward) {
  // miopen_convolution(x [10,3,224,224], w [64,3,7,7], bias None, padding [3,3], stride
  // [2,2], dilation [1,1], groups 1): P = floor((224 + 6 - 6 - 1) / 2) + 1 = 112.
  OpWork c = Work(Call("aten::miopen_convolution", "[[10,3,224,224],[64,3,7,7],[],[],[],[],[],[],[]]",
                       R"(["c10::BFloat16","c10::BFloat16","","ScalarList","ScalarList","ScalarList","Scalar","Scalar","Scalar"])",
                       R"(["","","","[3, 3]","[2, 2]","[1, 1]","1","False","False"])"));
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 10 * 64 * 3 * 7 * 7 * 112 * 112);
  EXPECT_DOUBLE_EQ(c.bytes, kBf16 * (10 * 3 * 224 * 224 + 64 * 3 * 7 * 7 + 10 * 64 * 112 * 112));
  EXPECT_EQ(c.kind, "conv");
  EXPECT_DOUBLE_EQ(c.weight_bytes, kBf16 * 64 * 3 * 7 * 7);
}

constexpr const char* kBwdTypes =
    R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","ScalarList","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar","ScalarList"])";

TEST(ConvRules, BackwardIsGradInputPlusGradWeight) {
  // convolution_backward(grad [10,512,7,7], x [10,512,7,7], w [512,512,3,3], bias_sizes [0],
  // stride [1,1], padding [1,1], dilation [1,1], transposed, output_padding, groups 1,
  // output_mask [True, True, False]) as ResNet's backward on MI300X records it.
  OpWork b = Work(Call("aten::convolution_backward",
                       "[[10,512,7,7],[10,512,7,7],[512,512,3,3],[],[],[],[],[],[],[],[]]", kBwdTypes,
                       R"(["","","","[0]","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1","[True, True, False]"])"));
  const double fwd = 2.0 * 10 * 512 * 512 * 3 * 3 * 7 * 7;
  EXPECT_DOUBLE_EQ(b.flops, 2 * fwd);  // grad input + grad weight, each the forward's
  const double g = kBf16 * 10 * 512 * 49, x = g, w = kBf16 * 512 * 512 * 9;
  // dgrad reads grad and weight, writes grad input; wgrad reads grad and input, writes grad weight.
  EXPECT_DOUBLE_EQ(b.bytes, (g + w + x) + (g + x + w));
  // Strided: grad [10,512,7,7] of x [10,256,14,14] with stride 2, padding 1.
  OpWork s = Work(Call("aten::convolution_backward",
                       "[[10,512,7,7],[10,256,14,14],[512,256,3,3],[],[],[],[],[],[],[],[]]", kBwdTypes,
                       R"(["","","","[0]","[2, 2]","[1, 1]","[1, 1]","False","[0, 0]","1","[True, True, False]"])"));
  EXPECT_DOUBLE_EQ(s.flops, 2 * (2.0 * 10 * 512 * 256 * 9 * 7 * 7));
  // Only grad weight (a first layer: no grad input).
  OpWork wg = Work(Call("aten::convolution_backward",
                        "[[10,512,7,7],[10,512,7,7],[512,512,3,3],[],[],[],[],[],[],[],[]]", kBwdTypes,
                        R"(["","","","[0]","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1","[False, True, False]"])"));
  EXPECT_DOUBLE_EQ(wg.flops, fwd);
  EXPECT_DOUBLE_EQ(wg.bytes, g + x + w);
  // With a bias: grad bias adds one per grad_output element, reads grad, writes [512].
  OpWork bias = Work(Call("aten::convolution_backward",
                          "[[10,512,7,7],[10,512,7,7],[512,512,3,3],[],[],[],[],[],[],[],[]]", kBwdTypes,
                          R"(["","","","[512]","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1","[True, True, True]"])"));
  EXPECT_DOUBLE_EQ(bias.flops, 2 * fwd + 10.0 * 512 * 49);
  EXPECT_DOUBLE_EQ(bias.bytes, 2 * (g + x + w) + g + kBf16 * 512);
  // A grad_output that is not the forward's output shape is an error.
  EXPECT_EQ(DeriveOpWork(Call("aten::convolution_backward",
                              "[[10,512,8,8],[10,512,7,7],[512,512,3,3],[],[],[],[],[],[],[],[]]", kBwdTypes,
                              R"(["","","","[0]","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1","[True, True, False]"])"))
                .outcome,
            Outcome::kInvalid);
}

TEST(NormRules, BatchNormForwardTrainingAndEval) {
  // native_batch_norm(x [10,64,112,112], weight, bias, running_mean, running_var [64],
  // training, momentum, eps)
  const char* dims = "[[10,64,112,112],[64],[64],[64],[64],[],[],[]]";
  const char* types = R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar","Scalar"])";
  const double x = kBf16 * 10 * 64 * 112 * 112, per_channel = kBf16 * 64;
  OpWork train = Work(Call("aten::native_batch_norm", dims, types, R"(["","","","","","True","0.1","1e-05"])"));
  // x read, y written; weight, bias, running mean and var read; FP32 mean and invstd
  // written; running mean and var written back.
  EXPECT_DOUBLE_EQ(train.bytes, 2 * x + 4 * per_channel + 2 * 64 * 4.0 + 2 * per_channel);
  EXPECT_EQ(train.flops, 0);
  EXPECT_EQ(train.kind, "memory");
  OpWork eval = Work(Call("aten::native_batch_norm", dims, types, R"(["","","","","","False","0.1","1e-05"])"));
  EXPECT_DOUBLE_EQ(eval.bytes, 2 * x + 4 * per_channel);
}

TEST(NormRules, BatchNormBackward) {
  // native_batch_norm_backward(grad, x [10,512,7,7], weight, running_mean, running_var,
  // save_mean, save_invstd (FP32), train, eps, output_mask)
  OpWork b = Work(Call("aten::native_batch_norm_backward",
                       "[[10,512,7,7],[10,512,7,7],[512],[512],[512],[512],[512],[],[],[]]",
                       R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","float","float","Scalar","Scalar","ScalarList"])",
                       R"(["","","","","","","","True","1e-05","[True, True, True]"])"));
  const double x = kBf16 * 10 * 512 * 49;
  // reads grad, x, three BF16 and two FP32 per-channel tensors; writes grad input, grad
  // weight and grad bias.
  EXPECT_DOUBLE_EQ(b.bytes, (2 * x + 3 * kBf16 * 512 + 2 * 4.0 * 512) + (x + 2 * kBf16 * 512));
}

TEST(NormRules, GroupNormForwardAndBackward) {
  // native_group_norm(x [2,320,64,64], weight, bias, N, C, HxW, group=32, eps)
  OpWork f = Work(Call("aten::native_group_norm", "[[2,320,64,64],[320],[320],[],[],[],[],[]]",
                       R"(["c10::Half","c10::Half","c10::Half","Scalar","Scalar","Scalar","Scalar","Scalar"])",
                       R"(["","","","2","320","4096","32","1e-05"])"));
  const double x = 2.0 * 2 * 320 * 64 * 64;
  EXPECT_DOUBLE_EQ(f.bytes, 2 * x + 2 * 2.0 * 320 + 2 * (2 * 32) * 4.0);  // mean, rstd per (n, g)
  // The group count not recorded: no work, with the reason.
  OpWorkResult blank = DeriveOpWork(Call("aten::native_group_norm", "[[2,320,64,64],[320],[320],[],[],[],[],[]]",
                                         R"(["c10::Half","c10::Half","c10::Half","Scalar","Scalar","Scalar","Scalar","Scalar"])",
                                         R"(["","","","","","","",""])"));
  EXPECT_EQ(blank.outcome, Outcome::kInvalid);
  // native_group_norm_backward(grad, x, mean [2,32], rstd [2,32], weight, N, C, HxW, group, mask)
  OpWork b = Work(Call("aten::native_group_norm_backward",
                       "[[2,320,64,64],[2,320,64,64],[2,32],[2,32],[320],[],[],[],[],[]]",
                       R"(["c10::Half","c10::Half","float","float","c10::Half","Scalar","Scalar","Scalar","Scalar","ScalarList"])",
                       R"(["","","","","","2","320","4096","32","[True, True, True]"])"));
  EXPECT_DOUBLE_EQ(b.bytes, (2 * x + 2 * 64 * 4.0 + 2.0 * 320) + (x + 2 * 2.0 * 320));
}

TEST(NormRules, LayerAndRmsNorm) {
  // native_layer_norm(x [4,197,768], [768], weight, bias, eps): 788 rows, mean and rstd each.
  OpWork ln = Work(Call("aten::native_layer_norm", "[[4,197,768],[],[768],[768],[]]",
                        R"(["c10::BFloat16","ScalarList","c10::BFloat16","c10::BFloat16","Scalar"])",
                        R"(["","[768]","","","1e-05"])"));
  const double x = kBf16 * 4 * 197 * 768;
  EXPECT_DOUBLE_EQ(ln.bytes, 2 * x + 2 * kBf16 * 768 + 2 * 788 * 4.0);
  // native_layer_norm_backward(grad, x, [768], mean, rstd [4,197,1], weight, bias, mask)
  OpWork lb = Work(Call("aten::native_layer_norm_backward",
                        "[[4,197,768],[4,197,768],[],[4,197,1],[4,197,1],[768],[768],[]]",
                        R"(["c10::BFloat16","c10::BFloat16","ScalarList","float","float","c10::BFloat16","c10::BFloat16","ScalarList"])",
                        R"(["","","[768]","","","","","[True, True, True]"])"));
  EXPECT_DOUBLE_EQ(lb.bytes, (2 * x + 2 * 788 * 4.0 + 2 * kBf16 * 768) + (x + 2 * kBf16 * 768));
  // _fused_rms_norm(x [16,559,1024], [1024], weight, eps) -> (y, rstd): one statistic per row.
  OpWork rms = Work(Call("aten::_fused_rms_norm", "[[16,559,1024],[],[1024],[]]",
                         R"(["c10::BFloat16","ScalarList","c10::BFloat16","Scalar"])", R"(["","[1024]","",""])"));
  const double r = kBf16 * 16 * 559 * 1024;
  EXPECT_DOUBLE_EQ(rms.bytes, 2 * r + kBf16 * 1024 + 16 * 559 * 4.0);
  // _fused_rms_norm_backward(grad, x, [1024], rstd, weight, mask [True, True])
  OpWork rb = Work(Call("aten::_fused_rms_norm_backward", "[[16,559,1024],[16,559,1024],[],[16,559,1],[1024],[]]",
                        R"(["c10::BFloat16","c10::BFloat16","ScalarList","float","c10::BFloat16","ScalarList"])",
                        R"(["","","[1024]","","","[True, True]"])"));
  EXPECT_DOUBLE_EQ(rb.bytes, (2 * r + 16 * 559 * 4.0 + kBf16 * 1024) + (r + kBf16 * 1024));
  // Only grad input asked for.
  OpWork ri = Work(Call("aten::_fused_rms_norm_backward", "[[16,559,1024],[16,559,1024],[],[16,559,1],[1024],[]]",
                        R"(["c10::BFloat16","c10::BFloat16","ScalarList","float","c10::BFloat16","ScalarList"])",
                        R"(["","","[1024]","","","[True, False]"])"));
  EXPECT_DOUBLE_EQ(ri.bytes, (2 * r + 16 * 559 * 4.0 + kBf16 * 1024) + r);
}

}  // namespace
}  // namespace qprof::work
