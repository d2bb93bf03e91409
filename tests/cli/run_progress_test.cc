// The progress bar of `qprof run` (cli/run_progress.h).
#include "cli/run_progress.h"

#include <string>

#include "gtest/gtest.h"

namespace qprof::cli {
namespace {

TEST(RunProgressTest, ProgressLineFillsWithTheSteps) {
  EXPECT_EQ(RunProgressLine("mxfp4", 0, 2, 0, 8, 40),
            "[1/2 mxfp4] [" + std::string(17, '.') + "] step 0/8");
  EXPECT_EQ(RunProgressLine("nvfp4", 1, 2, 8, 8, 40),
            "[2/2 nvfp4] [" + std::string(17, '#') + "] step 8/8");
  EXPECT_EQ(RunProgressLine("nvfp4", 1, 2, 4, 8, 40).size(), 40u);
}

}  // namespace
}  // namespace qprof::cli
