#include "analysis/classify/launch_roles.h"

#include "analysis/classify/name_rules.h"
#include "proto/vocabulary.h"

namespace qprof::classify {

LaunchRole LaunchRoleResolver::For(const proto::Activity& a, const std::string& norm,
                                   const proto::LaunchContextStats& stacks, int trace) {
  LaunchRole out;
  // Stacks are interned per trace, so (trace, stack id) names one; NVTX paths by text.
  if (const uint32_t id = a.launch_context().stack(); id != 0) {
    const uint64_t key = (static_cast<uint64_t>(trace) << 32) | id;
    auto it = by_stack_.find(key);
    if (it == by_stack_.end()) it = by_stack_.emplace(key, MatchContext(FramesOf(a, stacks))).first;
    out.verdict = &it->second;
  } else if (!a.nvtx_path().empty()) {
    auto it = by_path_.find(a.nvtx_path());
    if (it == by_path_.end()) {
      it = by_path_.emplace(a.nvtx_path(), MatchContext(FramesOf(a, stacks))).first;
    }
    out.verdict = &it->second;
  } else {
    return out;
  }
  if (out.verdict->role.empty()) return out;
  // Our own kernels (and modelled activities) keep the role they were registered with.
  if (a.attribution().evidence() == evidence::kRegistry ||
      a.attribution().evidence() == evidence::kModelled || !a.kernel_id().empty()) {
    return out;
  }
  auto n = names_.find(norm);
  if (n == names_.end()) {
    NameInfo info;
    info.name_role = MatchNameRules(norm).role;
    info.registry = classifier_ != nullptr && classifier_->FindKnown(a, norm) != nullptr;
    n = names_.emplace(norm, std::move(info)).first;
  }
  out.changes_role = !n->second.registry && ContextRoleWins(*out.verdict, n->second.name_role);
  return out;
}

std::string LaunchRoleResolver::GroupKey(const std::string& norm, const LaunchRole& r) {
  if (!r.changes_role) return norm;
  return norm + '\x1f' + r.verdict->role;
}

}  // namespace qprof::classify
