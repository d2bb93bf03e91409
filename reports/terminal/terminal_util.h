// Helpers shared by the profile and diff terminal summaries (not a public API).
#ifndef QPROF_REPORTS_TERMINAL_TERMINAL_UTIL_H_
#define QPROF_REPORTS_TERMINAL_TERMINAL_UTIL_H_

#include <map>
#include <string>

#include "proto/profile.pb.h"
#include "reports/terminal/table.h"
#include "reports/terminal/terminal_report.h"

namespace qprof::reports {

inline constexpr const char* kBold = "\x1b[1m";
inline constexpr const char* kReset = "\x1b[0m";
inline constexpr const char* kYellow = "\x1b[33m";

// Output being built, with the options; Heading() is bold on a TTY.
struct TermCtx {
  const TerminalOptions& o;
  int width;
  std::string out;
  void Line(const std::string& s = "") { out += s + "\n"; }
  void Heading(const std::string& s) {
    out += "\n";
    out += o.color ? std::string(kBold) + s + kReset : s;
    out += "\n";
  }
};

int ClampWidth(int w);

// Drops a leading "void " and, when still too long, collapses template arguments to <...>
// before cutting the middle: the kernel's base name is what a reader recognises.
std::string ShortKernelName(std::string name, size_t width);

// Word-wraps `text` to `width` columns with `indent` on every line (continuations get two
// more spaces). Ends with a newline.
std::string Wrap(const std::string& text, size_t width, const std::string& indent);

// One bar of `cells` columns made of class segments. Without colour each class has its own
// letter (T tensor, S simt, C comm, M memory, o other) so the bar reads in a log file.
std::string ClassBar(const std::map<std::string, double>& shares, int cells, bool color);
// "T tensor 9.0%  S simt 84.0%  ...": the bar's letters with the shares as text.
std::string BarLegend(const std::map<std::string, double>& shares);
// `indent + text` as one line when it fits (spacing kept), else Wrap().
std::string FitOrWrap(const std::string& text, size_t width, const std::string& indent);

std::map<std::string, double> SharesOf(const proto::Profile& p);

inline Cell ClassCell(const std::string& cls) { return Cell{cls, ClassColor(cls)}; }

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_TERMINAL_TERMINAL_UTIL_H_
