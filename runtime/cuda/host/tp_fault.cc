#include "runtime/cuda/host/tp_fault.h"

#include <cstdlib>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace qprof::runtime {

absl::StatusOr<TpFault> ParseTpFault(const std::string& spec, int tp) {
  TpFault f;
  f.spec = spec;
  if (spec.empty()) return f;
  const std::vector<std::string> parts = absl::StrSplit(spec, ':');
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("QPROF_TP_FAULT='", spec, "': ", why,
                                                   " (expected RANK:STEP:fail|hang|async)"));
  };
  if (parts.size() != 3) return bad("three fields separated by ':'");
  if (!absl::SimpleAtoi(parts[0], &f.rank) || f.rank < 0 || f.rank >= tp) {
    return bad(absl::StrCat("rank must be in 0..", tp - 1));
  }
  if (!absl::SimpleAtoi(parts[1], &f.step) || f.step < 0) return bad("step must be >= 0");
  if (parts[2] == "fail") {
    f.kind = TpFault::Kind::kFail;
  } else if (parts[2] == "hang") {
    f.kind = TpFault::Kind::kHang;
  } else if (parts[2] == "async") {
    f.kind = TpFault::Kind::kAsync;
  } else {
    return bad(absl::StrCat("unknown kind '", parts[2], "'"));
  }
  return f;
}

absl::StatusOr<TpFault> TpFaultFromEnv(int tp) {
  const char* v = std::getenv("QPROF_TP_FAULT");
  return ParseTpFault(v == nullptr ? "" : v, tp);
}

}  // namespace qprof::runtime
