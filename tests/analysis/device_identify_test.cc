// Devices identified from what a trace says about them: a name that fits, a name shared by
// rows the properties tell apart, no name at all (properties alone), and properties two
// rows share. The property values are the ones the public traces report.
#include "analysis/devices/identify.h"

#include "gtest/gtest.h"

namespace qprof::devices {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

DeviceProperties Props(const char* name, const char* vendor, uint32_t sms, double gib,
                       const char* arch = "") {
  DeviceProperties p;
  p.name = name;
  p.vendor = vendor;
  p.sm_count = sms;
  p.memory_bytes = static_cast<uint64_t>(gib * static_cast<double>(kGiB));
  p.arch = arch;
  return p;
}

// vLLM's MI300X traces: "name": "", 304 CUs, 192 GiB, HIP 9.4 (no gcnArchName).
TEST(IdentifyDevice, UnnamedMi300xByItsProperties) {
  const Identification id = IdentifyDevice(Props("", "AMD", 304, 192.0));
  ASSERT_NE(id.spec, nullptr) << id.note;
  EXPECT_EQ(id.spec->key, "mi300x");
  EXPECT_EQ(id.how, "properties");
  EXPECT_EQ(id.evidence, "304 CUs and 192 GiB");
  EXPECT_EQ(id.note.rfind("Instinct MI300X, identified by 304 CUs and 192 GiB", 0), 0u) << id.note;
}

// The same GPU with its gfx target, and the MI325X (same CUs, 256 GB) told apart by memory.
TEST(IdentifyDevice, MemoryAndArchitectureTellRowsWithOneCuCountApart) {
  EXPECT_EQ(IdentifyDevice(Props("", "AMD", 304, 256.0, "gfx942")).spec->key, "mi325x");
  const Identification id = IdentifyDevice(Props("", "AMD", 304, 191.5, "gfx942"));
  ASSERT_NE(id.spec, nullptr);
  EXPECT_EQ(id.evidence, "304 CUs, 192 GiB and gfx942");
  // An MI210 (104 CUs, 64 GiB, gfx90a), as TraceLens's MI210 trace reports it, unnamed.
  EXPECT_EQ(IdentifyDevice(Props("", "AMD", 104, 64.0, "gfx90a")).spec->key, "mi210");
  // A wrong architecture fits nothing.
  EXPECT_EQ(IdentifyDevice(Props("", "AMD", 304, 192.0, "gfx90a")).spec, nullptr);
}

// An H100 SXM and an H800 SXM share 132 SMs and 80 GB: without a name, neither is chosen.
TEST(IdentifyDevice, AmbiguousPropertiesStayUnidentified) {
  const Identification id = IdentifyDevice(Props("", "NVIDIA", 132, 79.1, "sm_90"));
  EXPECT_EQ(id.spec, nullptr);
  EXPECT_NE(id.note.find("H100 SXM"), std::string::npos) << id.note;
  EXPECT_NE(id.note.find("H800 SXM"), std::string::npos) << id.note;
  // ...and with its name, the name decides.
  EXPECT_EQ(IdentifyDevice(Props("NVIDIA H800", "NVIDIA", 132, 79.1, "sm_90")).spec->key, "h800");
}

// "NVIDIA A100-PG509-200" (the shared A100 traces) names no memory size; its 39.4 GiB picks
// the 40 GB row over the 80 GB one the name matches first.
TEST(IdentifyDevice, NameSharedByTwoRowsDecidedByProperties) {
  const Identification id = IdentifyDevice(Props("NVIDIA A100-PG509-200", "NVIDIA", 108, 39.4, "sm_80"));
  ASSERT_NE(id.spec, nullptr);
  EXPECT_EQ(id.spec->key, "a100-40gb");
  EXPECT_EQ(id.how, "name");
  EXPECT_TRUE(id.note.empty());
  EXPECT_EQ(IdentifyDevice(Props("NVIDIA A100-SXM4-80GB", "NVIDIA", 108, 79.2, "sm_80")).spec->key,
            "a100");
}

// A name the table knows keeps its row when the properties disagree, and says so.
TEST(IdentifyDevice, NameWithContradictingPropertiesIsKeptAndNoted) {
  const Identification id = IdentifyDevice(Props("Tesla V100-SXM2-32GB", "NVIDIA", 80, 31.7, "sm_70"));
  ASSERT_NE(id.spec, nullptr);
  EXPECT_EQ(id.spec->key, "v100");
  EXPECT_NE(id.note.find("reports 80 SMs, 32 GiB and sm_70"), std::string::npos) << id.note;
}

TEST(IdentifyDevice, TooFewPropertiesIdentifyNothing) {
  EXPECT_EQ(IdentifyDevice(Props("", "AMD", 304, 0)).spec, nullptr);
  EXPECT_EQ(IdentifyDevice(Props("unknown", "", 0, 0)).spec, nullptr);
  EXPECT_EQ(IdentifyDevice(Props("", "", 0, 0)).note, "");
}

}  // namespace
}  // namespace qprof::devices
