// Per-launch context verdicts for the analyzer, cached: launches with the same frames (the
// same operator stack) share one verdict, so a trace of a million launches matches the
// context rules once per distinct stack, not once per launch.
//
// The analyzer groups launches by normalised kernel name AND by the role their context
// gives them (GroupKey): the same kernel launched from `vllm::moe_forward` and from a plain
// `aten::mm` becomes two kernel rows, one moe.experts and one gemm.dense, each with its own
// time. Launches whose context does not change the role (or that have none) stay in the
// name's row.
#ifndef QPROF_ANALYSIS_CLASSIFY_LAUNCH_ROLES_H_
#define QPROF_ANALYSIS_CLASSIFY_LAUNCH_ROLES_H_

#include <string>
#include <unordered_map>

#include "analysis/classify/classify.h"
#include "analysis/classify/context_rules.h"
#include "proto/trace.pb.h"

namespace qprof::classify {

struct LaunchRole {
  const ContextVerdict* verdict = nullptr;  // null when the launch has no frames
  bool changes_role = false;                // the verdict's role replaces the name's
};

class LaunchRoleResolver {
 public:
  explicit LaunchRoleResolver(const Classifier* classifier) : classifier_(classifier) {}

  // The verdict for one launch of the kernel whose normalised name is `norm`, in trace
  // number `trace` whose header holds the stack tables `stacks`. Pointers stay valid for
  // the resolver's lifetime.
  LaunchRole For(const proto::Activity& a, const std::string& norm,
                 const proto::LaunchContextStats& stacks, int trace);

  // Group key: the name, plus the context role when it changes the role.
  static std::string GroupKey(const std::string& norm, const LaunchRole& r);

 private:
  struct NameInfo {
    std::string name_role;  // role the name rules give ("" = none)
    bool registry = false;  // one of our kernels by name
  };
  const Classifier* classifier_;
  std::unordered_map<uint64_t, ContextVerdict> by_stack_;    // (trace, stack id)
  std::unordered_map<std::string, ContextVerdict> by_path_;  // NVTX paths
  std::unordered_map<std::string, NameInfo> names_;
};

}  // namespace qprof::classify

#endif  // QPROF_ANALYSIS_CLASSIFY_LAUNCH_ROLES_H_
