// What `qprof analyze`, `qprof merge` and `qprof diff` share: the analysis options from the
// command line and the reports of a finished Profile or Diff.
//
// Output conventions (the same in every subcommand):
// - `--out` always names a folder (run, record, import); a single report file is named by
//   its format: --json, --html, --perfetto, --partial, --qtrace.
// - `--json -` writes the JSON to standard output; the terminal summary is then not
//   printed (stdout stays valid JSON for jq); progress and warnings stay on stderr.
// - `--csv` prints the summary's tables as CSV instead of the summary (like nsys stats
//   --format csv); `--table NAME` picks tables. `--wide` prints names in full; so does any
//   summary written to a pipe or file (stdout not a terminal).
// - Report files are written together: each to a temporary in its folder, renamed at the
//   end, so when one cannot be written none of them is (api/report_files.h).
// The operations themselves are in api/; this file turns options into requests and prints.
#ifndef QPROF_CLI_PROFILE_OUTPUT_H_
#define QPROF_CLI_PROFILE_OUTPUT_H_

#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "api/analyze.h"
#include "api/report_files.h"
#include "proto/diff.pb.h"
#include "proto/profile.pb.h"
#include "reports/terminal/terminal_report.h"

namespace qprof::cli {

// How the terminal tables are printed: --csv, --table, --wide.
struct TableArgs {
  bool csv = false;
  std::vector<std::string> tables;
  bool wide = false;
};

struct ProfileArgs {
  std::string json_out;  // "-": standard output
  std::string html_out;
  std::vector<std::string> sass_files;
  std::string device;
  std::string model;     // --model-shape (the hidden --model still fills it, with a warning)
  std::string label;
  int top = 15;
  uint64_t tokens = 0;  // --tokens: tokens the traces generated (they do not say)
  uint32_t steps = 0;   // --steps: decode steps they hold
  TableArgs tables;
};

// --json, --html, --csv, --table, --wide; `what` names the JSON ("Profile", "Diff").
void AddReportOptions(CLI::App* cmd, ProfileArgs* args, const std::string& what);
// --sass, --device, --model-shape (and the deprecated --model), --top.
void AddAnalysisOptions(CLI::App* cmd, ProfileArgs* args);
// Both of the above, --label, --tokens and --steps.
void AddProfileOptions(CLI::App* cmd, ProfileArgs* args);

// The request these options make (api/analyze.h), with the CLI's progress and notes on
// stderr; the caller adds the inputs.
api::AnalyzeRequest RequestFor(const ProfileArgs& args);

// Prints a note of an operation on stderr ("qprof: <line>").
void PrintNote(const std::string& line);

// --tokens and --steps (with `side` appended to the names: "-a", "-b" in diff).
void AddWorkOptions(CLI::App* cmd, uint64_t* tokens, uint32_t* steps, const std::string& side);

// Terminal options for the summary on stdout: colour on a TTY, names in full with --wide or
// when stdout is not a terminal, --top kernels.
reports::TerminalOptions SummaryOptions(const ProfileArgs& args);

// Renames the staged reports into place, says on stderr what was written, then prints the
// standard-output report if there is one.
absl::Status CommitReports(api::ReportFiles* files);

// Refuses two things on standard output (--csv with --json -).
absl::Status CheckStdout(const ProfileArgs& args);

// Prints the terminal summary (or the --csv tables) unless the JSON goes to stdout, and
// writes the reports asked for, plus `extra` files already staged by the caller (e.g.
// --perfetto), all or none.
absl::Status WriteProfileOutputs(const proto::Profile& profile, const ProfileArgs& args,
                                 api::ReportFiles* extra = nullptr);

}  // namespace qprof::cli

#endif  // QPROF_CLI_PROFILE_OUTPUT_H_
