// The command-line habits of cli/cli_habits.h: typo suggestions and where `qprof record`'s
// own options end and the profiled command begins.
#include "cli/cli_habits.h"

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "gtest/gtest.h"

namespace qprof::cli {
namespace {

const std::vector<std::string> kCommands = {"help", "version", "run",  "record", "import",
                                            "analyze", "diff", "merge", "sass", "devices",
                                            "quantize", "calibrate"};

TEST(CliHabitsTest, EditDistanceCountsTranspositionsAsOne) {
  EXPECT_EQ(EditDistance("analyze", "analyze"), 0);
  EXPECT_EQ(EditDistance("analize", "analyze"), 1);
  EXPECT_EQ(EditDistance("anaylze", "analyze"), 1);  // swapped neighbours
  EXPECT_EQ(EditDistance("", "run"), 3);
  EXPECT_EQ(EditDistance("diff", "dif"), 1);
}

TEST(CliHabitsTest, ClosestSuggestsOnlyPlausibleTypos) {
  EXPECT_EQ(Closest("analize", kCommands), "analyze");
  EXPECT_EQ(Closest("analyse", kCommands), "analyze");  // British spelling
  EXPECT_EQ(Closest("anlyze", kCommands), "analyze");
  EXPECT_EQ(Closest("dif", kCommands), "diff");
  EXPECT_EQ(Closest("recrod", kCommands), "record");
  EXPECT_EQ(Closest("ana", kCommands), "analyze");      // a unique prefix
  EXPECT_EQ(Closest("profile", kCommands), "");         // nothing close: no guess
  EXPECT_EQ(Closest("xyz", kCommands), "");
}

std::vector<std::string> Split(const CLI::App& record, std::vector<std::string> args) {
  return InsertCommandSeparator(record, std::move(args), 2);
}

TEST(CliHabitsTest, RecordCommandStartsAtTheFirstWordThatIsNotAnOption) {
  CLI::App app;
  CLI::App* record = app.add_subcommand("record");
  bool metrics = false;
  std::string out;
  double duration = 0;
  std::vector<std::string> command;
  record->add_flag("--metrics", metrics);
  record->add_option("--out", out);
  record->add_option("--duration", duration);
  record->add_option("command", command)->expected(-1);
  using V = std::vector<std::string>;
  // Options and their values stay qprof's; the command's own options stay the command's.
  EXPECT_EQ(Split(*record, {"qprof", "record", "--out", "d", "--metrics", "python3", "x.py",
                            "--out", "y"}),
            (V{"qprof", "record", "--out", "d", "--metrics", "--", "python3", "x.py", "--out",
               "y"}));
  EXPECT_EQ(Split(*record, {"qprof", "record", "--duration=3", "./app"}),
            (V{"qprof", "record", "--duration=3", "--", "./app"}));
  // An explicit -- is kept as it is.
  EXPECT_EQ(Split(*record, {"qprof", "record", "--out", "d", "--", "./app", "--", "z"}),
            (V{"qprof", "record", "--out", "d", "--", "./app", "--", "z"}));
  // No command: nothing to insert (CLI11 then says the command is required).
  EXPECT_EQ(Split(*record, {"qprof", "record", "--metrics"}), (V{"qprof", "record", "--metrics"}));
  // And CLI11 reads the result as intended.
  V args = Split(*record, {"qprof", "record", "--out", "d", "./app", "--out", "e", "-v"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(out, "d");
  EXPECT_EQ(command, (V{"./app", "--out", "e", "-v"}));
}

// Issue 25: `--metrics` takes an optional value (`--metrics full CMD`); only a word its
// validator accepts is taken for it, so `--metrics python3 x.py` still runs python3.
TEST(CliHabitsTest, AnOptionalValueIsTakenOnlyWhenTheOptionAcceptsIt) {
  CLI::App app;
  CLI::App* record = app.add_subcommand("record");
  std::string set;
  std::vector<std::string> command;
  CLI::Option* metrics = record->add_option("--metrics", set)->expected(0, 1)
                             ->check(CLI::IsMember({"default", "full"}));
  record->add_option("command", command)->expected(-1);
  using V = std::vector<std::string>;
  EXPECT_EQ(Split(*record, {"qprof", "record", "--metrics", "full", "./app", "full"}),
            (V{"qprof", "record", "--metrics", "full", "--", "./app", "full"}));
  EXPECT_EQ(Split(*record, {"qprof", "record", "--metrics", "python3", "x.py"}),
            (V{"qprof", "record", "--metrics", "--", "python3", "x.py"}));
  EXPECT_EQ(Split(*record, {"qprof", "record", "--metrics=full", "./app"}),
            (V{"qprof", "record", "--metrics=full", "--", "./app"}));
  V args = Split(*record, {"qprof", "record", "--metrics", "full", "./app"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(set, "full");
  EXPECT_EQ(metrics->count(), 1u);
  EXPECT_EQ(command, (V{"./app"}));
}

}  // namespace
}  // namespace qprof::cli
