#include "analysis/importers/kineto/kineto_numbers.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace qprof::importers {
namespace {

std::string_view Trim(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' ||
                        t.back() == '\t')) {
    t.remove_suffix(1);
  }
  while (!t.empty() && (t.front() == ' ' || t.front() == '"')) t.remove_prefix(1);
  while (!t.empty() && t.back() == '"') t.remove_suffix(1);
  return t;
}

}  // namespace

std::optional<double> ParseDouble(std::string_view token) {
  token = Trim(token);
  if (token.empty() || token.size() > 400) return std::nullopt;
  std::string s(token);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> MicrosToNs(std::string_view token) {
  token = Trim(token);
  size_t i = 0;
  bool neg = false;
  if (i < token.size() && token[i] == '-') {
    neg = true;
    ++i;
  }
  // Integer part: at most 16 digits, and us * 1000 + 999 must stay within int64 (9.2e18 ns,
  // year 2262 as epoch ns).
  constexpr uint64_t kMaxWholeUs = (static_cast<uint64_t>(INT64_MAX) - 999) / 1000;
  uint64_t whole = 0;
  const char* digits = token.data() + i;
  const auto [past, ec] = std::from_chars(digits, token.data() + token.size(), whole);
  if (ec != std::errc() || past - digits > 16 || whole > kMaxWholeUs) return std::nullopt;
  i = static_cast<size_t>(past - token.data());
  uint64_t frac_ns = 0;
  if (i < token.size() && token[i] == '.') {
    ++i;
    int scale = 100;  // the first fractional digit is hundreds of ns
    bool round_up = false;
    size_t fdigits = 0;
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
      int d = token[i] - '0';
      if (fdigits < 3) {
        frac_ns += static_cast<uint64_t>(d * scale);
        scale /= 10;
      } else if (fdigits == 3) {
        round_up = d >= 5;
      }
      ++fdigits;
      ++i;
    }
    if (fdigits == 0) return std::nullopt;
    if (round_up) ++frac_ns;
  }
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    std::optional<double> d = ParseDouble(token);
    if (!d) return std::nullopt;
    double ns = std::round(*d * 1000.0);
    if (!(std::fabs(ns) < 9.2e18)) return std::nullopt;
    return static_cast<int64_t>(ns);
  }
  if (i != token.size()) return std::nullopt;
  int64_t ns = static_cast<int64_t>(whole * 1000 + frac_ns);
  return neg ? -ns : ns;
}

std::optional<uint64_t> ParseUint(std::string_view token) {
  token = Trim(token);
  if (token.empty()) return std::nullopt;
  uint64_t v = 0;
  const auto [past, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc()) return std::nullopt;  // no digits, or above UINT64_MAX
  size_t i = static_cast<size_t>(past - token.data());
  if (i < token.size()) {
    // Tolerate "42.0"; anything else is not an unsigned integer.
    if (token[i] != '.') return std::nullopt;
    for (++i; i < token.size(); ++i) {
      if (token[i] != '0') return std::nullopt;
    }
  }
  return v;
}

std::optional<uint64_t> TrailingNumber(std::string_view s) {
  size_t end = s.size();
  while (end > 0 && !(s[end - 1] >= '0' && s[end - 1] <= '9')) --end;
  size_t begin = end;
  while (begin > 0 && s[begin - 1] >= '0' && s[begin - 1] <= '9') --begin;
  if (begin == end) return std::nullopt;
  return ParseUint(s.substr(begin, end - begin));
}

}  // namespace qprof::importers
