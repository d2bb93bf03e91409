#include "base/step_names.h"

#include <cctype>

namespace qprof {
namespace {

// The decimal number at `s[*i]`, advancing *i past it; nullopt-like false when none (or it
// does not fit 32 bits).
bool ReadNumber(std::string_view s, size_t* i, uint32_t* out) {
  uint64_t n = 0;
  size_t j = *i;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) && j - *i < 10) {
    n = n * 10 + static_cast<uint64_t>(s[j++] - '0');
  }
  if (j == *i || n > UINT32_MAX) return false;
  *i = j;
  *out = static_cast<uint32_t>(n);
  return true;
}

// "execute_8192_context_9(...)_generation_37(...)": TraceLens's iteration annotation.
DecodeStepName ParseIteration(std::string_view s) {
  DecodeStepName d;
  static constexpr std::string_view kExecute = "execute_", kContext = "_context_",
                                    kGeneration = "_generation_";
  if (s.substr(0, kExecute.size()) != kExecute) return d;
  size_t i = kExecute.size();
  uint32_t padded = 0, context = 0, generation = 0;
  if (!ReadNumber(s, &i, &padded) || s.substr(i, kContext.size()) != kContext) return d;
  i += kContext.size();
  if (!ReadNumber(s, &i, &context)) return d;
  const size_t g = s.find(kGeneration, i);
  if (g == std::string_view::npos) return d;
  i = g + kGeneration.size();
  if (!ReadNumber(s, &i, &generation)) return d;
  d.kind = DecodeStepName::kIteration;
  d.tokens_known = true;
  d.tokens = generation;
  d.prefill_seqs = context;
  d.padded_tokens = padded;
  return d;
}

// "step[DECODE bs=32]": a mode word, then "bs=N" (SGLang); "decode[bs=32 ...]" and
// "prefill[bs=2 ...]": the mode is the name (ATOM).
DecodeStepName ParseStepBatch(std::string_view s) {
  DecodeStepName d;
  std::string mode;
  size_t open = 0;
  for (std::string_view prefix : {"step[", "decode[", "prefill["}) {
    if (s.substr(0, prefix.size()) == prefix) open = prefix.size();
    if (open > 0 && prefix != "step[") mode = std::string(prefix.substr(0, prefix.size() - 1));
    if (open > 0) break;
  }
  if (open == 0 || s.back() != ']') return d;
  const std::string_view inner = s.substr(open, s.size() - open - 1);
  const size_t bs = inner.find("bs=");
  if (bs == std::string_view::npos) return d;
  size_t i = bs + 3;
  uint32_t n = 0;
  if (!ReadNumber(inner, &i, &n)) return d;
  if (mode.empty()) {
    size_t mode_end = 0;
    while (mode_end < inner.size() && std::isalpha(static_cast<unsigned char>(inner[mode_end]))) {
      ++mode_end;
    }
    mode = std::string(inner.substr(0, mode_end));
  }
  d.kind = DecodeStepName::kStepBatch;
  d.mode = mode;
  std::string upper = d.mode;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  d.tokens_known = upper == "DECODE";
  d.tokens = d.tokens_known ? n : 0;
  d.padded_tokens = n;
  return d;
}

}  // namespace

DecodeStepName ParseDecodeStepName(std::string_view name) {
  if (name.size() < 6) return {};
  if (name[0] == 'e') return ParseIteration(name);
  if (name[0] == 's' || name[0] == 'd' || name[0] == 'p') return ParseStepBatch(name);
  return {};
}

bool PathHasDecodeStep(std::string_view path) {
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string_view::npos) end = path.size();
    if (ParseDecodeStepName(path.substr(begin, end - begin)).kind != DecodeStepName::kNone) {
      return true;
    }
    begin = end + 1;
  }
  return false;
}

}  // namespace qprof
