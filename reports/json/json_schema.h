// JSON Schema (draft 2020-12) of the JSON that MessageToJson (json_report.h) writes, made
// from the message's descriptor so that it cannot drift from the writer: the checked-in
// schemas/profile.schema.json and schemas/diff.schema.json are this output, compared in
// tests (reports_json_schema_test; regenerate with QPROF_UPDATE_GOLDEN=1).
//
// What the schema states, following the writer's contract:
// - every field without presence (scalars, repeated, maps) is required: it is always
//   printed, also at its default value; message fields and proto3 `optional` fields may
//   be absent (absent = not measured / not known, never 0);
// - no other keys (additionalProperties: false);
// - 64-bit integers are numbers within +-2^53; unsigned ones are >= 0;
// - doubles are numbers, or "Infinity", "-Infinity", "NaN" (protobuf's mapping);
// - enums are their names; bytes are base64 strings.
#ifndef QPROF_REPORTS_JSON_JSON_SCHEMA_H_
#define QPROF_REPORTS_JSON_JSON_SCHEMA_H_

#include <string>

#include "google/protobuf/descriptor.h"

namespace qprof::reports {

struct SchemaInfo {
  std::string id;           // "$id", a URN such as "urn:qprof:profile"
  std::string title;
  std::string description;
};

// Pretty-printed (two spaces), keys in field-number order, ends with a newline.
std::string JsonSchemaFor(const google::protobuf::Descriptor* type, const SchemaInfo& info);

// The schemas qprof ships: "profile" and "diff" (the run summary's is written by hand:
// schemas/run-summary.schema.json). Empty string for another name.
std::string ShippedJsonSchema(const std::string& name);

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_JSON_JSON_SCHEMA_H_
