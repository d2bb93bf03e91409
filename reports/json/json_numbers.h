// 64-bit integers as JSON numbers.
//
// protobuf's JSON mapping writes int64/uint64 (and the fixed/sint forms) as strings
// ("kernel_time_ns": "1220926") because JavaScript numbers are doubles. jq, pandas and
// JSON Schema validators then see strings. qprof's reports hold durations in nanoseconds
// and counts, all far below 2^53 (104 days in ns), so they are written as plain numbers,
// which every JSON reader holds exactly up to 2^53.
//
// Int64FieldsAsNumbers() takes the text protobuf printed for a message of type `type` and
// removes the quotes around the values of exactly those fields (singular, repeated and map
// values; map keys stay strings, as JSON requires), guided by the descriptor. Every other
// byte is kept. A negative value below -2^53 is an error naming the field. A positive one
// beyond 2^53 (a span over 104 days: timestamps from two clocks in one trace, which the
// analysis warns about as `span_beyond_2_53`) is written, exact in the text, rather than
// costing the user the whole report; a reader that parses doubles rounds it.
// The one exception is a wall-clock instant, a field named `*_unix_ns` (RunInfo's
// start_unix_ns, about 1.8e18 today): it is written as a number too, exact in the text
// (Python's json and jq 1.7 keep every digit); a reader that parses numbers as doubles
// gets it to within 256 ns, which is immaterial for the time a run started.
//
// This is the one place where qprof decides how 64-bit integers are written; every JSON
// writer of a proto message goes through reports::MessageToJson (json_report.h).
#ifndef QPROF_REPORTS_JSON_JSON_NUMBERS_H_
#define QPROF_REPORTS_JSON_JSON_NUMBERS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "google/protobuf/descriptor.h"

namespace qprof::reports {

// The largest integer magnitude written as a JSON number: 2^53, beyond which a double
// (JavaScript, pandas' float columns, many JSON libraries) no longer holds every integer.
inline constexpr uint64_t kMaxJsonSafeInteger = uint64_t{1} << 53;

// `json` must be protobuf's output for a message of `type` with proto field names
// (preserve_proto_field_names). InvalidArgument on text it cannot follow; OutOfRange when
// a negative 64-bit value is below -kMaxJsonSafeInteger (the message names the field path).
// True for fields exempt from the 2^53 bound: wall-clock instants, named `*_unix_ns`.
bool IsUnixInstantField(const google::protobuf::FieldDescriptor* field);

absl::StatusOr<std::string> Int64FieldsAsNumbers(const google::protobuf::Descriptor* type,
                                                 std::string_view json);

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_JSON_JSON_NUMBERS_H_
