#include "analysis/devices/device_specs.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "analysis/devices/device_table.h"
#include "gtest/gtest.h"

namespace qprof::devices {
namespace {

std::vector<const Figure*> AllFigures(const DeviceSpec& d) {
  return {&d.sm_count,           &d.warp_size,          &d.memory_gb,
          &d.memory_bandwidth_gbps, &d.fp32_simt_tflops, &d.tf32_tensor_tflops,
          &d.bf16_tensor_tflops, &d.fp16_tensor_tflops, &d.fp8_tensor_tflops,
          &d.fp6_tensor_tflops,  &d.fp4_tensor_tflops,  &d.interconnect_gbps,
          &d.host_link_gbps,     &d.launch_overhead_us, &d.boost_clock_mhz,
          &d.memory_latency_ns};
}

TEST(DeviceSpecs, EmbeddedTableParsesAndListsEveryFileOfTheFolder) {
  ASSERT_TRUE(ParseDeviceTable(DeviceSpecFiles()).ok())
      << ParseDeviceTable(DeviceSpecFiles()).status();
  // A file added to analysis/devices/specs but not listed in its CMakeLists would be
  // silently missing from the binary.
  std::set<std::string> embedded, on_disk;
  for (const EmbeddedText& f : DeviceSpecFiles()) embedded.emplace(f.name);
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(QPROF_SOURCE_DIR) / "analysis/devices/specs")) {
    on_disk.insert(e.path().filename().string());
  }
  EXPECT_EQ(embedded, on_disk);
  EXPECT_EQ(AllDevices().size(), DeviceSpecFiles().size() - 1);  // common.json is no device
}

TEST(DeviceSpecs, EveryNumberHasASource) {
  // The devices issue 22 names (A100, H100 SXM and PCIe, H200, B200, GB200, RTX PRO 6000,
  // RTX 5090, L40S), the AMD GPUs of issue 23 (MI300X, MI325X, MI355X) and of issue 34
  // (MI210, MI250X), and the NVIDIA parts the public traces ran on (H800, A100 40GB, V100,
  // RTX 3080).
  for (const char* key : {"a100", "h100", "h100-pcie", "h200", "b200", "gb200", "rtx-pro-6000",
                          "rtx-5090", "l40s", "mi300x", "mi325x", "mi355x", "mi210", "mi250x",
                          "h800", "a100-40gb", "v100", "rtx-3080"}) {
    EXPECT_NE(FindDevice(key), nullptr) << key;
  }
  for (const DeviceSpec& d : AllDevices()) {
    for (const Figure* f : AllFigures(d)) EXPECT_FALSE(f->source.empty()) << d.name;
    if (d.measured_copy_gbps.value > 0) {
      EXPECT_FALSE(d.measured_copy_gbps.source.empty());
    }
    EXPECT_GT(d.memory_bandwidth_gbps.value, 500) << d.name;
    EXPECT_GT(d.boost_clock_mhz.value, 1000) << d.name;
    EXPECT_GT(d.memory_latency_ns.value, 100) << d.name;
    // Volta's tensor cores take FP16 only: the 16-bit tensor rate is the larger of the two.
    EXPECT_GT(std::max(d.bf16_tensor_tflops.value, d.fp16_tensor_tflops.value),
              d.fp32_simt_tflops.value)
        << d.name;
    // Each lower precision runs at least as fast as the one above it, where it exists.
    double prev = d.bf16_tensor_tflops.value;
    for (const Figure* f : {&d.fp8_tensor_tflops, &d.fp6_tensor_tflops, &d.fp4_tensor_tflops}) {
      if (f->value == 0) continue;
      EXPECT_GE(f->value, prev) << d.name;
      prev = f->value;
    }
    EXPECT_EQ(d.warp_size.value, d.IsNvidia() ? 32 : 64) << d.name;
  }
}

