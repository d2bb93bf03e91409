// fmt formatters for Abseil types. Debian's Abseil is built with its own string_view
// (ABSL_OPTION_USE_STD_STRING_VIEW 0), so absl::string_view is not std::string_view and
// fmt cannot print it (or absl::Status) without these.
#ifndef QPROF_BASE_ABSL_FMT_H_
#define QPROF_BASE_ABSL_FMT_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "fmt/format.h"

template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<fmt::string_view> {
  template <typename Ctx>
  auto format(absl::string_view s, Ctx& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(s.data(), s.size()), ctx);
  }
};

template <>
struct fmt::formatter<absl::Status> : fmt::formatter<fmt::string_view> {
  template <typename Ctx>
  auto format(const absl::Status& s, Ctx& ctx) const {
    std::string text = s.ToString();
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(text), ctx);
  }
};

#endif  // QPROF_BASE_ABSL_FMT_H_
