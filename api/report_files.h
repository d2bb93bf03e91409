// The reports of one operation, written together: each file is rendered and staged first,
// then all are renamed into place at once, so when one cannot be written none is (a user
// never finds a fresh JSON beside a stale HTML). At most one report may go to standard
// output ("-"); it is handed back to the caller to print after the files are in place.
#ifndef QPROF_API_REPORT_FILES_H_
#define QPROF_API_REPORT_FILES_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/file_util.h"
#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::api {

struct WrittenFile {
  std::string path;
  std::string note;  // e.g. "(open it in ui.perfetto.dev)"
};

class ReportFiles {
 public:
  // Stages `data` for `path` ("-" = standard output, at most one). Renders nothing.
  absl::Status Add(const std::string& path, std::string data, std::string note = "");
  // Renames every staged file into place; returns them in the order added.
  absl::StatusOr<std::vector<WrittenFile>> Commit();
  bool has_stdout() const { return to_stdout_; }
  const std::string& stdout_data() const { return stdout_data_; }

 private:
  AtomicFileSet files_;
  std::vector<WrittenFile> staged_;
  bool to_stdout_ = false;
  std::string stdout_data_;
};

// One output of a command, by the option that names it: {"--html", "out.html"}.
struct NamedOutput {
  std::string option;
  std::string path;  // "" = not asked for; "-" = standard output
};

// Checks a command's outputs before any work is done: each names a file that can be written
// (CheckOutputPath: not a directory, its folder exists), no two name the same file
// ("--json and --html both name out.html"), at most one goes to standard output.
// InvalidArgument / NotFound with one line.
absl::Status CheckOutputs(const std::vector<NamedOutput>& outputs);

// Where a Profile's or a Diff's reports go ("" = not asked for; "-" = standard output).
struct ReportPaths {
  std::string json;
  std::string html;
};

// Renders the Profile's JSON and HTML reports asked for and stages them.
absl::Status StageProfileReports(const proto::Profile& profile, const ReportPaths& paths,
                                 ReportFiles* files);

// The same for a Diff; the HTML report shows both Profiles' details beside the diff.
absl::Status StageDiffReports(const proto::Diff& diff, const proto::Profile& a,
                              const proto::Profile& b, const ReportPaths& paths,
                              ReportFiles* files);

}  // namespace qprof::api

#endif  // QPROF_API_REPORT_FILES_H_