// Sources are printed by `qprof devices --sources` and in every ceiling row: they name a
// document or measurement a user can find, never the team's working notes.
TEST(DeviceSpecs, SourcesCitePublicDocumentsNotWorkingNotes) {
  for (const DeviceSpec& d : AllDevices()) {
    std::vector<const Figure*> figures = AllFigures(d);
    figures.push_back(&d.measured_copy_gbps);
    for (const Figure* f : figures) {
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
                        Case{"NVIDIA H100 PCIe", "h100-pcie"},
                        Case{"rtx-pro-6000", "rtx-pro-6000"},
                        Case{"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"},
                        Case{"NVIDIA GeForce RTX 5090", "rtx-5090"}, Case{"NVIDIA L40S", "l40s"},
                        Case{"NVIDIA A100-SXM4-80GB", "a100"}, Case{"NVIDIA B200", "b200"},
                        Case{"NVIDIA GB200", "gb200"}, Case{"AMD Instinct MI300X", "mi300x"},
                        Case{"AMD Instinct MI325X", "mi325x"},
                        Case{"AMD Instinct MI355X", "mi355x"},
                        Case{"AMD Instinct MI210", "mi210"}, Case{"AMD Instinct MI250X", "mi250x"},
                        Case{"NVIDIA H800", "h800"}, Case{"NVIDIA A100-SXM4-40GB", "a100-40gb"},
                        Case{"Tesla V100-SXM2-16GB", "v100"},
                        Case{"NVIDIA GeForce RTX 3080", "rtx-3080"}}) {
    const DeviceSpec* d = FindDevice(c.name);
    ASSERT_NE(d, nullptr) << c.name;
    EXPECT_EQ(d->key, c.key) << c.name;
  }
}

TEST(DeviceSpecs, DifferentSkusDoNotMatch) {
  EXPECT_EQ(FindDevice("NVIDIA H100 NVL"), nullptr);
  EXPECT_EQ(FindDevice("NVIDIA L40"), nullptr);
  EXPECT_EQ(FindDevice("NVIDIA A100-PCIE-40GB"), nullptr);
  EXPECT_EQ(FindDevice("Tesla V100-PCIE-32GB"), nullptr);
  EXPECT_EQ(FindDevice("AMD Instinct MI250"), nullptr);
  EXPECT_EQ(FindDevice("NVIDIA H800 PCIe"), nullptr);
  EXPECT_EQ(FindDevice("NVIDIA GeForce RTX 3080 Ti"), nullptr);
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
  EXPECT_DOUBLE_EQ(FindDevice("mi355x")->PipeTflops("tensor_fp6"), 10066.4);
  EXPECT_EQ(h100->PipeFigure("tensor_tf32").source, h100->tf32_tensor_tflops.source);
  EXPECT_TRUE(h100->PipeFigure("no_such_pipe").source.empty());
}

// The table's reader refuses what would silently lose a figure.
TEST(DeviceTable, RefusesBrokenFiles) {
  const std::string common = R"({"sources": {"s": "a source"}})";
  const std::string good = R"({"key": "x", "name": "X", "vendor": "NVIDIA", "arch": "sm_90",
    "aliases": [], "match": {"contains": "x", "excludes": []},
    "sm_count": [1, "s"], "memory_gb": [1, "s"], "memory_bandwidth_gbps": [1, "s"],
    "fp32_simt_tflops": [1, "s"], "tf32_tensor_tflops": [1, "s"], "bf16_tensor_tflops": [1, "s"],
    "fp16_tensor_tflops": [1, "s"], "fp8_tensor_tflops": [0, "s"], "fp6_tensor_tflops": [0, "s"],
    "fp4_tensor_tflops": [0, "s"], "interconnect": "PCIe", "interconnect_gbps": [1, "s"],
    "host_link": "PCIe", "host_link_gbps": [1, "s"], "launch_overhead_us": [3, "s"],
    "boost_clock_mhz": [2000, "s"], "memory_latency_cycles": [500, "s"]})";
  auto parse = [&](const std::string& device) {
    return ParseDeviceTable({{"common.json", common}, {"x.json", device}});
  };
  auto ok = parse(good);
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_DOUBLE_EQ((*ok)[0].memory_latency_ns.value, 250);  // 500 cycles at 2 GHz
  EXPECT_EQ((*ok)[0].warp_size.value, 32);
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  for (const auto& [broken, why] : std::vector<std::pair<std::string, std::string>>{
           {replace("\"memory_gb\"", "\"memory_gib\""), "unknown field 'memory_gib'"},
           {replace("\"sm_count\": [1, \"s\"], ", ""), "'sm_count' is missing"},
           {replace("[1, \"s\"], \"memory_gb\"", "[1, \"nope\"], \"memory_gb\""),
            "unknown source 'nope'"},
           {replace("\"NVIDIA\"", "\"Intel\""), "vendor"},
           {replace("[2000, \"s\"]", "[0, \"s\"]"), "boost_clock_mhz"},
           {replace("[1, \"s\"], \"memory_gb\"", "[-1, \"s\"], \"memory_gb\""), "negative"},
           {"{", "not a JSON object"}}) {
    auto r = parse(broken);
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find("x.json"), std::string::npos) << r.status();
  }
  auto twice = ParseDeviceTable({{"common.json", common}, {"x.json", good}, {"y.json", good}});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("twice"), std::string::npos);
}

}  // namespace
}  // namespace qprof::devices
