// The evidence ladder: measured > SASS > registry > name rule > unknown.
#include "analysis/classify/classify.h"

#include "analysis/names/kernel_name.h"
#include "gtest/gtest.h"

namespace qprof::classify {
namespace {

proto::Activity Kernel(const std::string& name) {
  proto::Activity a;
  a.set_kind(proto::ACTIVITY_KIND_KERNEL);
  a.set_name(name);
  a.set_start_ns(100);
  a.set_end_ns(200);
  return a;
}

proto::Attribution Attribute(const Classifier& c, const proto::Activity& a) {
  return c.Classify(a, names::NormaliseKernelName(a.name()));
}

SassVerdict Sass(const std::string& mangled, const std::string& cls) {
  SassVerdict s;
  s.name = mangled;
  s.demangled = names::NormaliseKernelName(mangled);
  s.pipe_class = cls;
  s.detail = cls == "tensor" ? "HMMA 8, FP32 100" : "FP32 100";
  return s;
}

TEST(Classify, NameRuleWhenNothingElse) {
  Classifier c({});
  auto r = Attribute(c, Kernel("nvjet_tst_128x64_64x4_1x1_v_bz_TNT"));
  EXPECT_EQ(r.pipe_class(), "tensor");
  EXPECT_EQ(r.evidence(), "name_rule");
  EXPECT_NE(r.evidence_detail().find("nvjet"), std::string::npos);
}

TEST(Classify, UnknownStaysUnknown) {
  Classifier c({});
  auto r = Attribute(c, Kernel("Kernel2"));
  EXPECT_EQ(r.pipe_class(), "other");
  EXPECT_EQ(r.role(), "other");
  EXPECT_EQ(r.evidence(), "unknown");
}

TEST(Classify, RegistryBeatsNameRule) {
  ClassifyOptions o;
  o.known_kernels.push_back({"qprof::moe::slot_gemv", "moe.slot_gemv.mxfp4", "moe.experts", "simt",
                             "mxfp4", "simt_fp32"});
  Classifier c(o);
  // The name says "gemv" only; the registry knows it.
  auto r = Attribute(c, Kernel("void qprof::moe::slot_gemv_kernel<4>(float const*)"));
  EXPECT_EQ(r.evidence(), "registry");
  EXPECT_EQ(r.role(), "moe.experts");
  EXPECT_EQ(r.format(), "mxfp4");
  EXPECT_EQ(r.pipe_class(), "simt");
  // A collector-attributed record keeps its attribution.
  proto::Activity a = Kernel("nvjet_tst_x");
  a.mutable_attribution()->set_evidence("registry");
  a.mutable_attribution()->set_pipe_class("simt");
  a.mutable_attribution()->set_role("moe.experts");
  EXPECT_EQ(Attribute(c, a).pipe_class(), "simt");
  EXPECT_EQ(Attribute(c, a).evidence(), "registry");
}

TEST(Classify, SassBeatsRegistryAndMatchesMangledOrDemangled) {
  ClassifyOptions o;
  o.known_kernels.push_back({"qprof::moe::w4a16", "moe.w4a16_mma.nvfp4", "moe.experts", "simt", "nvfp4", ""});
  o.sass.push_back(Sass("_ZN5qprof3moe5w4a16ILi4EEEvPKf", "tensor"));
  o.sass.push_back(Sass("_Z7Kernel2v", "simt"));
  Classifier c(o);
  auto r = Attribute(c, Kernel("void qprof::moe::w4a16<4>(float const*)"));
  EXPECT_EQ(r.pipe_class(), "tensor");
  EXPECT_EQ(r.evidence(), "sass");
  EXPECT_EQ(r.role(), "moe.experts");  // role still from the registry
  proto::Activity k2 = Kernel("Kernel2");
  k2.set_mangled_name("_Z7Kernel2v");
  EXPECT_EQ(Attribute(c, k2).evidence(), "sass");
  EXPECT_EQ(Attribute(c, k2).pipe_class(), "simt");
}

TEST(Classify, SassDoesNotTurnCommIntoSimt) {
  ClassifyOptions o;
  o.sass.push_back(Sass("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "simt"));
  Classifier c(o);
  auto r = Attribute(c, Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  EXPECT_EQ(r.pipe_class(), "comm");
  EXPECT_EQ(r.evidence(), "sass");
}

TEST(Classify, MeasuredBeatsEverythingWithThreshold) {
  ClassifyOptions o;
  o.sass.push_back(Sass("flash_fwd_kernel", "tensor"));
  Classifier c(o);
  proto::Activity a = Kernel("flash_fwd_kernel");
  a.mutable_metrics()->set_tensor_pipe_pct(0.5);
  EXPECT_EQ(Attribute(c, a).pipe_class(), "simt");
  EXPECT_EQ(Attribute(c, a).evidence(), "measured");
  a.mutable_metrics()->set_tensor_pipe_pct(1.0);  // at the threshold: tensor
  EXPECT_EQ(Attribute(c, a).pipe_class(), "tensor");
  proto::Activity s = Kernel("ampere_sgemm_128x64_nn");
  s.mutable_metrics()->set_tensor_pipe_pct(37.0);
  EXPECT_EQ(Attribute(c, s).pipe_class(), "tensor");  // the measurement wins over the name
  proto::Activity n = Kernel("ncclKernel_AllReduce_RING_LL_Sum_float");
  n.mutable_metrics()->set_tensor_pipe_pct(0.0);
  EXPECT_EQ(Attribute(c, n).pipe_class(), "comm");  // not tensor, still communication
}

TEST(Classify, CopiesAreMemory) {
  Classifier c({});
  proto::Activity a;
  a.set_kind(proto::ACTIVITY_KIND_MEMCPY);
  a.set_name("Memcpy HtoD");
  EXPECT_EQ(c.Classify(a, "Memcpy HtoD").pipe_class(), "memory");
}

}  // namespace
}  // namespace qprof::classify
