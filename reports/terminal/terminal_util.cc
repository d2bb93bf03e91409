#include "reports/terminal/terminal_util.h"

#include <algorithm>
#include <cmath>

#include "reports/common/format.h"

namespace qprof::reports {

int ClampWidth(int w) { return std::clamp(w, 80, 200); }

// Drops a leading "void " and, when still too long, collapses template arguments to <...>
// before cutting the middle: the kernel's base name is what a reader recognises.
std::string ShortKernelName(std::string name, size_t width) {
  if (name.rfind("void ", 0) == 0) name = name.substr(5);
  if (name.size() <= width) return name;
  std::string collapsed;
  int depth = 0;
  for (char c : name) {
    if (c == '<') {
      if (depth++ == 0) collapsed += "<...>";
      continue;
    }
    if (c == '>' && depth > 0) {
      --depth;
      continue;
    }
    if (depth == 0) collapsed += c;
  }
  if (depth == 0 && !collapsed.empty()) name = collapsed;
  return Ellipsize(name, width);
}

// Word-wraps `text` to `width` columns with `indent` on every line.
std::string Wrap(const std::string& text, size_t width, const std::string& indent) {
  std::string out, line = indent;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t sp = text.find(' ', pos);
    std::string word = text.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    pos = sp == std::string::npos ? text.size() : sp + 1;
    if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent + "  ";
    }
    if (line.size() > indent.size() && line.back() != ' ') line += ' ';
    line += word;
  }
  if (line.size() > indent.size()) out += line + "\n";
  return out;
}

// One bar made of class segments. Without colour each class has its own letter so the
// bar is readable in a log file; with colour the letters sit on coloured cells.
std::string ClassBar(const std::map<std::string, double>& shares, int cells, bool color) {
  static const std::pair<const char*, char> kOrder[] = {
      {"tensor", 'T'}, {"simt", 'S'}, {"comm", 'C'}, {"memory", 'M'}, {"other", 'o'}};
  std::string bar;
  int used = 0;
  double cum = 0;
  for (const auto& [cls, letter] : kOrder) {
    auto it = shares.find(cls);
    if (it == shares.end() || it->second <= 0) continue;
    cum += it->second;
    int end = static_cast<int>(std::lround(std::min(cum, 1.0) * cells));
    int n = std::max(0, end - used);
    if (n == 0) continue;
    std::string seg(static_cast<size_t>(n), letter);
    bar += color ? std::string(ClassColor(cls)) + "\x1b[7m" + seg + kReset : seg;
    used += n;
  }
  if (used < cells) bar += std::string(static_cast<size_t>(cells - used), ' ');
  return "[" + bar + "]";
}

std::string BarLegend(const std::map<std::string, double>& shares) {
  static const std::pair<const char*, char> kOrder[] = {
      {"tensor", 'T'}, {"simt", 'S'}, {"comm", 'C'}, {"memory", 'M'}, {"other", 'o'}};
  std::string out;
  for (const auto& [cls, letter] : kOrder) {
    auto it = shares.find(cls);
    double v = it == shares.end() ? 0 : it->second;
    if (!out.empty()) out += "  ";
    out += std::string(1, letter) + " " + cls + " " + FormatShare(v);
  }
  return out;
}

std::string FitOrWrap(const std::string& text, size_t width, const std::string& indent) {
  if (indent.size() + text.size() <= width) return indent + text + "\n";
  return Wrap(text, width, indent);
}

std::map<std::string, double> SharesOf(const proto::Profile& p) {
  std::map<std::string, double> m;
  for (const auto& c : p.classes()) m[c.class_()] += c.share();
  return m;
}

}  // namespace qprof::reports
