// Number parsing for Kineto JSON tokens, from their text: exact microseconds -> ns with no
// detour through double, and integers that may be out of range.
#ifndef QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_NUMBERS_H_
#define QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_NUMBERS_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace qprof::importers {

// "123", "123.456789", "-5", "1.5e3" (microseconds) -> nanoseconds, rounded to nearest.
// nullopt when not a number or out of int64 range.
std::optional<int64_t> MicrosToNs(std::string_view token);

// A non-negative integer token ("42", "42.0" tolerated); nullopt if negative, fractional,
// not a number, or above UINT64_MAX.
std::optional<uint64_t> ParseUint(std::string_view token);

// Any JSON number token as double; nullopt if not a number.
std::optional<double> ParseDouble(std::string_view token);

// The last run of digits in a string: "stream 7" -> 7, "GPU 3" -> 3, "7" -> 7.
std::optional<uint64_t> TrailingNumber(std::string_view s);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_NUMBERS_H_
