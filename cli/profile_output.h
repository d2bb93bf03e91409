// What `qprof analyze` and `qprof merge` share: the analysis options from the command line
// and the reports of a finished Profile (terminal summary, --json, --html).
#ifndef QPROF_CLI_PROFILE_OUTPUT_H_
#define QPROF_CLI_PROFILE_OUTPUT_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/analyze.h"
#include "cli/analysis_request.h"
#include "proto/profile.pb.h"

namespace qprof::cli {

struct ProfileArgs {
  std::string json_out;
  std::string html_out;
  std::vector<std::string> sass_files;
  std::string device;
  std::string model;
  std::string label;
  int top = 15;
  uint64_t tokens = 0;  // --tokens: tokens the traces generated (they do not say)
  uint32_t steps = 0;   // --steps: decode steps they hold
};

// Adds --json, --html, --sass, --device, --model, --top, --label, --tokens and --steps.
void AddProfileOptions(CLI::App* cmd, ProfileArgs* args);

// The request these options make (cli/analysis_request.h), with the CLI's progress lines;
// the caller adds the inputs.
AnalysisRequest RequestFor(const ProfileArgs& args);

// --tokens and --steps (with `side` appended to the names: "-a", "-b" in diff).
void AddWorkOptions(CLI::App* cmd, uint64_t* tokens, uint32_t* steps, const std::string& side);

// Registry kernels, SASS stats (read and announced on stderr), device, model and label.
absl::StatusOr<AnalyzeOptions> MakeAnalyzeOptions(const ProfileArgs& args);

// Prints the terminal summary and writes the reports asked for.
absl::Status WriteProfileOutputs(const proto::Profile& profile, const ProfileArgs& args);

}  // namespace qprof::cli

#endif  // QPROF_CLI_PROFILE_OUTPUT_H_
