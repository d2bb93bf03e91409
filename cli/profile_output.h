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
//   end, so when one cannot be written none of them is (ReportFiles).
#ifndef QPROF_CLI_PROFILE_OUTPUT_H_
#define QPROF_CLI_PROFILE_OUTPUT_H_

#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/analyze.h"
#include "cli/analysis_request.h"
#include "base/file_util.h"
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

// The request these options make (cli/analysis_request.h), with the CLI's progress lines;
// the caller adds the inputs.
AnalysisRequest RequestFor(const ProfileArgs& args);

// --tokens and --steps (with `side` appended to the names: "-a", "-b" in diff).
void AddWorkOptions(CLI::App* cmd, uint64_t* tokens, uint32_t* steps, const std::string& side);

// Registry kernels, SASS stats (read and announced on stderr), device, model and label.
absl::StatusOr<AnalyzeOptions> MakeAnalyzeOptions(const ProfileArgs& args);

// Terminal options for the summary on stdout: colour on a TTY, names in full with --wide or
// when stdout is not a terminal, --top kernels.
reports::TerminalOptions SummaryOptions(const ProfileArgs& args);

// The reports of one command, written together. Add() renders nothing: it stages `data`
// for `path` ("-" = standard output, at most one). Commit() renames every staged file into
// place, then writes the standard-output one, and says on stderr what it wrote.
class ReportFiles {
 public:
  absl::Status Add(const std::string& path, std::string data, std::string note = "");
  absl::Status Commit();
  bool has_stdout() const { return to_stdout_; }

 private:
  AtomicFileSet files_;
  std::vector<std::pair<std::string, std::string>> written_;  // path, note
  bool to_stdout_ = false;
  std::string stdout_data_;
};

// Refuses two things on standard output (--csv with --json -).
absl::Status CheckStdout(const ProfileArgs& args);

// Prints the terminal summary (or the --csv tables) unless the JSON goes to stdout, and
// writes the reports asked for, plus `extra` files already staged by the caller (e.g.
// --perfetto), all or none.
absl::Status WriteProfileOutputs(const proto::Profile& profile, const ProfileArgs& args,
                                 ReportFiles* extra = nullptr);

}  // namespace qprof::cli

#endif  // QPROF_CLI_PROFILE_OUTPUT_H_
