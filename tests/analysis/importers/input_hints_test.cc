// Files of NVIDIA's tools that qprof does not read get the command that exports them.
#include "analysis/importers/input_hints.h"

#include <filesystem>
#include <string>

#include "analysis/importers/import.h"
#include "base/file_util.h"
#include "gtest/gtest.h"

namespace qprof::importers {
namespace {

TEST(InputHints, NsysReportGetsTheExportCommand) {
  EXPECT_EQ(UnreadableInputMessage("/data/run1.nsys-rep"),
            "/data/run1.nsys-rep: an Nsight Systems report, which qprof reads once exported to "
            "SQLite: nsys export --type sqlite --output /data/run1.sqlite /data/run1.nsys-rep");
  // Older reports, odd names: quoted for the shell.
  EXPECT_NE(UnreadableInputMessage("my run.QDREP").find(
                "nsys export --type sqlite --output 'my run.sqlite' 'my run.QDREP'"),
            std::string::npos);
}

TEST(InputHints, NcuReportGetsTheCsvCommand) {
  EXPECT_NE(UnreadableInputMessage("k.ncu-rep")
                .find("ncu --import k.ncu-rep --csv --page raw > k.csv"),
            std::string::npos);
}

TEST(InputHints, OtherFilesListWhatQprofReads) {
  EXPECT_NE(UnreadableInputMessage("x.bin").find("not a trace qprof can read"), std::string::npos);
  EXPECT_NE(UnreadableInputMessage(".nsys-rep").find("not a trace"), std::string::npos);
}

TEST(InputHints, ImportFileSaysIt) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "qprof_hint_test.nsys-rep").string();
  ASSERT_TRUE(WriteFileAtomic(path, std::string("\x00\x01\x02 binary", 10)).ok());
  auto r = ImportFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(r.status().message()).find("nsys export --type sqlite"),
            std::string::npos)
      << r.status();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace qprof::importers
