#include "analysis/classify/launch_roles.h"

#include "analysis/classify/name_rules.h"
#include "proto/vocabulary.h"

namespace qprof::classify {

LaunchRole LaunchRoleResolver::For(const proto::Activity& a, const std::string& norm) {
  LaunchRole out;
  // Signature of the stack: frame names and kinds joined by separators that names lack.
  key_.clear();
  if (a.launch_context().frames_size() > 0) {
    for (const proto::LaunchFrame& f : a.launch_context().frames()) {
      key_ += f.name();
      key_ += '\x1f';
      key_ += f.kind();
      key_ += '\x1e';
    }
  } else if (!a.nvtx_path().empty()) {
    key_ = "nvtx\x1e" + a.nvtx_path();
  } else {
    return out;
  }
  auto it = verdicts_.find(key_);
  if (it == verdicts_.end()) it = verdicts_.emplace(key_, MatchContext(FramesOf(a))).first;
  out.verdict = &it->second;
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
