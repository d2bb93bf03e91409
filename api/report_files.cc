#include "api/report_files.h"

#include "base/status_macros.h"
#include "reports/html/html_report.h"
#include "reports/json/json_report.h"

namespace qprof::api {

absl::Status ReportFiles::Add(const std::string& path, std::string data, std::string note) {
  if (path == "-") {
    if (to_stdout_) {
      return absl::InvalidArgumentError("only one output can go to standard output (-)");
    }
    to_stdout_ = true;
    stdout_data_ = std::move(data);
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(files_.Add(path, data));
  staged_.push_back({path, std::move(note)});
  return absl::OkStatus();
}

absl::StatusOr<std::vector<WrittenFile>> ReportFiles::Commit() {
  RETURN_IF_ERROR(files_.Commit());
  return std::move(staged_);
}

absl::Status StageProfileReports(const proto::Profile& profile, const ReportPaths& paths,
                                 ReportFiles* files) {
  if (!paths.json.empty()) {
    ASSIGN_OR_RETURN(std::string json, reports::ProfileToJson(profile));
    RETURN_IF_ERROR(files->Add(paths.json, std::move(json)));
  }
  if (!paths.html.empty()) {
    RETURN_IF_ERROR(files->Add(paths.html, reports::RenderProfileHtml(profile)));
  }
  return absl::OkStatus();
}

absl::Status StageDiffReports(const proto::Diff& diff, const proto::Profile& a,
                              const proto::Profile& b, const ReportPaths& paths,
                              ReportFiles* files) {
  if (!paths.json.empty()) {
    ASSIGN_OR_RETURN(std::string json, reports::DiffToJson(diff));
    RETURN_IF_ERROR(files->Add(paths.json, std::move(json)));
  }
  if (!paths.html.empty()) {
    reports::DiffHtmlInputs in;
    in.a = &a;
    in.b = &b;
    RETURN_IF_ERROR(files->Add(paths.html, reports::RenderDiffHtml(diff, in)));
  }
  return absl::OkStatus();
}

}  // namespace qprof::api
