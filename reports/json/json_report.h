// JSON form of a Profile or a Diff: protobuf's canonical JSON with proto field names
// (snake_case), as DESIGN.md "Output files" promises to consumers.
//
// Contract:
// - Scalars (proto3 fields without presence) are always printed, also at their default
//   value, so a consumer can read `share: 0` instead of guessing that a missing key is 0.
//   Empty repeated fields print as [].
// - Fields with presence (`optional double tensor_pipe_pct` and friends) appear ONLY when
//   set: a key present means "measured"; absent means "not measured", never 0.
// - 64-bit integers are JSON numbers (123), not the strings ("123") of protobuf's JSON
//   mapping, so jq, pandas and schema validators read them as numbers; values stay below
//   2^53 or the writer fails (json_numbers.h). Parsers accept both forms.
// - Doubles that are infinite or NaN are the strings "Infinity", "-Infinity", "NaN"
//   (protobuf's mapping). The JSON Schemas in schemas/ describe every field.
// - Write*Json() writes atomically (temp file + rename): never a half-written report.
#ifndef QPROF_REPORTS_JSON_JSON_REPORT_H_
#define QPROF_REPORTS_JSON_JSON_REPORT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::reports {

struct JsonOptions {
  bool pretty = true;  // two-space indentation; false gives one line
};

// Any message (Profile, Diff, Trace) in the form above.
absl::StatusOr<std::string> MessageToJson(const google::protobuf::Message& message,
                                          const JsonOptions& options = {});

absl::StatusOr<std::string> ProfileToJson(const proto::Profile& profile,
                                          const JsonOptions& options = {});
absl::StatusOr<std::string> DiffToJson(const proto::Diff& diff, const JsonOptions& options = {});

// Parse back (tests, `qprof diff A.json B.json`). Unknown fields are ignored so newer
// reports still load; InvalidArgument names `what` (usually the file path) on bad input.
absl::StatusOr<proto::Profile> ProfileFromJson(const std::string& json,
                                               const std::string& what = "profile JSON");
absl::StatusOr<proto::Diff> DiffFromJson(const std::string& json,
                                         const std::string& what = "diff JSON");

absl::Status WriteProfileJson(const proto::Profile& profile, const std::string& path,
                              const JsonOptions& options = {});
absl::Status WriteDiffJson(const proto::Diff& diff, const std::string& path,
                           const JsonOptions& options = {});

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_JSON_JSON_REPORT_H_
