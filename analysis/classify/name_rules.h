// Name rules: how a third-party kernel's demangled name tells its pipe class, role and
// weight format. This is the weakest evidence (DESIGN.md: measured > SASS > registry >
// name rule > unknown), used only when nothing stronger is known.
//
// The rules are ONE table (name_rules.cc), read top to bottom: the first row whose
// pattern matches and that has an opinion on a question (class, role) answers it. So the
// traps come first: `sm80_xmma_gemm_f32f32_..._ffma_...` is FP32 FFMA (SIMT) although it
// says xmma, and must be matched before the generic xmma row.
//
// Patterns are case-insensitive globs over the whole normalised name ('*' = any run,
// '?' = one character). Names are classified on the DEMANGLED name: CUTLASS and FA3
// kernels whose short name is just `Kernel2` or `device_kernel` match no rule and stay
// unknown unless the demangled name (with its template arguments) is given.
#ifndef QPROF_ANALYSIS_CLASSIFY_NAME_RULES_H_
#define QPROF_ANALYSIS_CLASSIFY_NAME_RULES_H_

#include <string>
#include <string_view>
#include <vector>

namespace qprof::classify {

struct NameRule {
  const char* pattern;     // glob, lower case
  const char* pipe_class;  // "tensor", "simt", "comm", "memory", "other"; "" = no opinion
  const char* role;        // proto/vocabulary.h role; "" = no opinion
  const char* why;         // one line, shown as evidence detail
};

struct FormatRule {
  const char* pattern;
  const char* format;      // "mxfp4", "nvfp4", "fp4" (block scale not told), "fp8", ...
};

// The tables, in match order.
const std::vector<NameRule>& NameRules();
const std::vector<FormatRule>& FormatRules();

// Case-insensitive glob match of the whole `text` ('*' and '?').
bool GlobMatch(std::string_view pattern, std::string_view text);

// A lower-case glob with the run of plain characters it cannot match without (its longest
// one): most patterns of a rule table miss most names, and one substring search of the
// lowered name rejects them before the backtracking match runs (a tenth of a small trace's
// analysis went to GlobMatch).
struct PrefilteredGlob {
  std::string_view pattern;
  std::string literal;  // lower case; "" when the pattern has no plain character
  explicit PrefilteredGlob(std::string_view lower_case_pattern);
  // `lowered` is `text` in ASCII lower case.
  bool Match(std::string_view text, std::string_view lowered) const;
};

struct NameRuleMatch {
  std::string pipe_class;   // "" when no rule gave a class
  std::string role;         // "" when no rule gave a role
  std::string format;       // "unknown" when no rule matched
  std::string class_rule;   // pattern of the row that decided the class
  std::string class_why;
  std::string role_rule;
};

// Applies the tables to a (normalised, demangled) kernel name.
NameRuleMatch MatchNameRules(std::string_view name);

}  // namespace qprof::classify

#endif  // QPROF_ANALYSIS_CLASSIFY_NAME_RULES_H_
