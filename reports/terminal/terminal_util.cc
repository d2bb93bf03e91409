#include "reports/terminal/terminal_util.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "reports/common/format.h"

namespace qprof::reports {

int ClampWidth(int w) { return std::clamp(w, 80, 200); }

namespace {

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
}

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The identifier inside template arguments that tells kernels of one family apart: the
// last "...Functor", else the longest identifier that is not a type or plumbing word.
std::string KeyIdentifier(const std::string& args, const std::string& base) {
  static const char* kStop[] = {"BFloat16", "Half", "float", "double", "int", "unsigned",
                                "char", "long", "bool", "true", "false", "lambda", "const",
                                "TensorIteratorBase", "Array", "array", "gpu_kernel_impl_nocast",
                                "gpu_kernel_impl", "OpaqueType", "LoadWithCast", "StoreWithCast",
                                "TrivialOffsetCalculator", "OffsetCalculator", "operator",
                                "__nv_bfloat16", "__half", "signed", "short", "size_t"};
  std::string functor, longest;
  for (size_t i = 0; i < args.size();) {
    if (!IsIdentChar(args[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < args.size() && IsIdentChar(args[j])) ++j;
    std::string id = args.substr(i, j - i);
    i = j;
    if (std::isdigit(static_cast<unsigned char>(id[0])) || id == base) continue;
    if (id.find("Functor") != std::string::npos || id.find("functor") != std::string::npos) {
      functor = id;
      continue;
    }
    bool stop = id.size() < 4;
    for (const char* w : kStop) stop |= id == w;
    if (!stop && id.size() > longest.size()) longest = id;
  }
  return functor.empty() ? longest : functor;
}

}  // namespace

std::string ShortKernelName(std::string name, size_t width) {
  if (name.rfind("void ", 0) == 0) name = name.substr(5);
  if (name.size() <= width) return name;
  // Namespaces every PyTorch / CUTLASS kernel repeats carry no information here.
  for (const char* ns : {"(anonymous namespace)::", "at::native::", "at::", "c10::",
                         "cutlass::", "cute::", "std::", "pytorch_flash::", "flash::"}) {
    ReplaceAll(name, ns, "");
  }
  // The parameter list: from the first '(' outside template arguments.
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>' && depth > 0) --depth;
    if (name[i] == '(' && depth == 0 && i > 0) {
      name.resize(i);
      break;
    }
  }
  if (name.size() <= width) return name;
  const size_t lt = name.find('<');
  if (lt != std::string::npos && lt > 0) {
    const std::string base = name.substr(0, lt);
    const std::string key = KeyIdentifier(name.substr(lt), base);
    const std::string args = key.empty() ? "<...>" : "<.." + key + "..>";
    std::string shorter = base + args;
    // Too long still: shorten the base name rather than the key that tells kernels apart.
    if (shorter.size() > width && width >= args.size() + 10) {
      shorter = Ellipsize(base, width - args.size()) + args;
    }
    if (shorter.size() < name.size()) name = shorter;
  }
  return Ellipsize(name, width);
}

// Word-wraps `text` to `width` columns with `indent` on the first line and spaces of the
// same width plus two on the others; words longer than a line are cut.
std::string Wrap(const std::string& text, size_t width, const std::string& indent) {
  const std::string cont(indent.size() + 2, ' ');
  std::string out, line = indent;
  size_t start_len = indent.size();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t sp = text.find(' ', pos);
    std::string word = text.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    pos = sp == std::string::npos ? text.size() : sp + 1;
    if (word.empty()) continue;
    if (line.size() > start_len && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = cont;
      start_len = cont.size();
    }
    while (line.size() + (line.size() > start_len ? 1 : 0) + word.size() > width &&
           width > start_len + 1) {
      // A word longer than the room left: cut it.
      const size_t room = width - line.size() - (line.size() > start_len ? 1 : 0);
      if (line.size() > start_len) line += ' ';
      line += word.substr(0, room);
      word = word.substr(room);
      out += line + "\n";
      line = cont;
      start_len = cont.size();
    }
    if (line.size() > start_len) line += ' ';
    line += word;
  }
  if (line.size() > start_len) out += line + "\n";
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
