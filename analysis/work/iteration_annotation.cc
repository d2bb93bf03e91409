#include "analysis/work/iteration_annotation.h"

#include <cstdint>
#include <map>

namespace qprof::work {
namespace {

// A cursor over the annotation text; every step fails softly (returns false).
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  bool Take(std::string_view lit) {
    if (s_.substr(0, lit.size()) != lit) return false;
    s_.remove_prefix(lit.size());
    return true;
  }
  // A decimal integer below 2^53 (sums of token counts stay far below it).
  bool Number(double* out) {
    size_t i = 0;
    uint64_t v = 0;
    for (; i < s_.size() && s_[i] >= '0' && s_[i] <= '9'; ++i) {
      v = v * 10 + static_cast<uint64_t>(s_[i] - '0');
      if (v > (uint64_t{1} << 53)) return false;
    }
    if (i == 0) return false;
    s_.remove_prefix(i);
    *out = static_cast<double>(v);
    return true;
  }
  std::string_view rest() const { return s_; }

 private:
  std::string_view s_;
};

// "(sq<n>sk<n>sqsq<n>sqsk<n>)"
bool DetailedSums(Cursor& c, SequenceSums* s) {
  return c.Take("(sq") && c.Number(&s->sq) && c.Take("sk") && c.Number(&s->sk) &&
         c.Take("sqsq") && c.Number(&s->sqsq) && c.Take("sqsk") && c.Number(&s->sqsk) &&
         c.Take(")");
}

std::optional<IterationAnnotation> VllmDetailed(std::string_view name) {
  Cursor c(name);
  double tokens = 0;
  IterationAnnotation a;
  if (!c.Take("execute_") || !c.Number(&tokens) || !c.Take("_context_") ||
      !c.Number(&a.context.requests) || !DetailedSums(c, &a.context) ||
      !c.Take("_generation_") || !c.Number(&a.generation.requests) ||
      !DetailedSums(c, &a.generation)) {
    return std::nullopt;
  }
  a.format = "vLLM";
  a.has_keys = true;
  return a;
}

// execute_context_<n>(<Σq>[_<Σq²>])_generation_<n>(<Σq>)
std::optional<IterationAnnotation> VllmOlder(std::string_view name) {
  Cursor c(name);
  IterationAnnotation a;
  if (!c.Take("execute_context_") || !c.Number(&a.context.requests) || !c.Take("(") ||
      !c.Number(&a.context.sq)) {
    return std::nullopt;
  }
  bool squares = false;
  if (c.Take("_")) {
    if (!c.Number(&a.context.sqsq)) return std::nullopt;
    squares = true;
  }
  if (!c.Take(")_generation_") || !c.Number(&a.generation.requests) || !c.Take("(") ||
      !c.Number(&a.generation.sq) || !c.Take(")")) {
    return std::nullopt;
  }
  a.format = "vLLM (older)";
  // Keys only for a step without decode requests (theirs are not stated), and only with
  // the squares: keys = queries, so sk = sq and sqsk = sqsq.
  if (squares && a.generation.requests == 0) {
    a.context.sk = a.context.sq;
    a.context.sqsk = a.context.sqsq;
    a.has_keys = true;
    a.keys_assumed = true;
  }
  return a;
}

// "key=value key=value" up to the closing ']'; values are integers ("bs=117/128": 117).
std::map<std::string, double, std::less<>> Fields(std::string_view body) {
  std::map<std::string, double, std::less<>> out;
  while (!body.empty()) {
    const size_t eq = body.find('=');
    if (eq == std::string_view::npos) break;
    size_t key_at = body.rfind(' ', eq);
    key_at = key_at == std::string_view::npos ? 0 : key_at + 1;
    Cursor v(body.substr(eq + 1));
    double x = 0;
    if (v.Number(&x)) out.emplace(std::string(body.substr(key_at, eq - key_at)), x);
    body.remove_prefix(eq + 1);
  }
  return out;
}

double Field(const std::map<std::string, double, std::less<>>& f, std::string_view k) {
  auto it = f.find(k);
  return it == f.end() ? 0 : it->second;
}

std::optional<IterationAnnotation> Sglang(std::string_view name) {
  if (name.substr(0, 5) != "step[" || name.back() != ']') return std::nullopt;
  std::string_view body = name.substr(5, name.size() - 6);
  const size_t sp = body.find(' ');
  const std::string_view mode = body.substr(0, sp);
  if (mode != "DECODE" && mode != "EXTEND" && mode != "MIXED") return std::nullopt;
  const auto f = Fields(sp == std::string_view::npos ? "" : body.substr(sp));
  IterationAnnotation a;
  a.format = "SGLang";
  a.has_keys = f.count("sqsq") || f.count("c_sqsq") || f.count("g_sqsq");
  for (auto [s, p] : {std::pair{&a.context, "c_"}, {&a.generation, "g_"}}) {
    const std::string pre(p);
    s->sq = Field(f, pre + "sq");
    s->sk = Field(f, pre + "sk");
    s->sqsq = Field(f, pre + "sqsq");
    s->sqsk = Field(f, pre + "sqsk");
  }
  const double bs = Field(f, "bs");
  if (mode == "DECODE") {
    a.generation.requests = bs;
    if (!a.has_keys) a.generation.sq = bs;  // plain form: one token per request
  } else if (mode == "EXTEND") {
    a.context.requests = bs;
    if (!a.has_keys) a.context.sq = Field(f, "toks");
  } else {
    a.context.requests = Field(f, "c");
    a.generation.requests = Field(f, "g");
  }
  return a;
}

std::optional<IterationAnnotation> Atom(std::string_view name) {
  const bool prefill = name.substr(0, 8) == "prefill[";
  if ((!prefill && name.substr(0, 7) != "decode[") || name.back() != ']') return std::nullopt;
  const auto f = Fields(name.substr(prefill ? 8 : 7));
  IterationAnnotation a;
  a.format = "ATOM";
  SequenceSums& s = prefill ? a.context : a.generation;
  s.requests = Field(f, "bs");
  s.sq = Field(f, "tok");
  a.has_keys = f.count("sqsq") && f.count("sqsk") && f.count("sk");
  if (a.has_keys) {
    s.sk = Field(f, "sk");
    s.sqsq = Field(f, "sqsq");
    s.sqsk = Field(f, "sqsk");
  }
  return a;
}

}  // namespace

std::optional<IterationAnnotation> ParseIterationAnnotation(std::string_view name) {
  if (name.empty() || name.size() > 4096) return std::nullopt;
  std::optional<IterationAnnotation> a;
  if (name.substr(0, 8) == "execute_") {
    a = VllmDetailed(name);
    if (!a) a = VllmOlder(name);
  } else if (name.substr(0, 5) == "step[") {
    a = Sglang(name);
  } else {
    a = Atom(name);
  }
  if (a) a->text = std::string(name);
  return a;
}

}  // namespace qprof::work
