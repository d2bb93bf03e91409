#include "runtime/cuda/host/tp_fault.h"

#include <cstdlib>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace qprof::runtime::cuda {

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

absl::StatusOr<TpEnvironment> ReadTpEnvironment(
    const std::function<const char*(const char*)>& getenv, int tp) {
  TpEnvironment env;
  if (const char* v = getenv("QPROF_TP_DEVICES"); v != nullptr && v[0] != '\0') {
    for (absl::string_view part : absl::StrSplit(v, ',')) {
      int d = -1;
      if (!absl::SimpleAtoi(part, &d) || d < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("QPROF_TP_DEVICES='", v, "': a comma list of GPU numbers"));
      }
      env.devices.push_back(d);
    }
    if (static_cast<int>(env.devices.size()) != tp) {
      return absl::InvalidArgumentError(absl::StrCat("QPROF_TP_DEVICES='", v, "' names ",
                                                     env.devices.size(), " GPUs for --tp ", tp));
    }
  }
  if (const char* v = getenv("QPROF_TP_ALLREDUCE"); v != nullptr && v[0] != '\0') {
    const std::string s = v;
    if (s != "host" && s != "nccl") {
      return absl::InvalidArgumentError(
          absl::StrCat("QPROF_TP_ALLREDUCE='", s, "': host or nccl"));
    }
    env.host_all_reduce = s == "host";
  }
  if (const char* v = getenv("QPROF_TP_TIMEOUT_S"); v != nullptr && v[0] != '\0') {
    double secs = 0;
    if (!absl::SimpleAtod(v, &secs) || secs <= 0 || secs > 86400) {
      return absl::InvalidArgumentError(
          absl::StrCat("QPROF_TP_TIMEOUT_S='", v, "': seconds, > 0"));
    }
    env.timeout_ms = static_cast<int>(secs * 1000);
  }
  const char* f = getenv("QPROF_TP_FAULT");
  auto fault = ParseTpFault(f == nullptr ? "" : f, tp);
  if (!fault.ok()) return fault.status();
  env.fault = *fault;
  return env;
}

}  // namespace qprof::runtime::cuda
