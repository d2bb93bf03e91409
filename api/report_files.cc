#include "api/report_files.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "reports/html/html_report.h"
#include "reports/json/json_report.h"

namespace qprof::api {

absl::Status CheckOutputs(const std::vector<NamedOutput>& outputs) {
  std::vector<std::pair<std::string, const NamedOutput*>> seen;  // normalised path
  const NamedOutput* to_stdout = nullptr;
  for (const NamedOutput& o : outputs) {
    if (o.path.empty()) continue;
    if (o.path == "-") {
      if (to_stdout != nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            to_stdout->option, " and ", o.option, " both write to standard output (-): give "
            "one of them a file name"));
      }
      to_stdout = &o;
      continue;
    }
    RETURN_IF_ERROR(CheckOutputPath(o.path));
    std::error_code ec;
    std::string norm = std::filesystem::absolute(o.path, ec).lexically_normal().string();
    if (ec) norm = o.path;
    for (const auto& [p, other] : seen) {
      if (p == norm) {
        return absl::InvalidArgumentError(absl::StrCat(
            other->option, " and ", o.option, " both name ", o.path,
            ": give each report its own file"));
      }
    }
    seen.emplace_back(std::move(norm), &o);
  }
  return absl::OkStatus();
}

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
