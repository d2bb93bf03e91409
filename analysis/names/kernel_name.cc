#include "analysis/names/kernel_name.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>

namespace qprof::names {
namespace {

bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool IsPunct(char c) {
  switch (c) {
    case '<': case '>': case ',': case '*': case '&': case '(': case ')':
    case '[': case ']': case ':': case '{': case '}': case '#':
      return true;
    default:
      return false;
  }
}

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
}

// Drops the trailing top-level "( ... )" (and anything after it, e.g. " const").
std::string StripParameterList(const std::string& s) {
  int angle = 0, paren = 0, brace = 0, bracket = 0;
  size_t last_open = std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<') ++angle;
    else if (c == '>') { if (angle > 0) --angle; }
    else if (c == '{') ++brace;
    else if (c == '}') { if (brace > 0) --brace; }
    else if (c == '[') ++bracket;
    else if (c == ']') { if (bracket > 0) --bracket; }
    else if (c == '(') {
      // "(anonymous namespace)" is part of a qualified name, not a parameter list.
      if (angle == 0 && paren == 0 && brace == 0 && bracket == 0 &&
          s.compare(i, 21, "(anonymous namespace)") != 0) {
        last_open = i;
      }
      ++paren;
    } else if (c == ')') {
      if (paren > 0) --paren;
    }
  }
  if (last_open == std::string::npos || last_open == 0) return s;
  return s.substr(0, last_open);
}

}  // namespace

std::string Demangle(std::string_view name) {
  if (name.size() < 3 || name.substr(0, 2) != "_Z") return std::string(name);
  std::string in(name);
  int status = 0;
  char* out = abi::__cxa_demangle(in.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return in;
  }
  std::string result(out);
  std::free(out);
  return result;
}

namespace {

// One spelling for anonymous namespaces and lambdas (nsys and cxxabi differ).
void CanonicalSpellings(std::string& s) {
  ReplaceAll(s, "<unnamed>", "(anonymous namespace)");
  ReplaceAll(s, "{anonymous}", "(anonymous namespace)");
  ReplaceAll(s, "`anonymous namespace'", "(anonymous namespace)");
  if (s.find("[lambda") != std::string::npos) {
    static const std::regex kLambda(R"(\[lambda\(([^()\]]*)\) \(instance (\d+)\)\])");
    s = std::regex_replace(s, kLambda, "{lambda($1)#$2}");
  }
}

std::string CollapseWhitespace(const std::string& s) {
  std::string t;
  t.reserve(s.size());
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!t.empty() && t.back() != ' ') t.push_back(' ');
    } else {
      t.push_back(c);
    }
  }
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t;
}

// Template value casts "(int)128" -> "128", "(bool)0" -> "false".
std::string DropValueCasts(std::string t) {
  if (t.find("(bool)") != std::string::npos) {
    ReplaceAll(t, "(bool)0", "false");
    ReplaceAll(t, "(bool)1", "true");
  }
  if (t.find(")") != std::string::npos) {
    static const std::regex kCast(
        R"(\((?:unsigned |signed )?(?:int|long|long long|short|char|unsigned|bool)\)(-?\d))");
    t = std::regex_replace(t, kCast, "$1");
  }
  return t;
}

// Integer literal suffixes: a digit run preceded by a non-identifier char, followed by
// u/l letters and then a non-identifier char ("2ul" -> "2").
std::string DropIntegerSuffixes(const std::string& t) {
  std::string u;
  u.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    u.push_back(t[i]);
    if (std::isdigit(static_cast<unsigned char>(t[i])) &&
        (i + 1 < t.size() && (t[i + 1] == 'u' || t[i + 1] == 'l' || t[i + 1] == 'U' ||
                              t[i + 1] == 'L'))) {
      // Find the start of this digit run.
      size_t start = i;
      while (start > 0 && std::isdigit(static_cast<unsigned char>(t[start - 1]))) --start;
      if (start > 0 && IsIdent(t[start - 1])) continue;
      size_t j = i + 1;
      while (j < t.size() && (t[j] == 'u' || t[j] == 'l' || t[j] == 'U' || t[j] == 'L')) ++j;
      if (j - (i + 1) <= 3 && (j == t.size() || !IsIdent(t[j]))) i = j - 1;
    }
  }
  return u;
}

// Drop "void " at the start and inside template argument lists.
std::string DropVoid(const std::string& u) {
  std::string v;
  v.reserve(u.size());
  for (size_t i = 0; i < u.size(); ++i) {
    if (u.compare(i, 5, "void ") == 0 && (i == 0 || u[i - 1] == '<' || u[i - 1] == ',' ||
                                         (u[i - 1] == ' ' && i >= 2 && u[i - 2] == ','))) {
      i += 4;
      continue;
    }
    v.push_back(u[i]);
  }
  return v;
}

// No space next to punctuation (but "(anonymous namespace)" keeps its space).
std::string TightenPunctuation(const std::string& v) {
  std::string w;
  w.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == ' ') {
      char prev = w.empty() ? '\0' : w.back();
      char next = i + 1 < v.size() ? v[i + 1] : '\0';
      if (w.empty() || IsPunct(prev) || IsPunct(next) || next == '\0') continue;
      if (i >= 10 && v.compare(i - 9, 9, "anonymous") == 0) {
        w.push_back(' ');
        continue;
      }
    }
    w.push_back(v[i]);
  }
  return w;
}

}  // namespace

std::string NormaliseKernelName(std::string_view raw) {
  std::string s = Demangle(raw);
  CanonicalSpellings(s);
  std::string t = CollapseWhitespace(s);
  // "operator ()" -> "operator()" before the parameter list is located.
  ReplaceAll(t, "operator ()", "operator()");
  t = StripParameterList(t);
  return TightenPunctuation(DropVoid(DropIntegerSuffixes(DropValueCasts(std::move(t)))));
}

std::string FoldNvtxPath(std::string_view path) {
  // Runs of digits that start a token (after ' ', '#', '=' or '_') and end a component or a
  // word become '*'; everything between is copied in one piece (paths are long, folds few).
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::string out;
  out.reserve(path.size());
  size_t copied = 0;
  for (size_t i = 1; i < path.size(); ++i) {
    const char before = path[i - 1];
    if ((before != ' ' && before != '#' && before != '=' && before != '_') || !digit(path[i])) {
      continue;
    }
    size_t j = i;
    while (j < path.size() && digit(path[j])) ++j;
    if (j == path.size() || path[j] == '/' || path[j] == ' ') {
      out.append(path.data() + copied, i - copied);
      out.push_back('*');
      copied = j;
    }
    i = j;  // path[j] follows a digit: it starts no token
  }
  out.append(path.data() + copied, path.size() - copied);
  return out;
}

std::string FoldModuleInstances(const std::string& text) {
  static constexpr std::string_view kTag = "nn.Module: ";
  size_t pos = text.find(kTag);
  if (pos == std::string::npos) return text;
  std::string out;
  size_t copied = 0;
  while (pos != std::string::npos) {
    size_t i = pos + kTag.size();
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
      ++i;
    }
    // [pos + tag, i) is the module's label; its instance number follows its last '_'.
    size_t us = text.rfind('_', i == 0 ? 0 : i - 1);
    if (us != std::string::npos && us >= pos + kTag.size() && us + 1 < i &&
        std::all_of(text.begin() + us + 1, text.begin() + i,
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      out.append(text, copied, us + 1 - copied);
      out.push_back('N');
      copied = i;
    }
    pos = text.find(kTag, i);
  }
  out.append(text, copied, std::string::npos);
  return out;
}

}  // namespace qprof::names
