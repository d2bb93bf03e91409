// `qprof merge A.qprofile B.qprofile ... [--json OUT] [--html OUT] [--partial OUT] ...`:
// combines partial profiles written by `qprof analyze --partial` (on other machines, say)
// in the order given, then finishes the analysis as `qprof analyze` would on all their
// traces at once: the same Profile.
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "api/merge.h"
#include "api/report_files.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/profile_output.h"
#include "fmt/core.h"

namespace qprof::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> inputs;
  ProfileArgs out;
  std::string partial_out;
};

absl::Status RunMerge(const MergeArgs& args) {
  RETURN_IF_ERROR(CheckStdout(args.out));
  RETURN_IF_ERROR(api::CheckOutputs({{"--json", args.out.json_out},
                                     {"--html", args.out.html_out},
                                     {"--partial", args.partial_out}}));
  api::MergeRequest request;
  request.paths = args.inputs;
  request.analysis = RequestFor(args.out);
  if (!args.partial_out.empty()) {
    ASSIGN_OR_RETURN(api::PartialResult partial, api::MergeToPartial(request));
    RETURN_IF_ERROR(WriteFileAtomic(args.partial_out, partial.bytes));
    fmt::print(stderr, "qprof: wrote {} ({})\n", args.partial_out, partial.summary);
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(proto::Profile profile, api::Merge(request));
  return WriteProfileOutputs(profile, args.out);
}

}  // namespace

void RegisterMergeCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Combine partial profiles (`qprof analyze --partial OUT.qprofile`, e.g. one per machine "
      "or rank) and finish the analysis: the same Profile as analysing all their traces at "
      "once. Counts, sums, min/max and per-trace busy time merge exactly; median/p90 past "
      "16384 launches of a kernel come from a sketch with 0.5% relative error");
  cmd->add_option("inputs", args->inputs, "Partial profiles (.qprofile), merged in this order")
      ->required()
      ->check(CLI::ExistingFile);
  AddProfileOptions(cmd, &args->out);
  cmd->add_option("--partial", args->partial_out,
                  "Write the merged state as one partial profile instead of reports");
  cmd->callback([args, &runner] { runner.action = [args] { return RunMerge(*args); }; });
}

}  // namespace qprof::cli
