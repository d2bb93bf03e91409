#include "base/text.h"

#include <cstdio>

namespace qprof {

size_t Utf8SeqLen(const unsigned char* p, size_t left) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlong 3-byte forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // no overlong 4-byte forms
    if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (left < n) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  }
  return n;
}

bool IsValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = 0;
  while (i < s.size()) {
    const size_t len = p[i] < 0x80 ? 1 : Utf8SeqLen(p + i, s.size() - i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

size_t RepairUtf8(char* data, size_t size) {
  auto* p = reinterpret_cast<unsigned char*>(data);
  size_t i = 0, fixed = 0;
  while (i < size) {
    const size_t len = p[i] < 0x80 ? 1 : Utf8SeqLen(p + i, size - i);
    if (len == 0) {
      p[i++] = '?';
      ++fixed;
    } else {
      i += len;
    }
  }
  return fixed;
}

std::string Utf8Clean(std::string_view s) {
  std::string out(s);
  if (!IsValidUtf8(s)) RepairUtf8(out.data(), out.size());
  return out;
}

void AppendJsonString(std::string& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = p[i];
    if (c >= 0x80) {
      const size_t len = Utf8SeqLen(p + i, s.size() - i);
      if (len == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(s.data() + i, len);
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

std::string JsonQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendJsonString(out, s);
  return out;
}

}  // namespace qprof
