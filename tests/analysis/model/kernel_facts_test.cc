// The generated kernel facts (analysis/model/kernel_facts_data.cc) against the current CUDA
// build: registers and static shared memory from the build's ptxas report and the
// innermost-FMA-loop counts from the SASS of the kernel libraries. Fails when a kernel
// changed without `python3 scripts/update_kernel_facts.py build`. Built only with CUDA;
// skips when cuobjdump is missing.
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "analysis/model/kernel_facts.h"
#include "analysis/sass/sass_parser.h"
#include "gtest/gtest.h"

namespace qprof::model {
namespace {

TEST(KernelFacts, MatchTheBuild) {
  if (!sass::FindCuobjdump().ok()) GTEST_SKIP() << "cuobjdump not available";
  std::map<std::pair<std::string, std::string>, sass::SassKernelStats> sass_by;
  for (const char* lib : {QPROF_MOE_CUDA_LIB, QPROF_MLA_CUDA_LIB, QPROF_COMMON_CUDA_LIB}) {
    auto stats = sass::SassStatsForFile(lib);
    ASSERT_TRUE(stats.ok()) << lib << ": " << stats.status();
    for (const auto& k : *stats) sass_by[{k.name, k.arch}] = k;
  }
  int checked = 0;
  for (const KernelFacts& f : AllKernelFacts()) {
    SCOPED_TRACE(std::string(f.kernel) + " " + f.arch);
    std::ifstream in(std::string(QPROF_BINARY_DIR) + "/artifacts/ptxas-" + f.arch + ".txt");
    if (!in) continue;  // that architecture is not in this build
    std::string line;
    bool found = false;
    while (std::getline(in, line)) {
      std::istringstream row(line);
      std::string name;
      int regs = -1, smem = -1;
      if (!(row >> name >> regs >> smem) || name != f.kernel) continue;
      found = true;
      EXPECT_EQ(regs, f.registers);
      EXPECT_EQ(smem, f.static_shared_bytes);
    }
    EXPECT_TRUE(found) << "not in the ptxas report: regenerate the facts";
    auto it = sass_by.find({f.kernel, f.arch});
    ASSERT_NE(it, sass_by.end());
    EXPECT_EQ(static_cast<int>(it->second.fma_loop_instructions), f.fma_loop_instructions);
    EXPECT_EQ(static_cast<int>(it->second.fma_loop_ffma), f.fma_loop_ffma);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(KernelFacts, LookupIgnoresTheArchSuffix) {
  const KernelFacts* f = FindKernelFacts("qprof_moe_slot_gemv_mxfp4_w13", "sm_120");
  ASSERT_NE(f, nullptr);
  EXPECT_GT(IssueSlotsPerFma(*f), 1.0);
  EXPECT_EQ(FindKernelFacts("no_such_kernel", "sm_120"), nullptr);
}

}  // namespace
}  // namespace qprof::model
