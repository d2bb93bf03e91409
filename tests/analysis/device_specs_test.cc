#include "analysis/devices/device_specs.h"

#include "gtest/gtest.h"

namespace qprof::devices {
namespace {

TEST(DeviceSpecs, EveryNumberHasASource) {
  ASSERT_EQ(AllDevices().size(), 7u);
  for (const DeviceSpec& d : AllDevices()) {
    for (const Figure* f : {&d.sm_count, &d.memory_gb, &d.memory_bandwidth_gbps,
                            &d.fp32_simt_tflops, &d.bf16_tensor_tflops, &d.fp8_tensor_tflops,
                            &d.fp4_tensor_tflops, &d.interconnect_gbps,
                            &d.launch_overhead_us, &d.boost_clock_mhz,
                            &d.memory_latency_ns}) {
      EXPECT_FALSE(f->source.empty()) << d.name;
    }
    if (d.measured_copy_gbps.value > 0) {
      EXPECT_FALSE(d.measured_copy_gbps.source.empty());
    }
    EXPECT_GT(d.memory_bandwidth_gbps.value, 500) << d.name;
    EXPECT_GT(d.boost_clock_mhz.value, 1000) << d.name;
    EXPECT_GT(d.memory_latency_ns.value, 100) << d.name;
    EXPECT_GT(d.bf16_tensor_tflops.value, d.fp32_simt_tflops.value) << d.name;
  }
}

// Sources are printed by `qprof devices --sources` and in every ceiling row: they name a
// document or measurement a user can find, never the team's working notes.
TEST(DeviceSpecs, SourcesCitePublicDocumentsNotWorkingNotes) {
  for (const DeviceSpec& d : AllDevices()) {
    for (const Figure* f : {&d.sm_count, &d.memory_gb, &d.memory_bandwidth_gbps,
                            &d.measured_copy_gbps, &d.fp32_simt_tflops, &d.bf16_tensor_tflops,
                            &d.fp8_tensor_tflops, &d.fp4_tensor_tflops, &d.interconnect_gbps,
                            &d.launch_overhead_us}) {
      for (const char* note : {"FACTS", "lead", "re-check", "verify", "TODO"}) {
        EXPECT_EQ(f->source.find(note), std::string::npos) << d.name << ": " << f->source;
      }
    }
  }
}

TEST(DeviceSpecs, LookupByAliasAndReportedName) {
  struct Case { const char* name; const char* key; };
  for (const Case& c : {Case{"h200", "h200"}, Case{"NVIDIA H200", "h200"},
                        Case{"NVIDIA H100 80GB HBM3", "h100"}, Case{"H100", "h100"},
                        Case{"rtx-pro-6000", "rtx-pro-6000"},
                        Case{"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"},
                        Case{"NVIDIA GeForce RTX 5090", "rtx-5090"}, Case{"NVIDIA L40S", "l40s"},
                        Case{"NVIDIA A100-SXM4-80GB", "a100"}, Case{"NVIDIA B200", "b200"}}) {
    const DeviceSpec* d = FindDevice(c.name);
    ASSERT_NE(d, nullptr) << c.name;
    EXPECT_EQ(d->key, c.key) << c.name;
  }
}

TEST(DeviceSpecs, DifferentSkusDoNotMatch) {
  EXPECT_EQ(FindDevice("NVIDIA H100 PCIe"), nullptr);
  EXPECT_EQ(FindDevice("NVIDIA L40"), nullptr);
  EXPECT_EQ(FindDevice("Tesla V100-SXM2-16GB"), nullptr);
  EXPECT_EQ(FindDevice(""), nullptr);
}

TEST(DeviceSpecs, MeasuredBandwidthOverridesDatasheet) {
  const DeviceSpec* h200 = FindDevice("h200");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(h200->EffectiveBandwidthGbps(), 4300);
  const DeviceSpec* h100 = FindDevice("h100");
  EXPECT_DOUBLE_EQ(h100->EffectiveBandwidthGbps(), 3350);
  EXPECT_DOUBLE_EQ(h100->PipeTflops("tensor_fp4"), 0);
  EXPECT_DOUBLE_EQ(FindDevice("b200")->PipeTflops("tensor_fp4"), 9000);
}

}  // namespace
}  // namespace qprof::devices
