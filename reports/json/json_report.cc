#include "reports/json/json_report.h"

#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "reports/json/json_numbers.h"

namespace qprof::reports {
namespace {

namespace pbu = google::protobuf::util;

}  // namespace

absl::StatusOr<std::string> MessageToJson(const google::protobuf::Message& m,
                                          const JsonOptions& o) {
  pbu::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  // Presence-tracked fields (proto3 `optional`) stay absent when unset even with this on.
  print.always_print_primitive_fields = true;
  print.add_whitespace = o.pretty;
  std::string out;
  auto st = pbu::MessageToJsonString(m, &out, print);
  if (!st.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot convert ", m.GetTypeName(), " to JSON: ", st.ToString()));
  }
  ASSIGN_OR_RETURN(out, Int64FieldsAsNumbers(m.GetDescriptor(), out));
  if (o.pretty && (out.empty() || out.back() != '\n')) out.push_back('\n');
  return out;
}

namespace {

template <typename M>
absl::StatusOr<M> FromJson(const std::string& json, const std::string& what) {
  pbu::JsonParseOptions parse;
  parse.ignore_unknown_fields = true;
  M m;
  auto st = pbu::JsonStringToMessage(json, &m, parse);
  if (!st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not a valid ", m.GetTypeName(), " JSON: ", st.ToString()));
  }
  return m;
}

}  // namespace

absl::StatusOr<std::string> ProfileToJson(const proto::Profile& profile,
                                          const JsonOptions& options) {
  return MessageToJson(profile, options);
}

absl::StatusOr<std::string> DiffToJson(const proto::Diff& diff, const JsonOptions& options) {
  return MessageToJson(diff, options);
}

absl::StatusOr<proto::Profile> ProfileFromJson(const std::string& json, const std::string& what) {
  return FromJson<proto::Profile>(json, what);
}

absl::StatusOr<proto::Diff> DiffFromJson(const std::string& json, const std::string& what) {
  return FromJson<proto::Diff>(json, what);
}

absl::Status WriteProfileJson(const proto::Profile& profile, const std::string& path,
                              const JsonOptions& options) {
  ASSIGN_OR_RETURN(std::string json, ProfileToJson(profile, options));
  return WriteFileAtomic(path, json);
}

absl::Status WriteDiffJson(const proto::Diff& diff, const std::string& path,
                           const JsonOptions& options) {
  ASSIGN_OR_RETURN(std::string json, DiffToJson(diff, options));
  return WriteFileAtomic(path, json);
}

}  // namespace qprof::reports
