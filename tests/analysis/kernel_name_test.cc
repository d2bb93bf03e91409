#include "analysis/names/kernel_name.h"

#include "gtest/gtest.h"

namespace qprof::names {
namespace {

TEST(KernelName, NsysAndKinetoSpellingsAgree) {
  // The same PyTorch kernel as Nsight Systems and as Kineto (cxxabi) print it.
  const char* nsys =
      "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, "
      "std::array<char *, (unsigned long)1>>(int, T2, T3)";
  const char* kineto =
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
      "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)";
  EXPECT_EQ(NormaliseKernelName(nsys), NormaliseKernelName(kineto));
  EXPECT_EQ(NormaliseKernelName(nsys),
            "at::native::vectorized_elementwise_kernel<4,at::native::FillFunctor<float>,"
            "std::array<char*,1>>");
}

TEST(KernelName, AnonymousNamespacesLambdasAndVoidInsideTemplates) {
  const char* nsys =
      "void at::native::elementwise_kernel<(int)128, (int)4, void at::native::gpu_kernel_impl_nocast<"
      "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() "
      "const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)";
  const char* kineto =
      "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<"
      "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
      "const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast)";
  // Parameter lists inside template arguments differ (T1 vs the real type); the outer
  // kernel and its template head still agree up to the first nested parameter list.
  std::string a = NormaliseKernelName(nsys), b = NormaliseKernelName(kineto);
  EXPECT_EQ(a.substr(0, 120), b.substr(0, 120));
  EXPECT_EQ(NormaliseKernelName("void at::native::<unnamed>::vectorized_layer_norm_kernel<float, float, (bool)0>(int, T2)"),
            NormaliseKernelName("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>(int, float)"));
}

TEST(KernelName, PlainAndMangledNames) {
  EXPECT_EQ(NormaliseKernelName("saxpy(double *, double *, double *, double, int)"), "saxpy");
  EXPECT_EQ(NormaliseKernelName("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN"),
            "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN");
  EXPECT_EQ(NormaliseKernelName("_ZN2ns4tmplILi4EEEvPf"), "ns::tmpl<4>");
  EXPECT_EQ(NormaliseKernelName("_Z5saxpyfPKfPfi"), "saxpy");
  EXPECT_EQ(NormaliseKernelName("  ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)  "),
            "ncclKernel_AllReduce_RING_LL_Sum_float");
  EXPECT_EQ(NormaliseKernelName(""), "");
}

TEST(KernelName, FoldNvtxPath) {
  EXPECT_EQ(FoldNvtxPath("decode/step 3/layer 12/moe"), "decode/step */layer */moe");
  EXPECT_EQ(FoldNvtxPath("decode/step 10"), "decode/step *");
  EXPECT_EQ(FoldNvtxPath("iter_7/fwd"), "iter_*/fwd");
  EXPECT_EQ(FoldNvtxPath("layer12/moe"), "layer12/moe");  // not a standalone number
  EXPECT_EQ(FoldNvtxPath(""), "");
}

TEST(KernelName, FoldModuleInstances) {
  // torch's profiler numbers each instance of a module class: one layer's RMSNorm is the
  // 31st, another's the 22nd; the class keeps its own digits.
  EXPECT_EQ(FoldModuleInstances("nn.Module: Qwen2RMSNorm_31"), "nn.Module: Qwen2RMSNorm_N");
  EXPECT_EQ(FoldModuleInstances("nn.Module: Qwen2RMSNorm_22"), "nn.Module: Qwen2RMSNorm_N");
  EXPECT_EQ(FoldModuleInstances("nn.Module: Qwen2RMSNorm_31 (python)"),
            "nn.Module: Qwen2RMSNorm_N (python)");
  EXPECT_EQ(FoldModuleInstances("nn.Module: Linear_0"), "nn.Module: Linear_N");
  EXPECT_EQ(FoldModuleInstances("nn.Module: Fp8Linear"), "nn.Module: Fp8Linear");
  EXPECT_EQ(FoldModuleInstances("vllm::moe_forward"), "vllm::moe_forward");
  EXPECT_EQ(FoldModuleInstances("model.py(88): forward"), "model.py(88): forward");
}

}  // namespace
}  // namespace qprof::names
