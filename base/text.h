// Text helpers shared by every writer and reader: UTF-8 validation and repair, and JSON
// string quoting. Traces from other tools carry invalid UTF-8 and control characters in
// kernel and range names; every output format must stay valid whatever they hold.
#ifndef QPROF_BASE_TEXT_H_
#define QPROF_BASE_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace qprof {

// Length of the valid UTF-8 sequence starting at p (1 for ASCII), or 0 if the bytes there
// are not valid UTF-8. RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF.
size_t Utf8SeqLen(const unsigned char* p, size_t left);

bool IsValidUtf8(std::string_view s);
// Replaces every byte that is not part of a valid UTF-8 sequence by '?', in place; the
// length is unchanged. Returns the number of bytes replaced.
size_t RepairUtf8(char* data, size_t size);
// Copy of `s` with invalid bytes replaced by '?'.
std::string Utf8Clean(std::string_view s);

// Appends `s` as a JSON string literal (quotes included): '"', '\\' and control
// characters escaped, invalid UTF-8 bytes replaced by U+FFFD.
void AppendJsonString(std::string& out, std::string_view s);
std::string JsonQuote(std::string_view s);

}  // namespace qprof

#endif  // QPROF_BASE_TEXT_H_
