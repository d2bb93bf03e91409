#include "analysis/classify/classify.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/classify/name_rules.h"
#include "proto/vocabulary.h"

namespace qprof::classify {

Classifier::Classifier(ClassifyOptions options) : options_(std::move(options)) {
  for (size_t i = 0; i < options_.sass.size(); ++i) {
    const auto& s = options_.sass[i];
    // First entry wins: several arches of one kernel classify alike in practice; the
    // detail names the arch that decided.
    sass_by_name_.emplace(s.name, i);
    sass_by_name_.emplace(s.demangled, i);
  }
}

const SassVerdict* Classifier::FindSass(const proto::Activity& a,
                                                  const std::string& norm) const {
  if (sass_by_name_.empty()) return nullptr;
  for (const std::string* key : {&a.mangled_name(), &a.name(), &norm}) {
    if (key->empty()) continue;
    auto it = sass_by_name_.find(*key);
    if (it != sass_by_name_.end()) return &options_.sass[it->second];
  }
  return nullptr;
}

const KnownKernel* Classifier::FindKnown(const proto::Activity& a, const std::string& norm) const {
  if (!a.kernel_id().empty()) {
    for (const KnownKernel& k : options_.known_kernels) {
      if (k.kernel_id == a.kernel_id()) return &k;
    }
  }
  // Names match only our own kernels ("qprof_...", "qprof::..."): a registry entry that records a
  // third-party kernel name (NCCL's all-reduce for comm.allreduce) must not turn every
  // third-party launch of that kernel into registry evidence; those keep their name rule.
  // Records our collector attributed carry a kernel_id and match above.
  for (const KnownKernel& k : options_.known_kernels) {
    if (k.cuda_name_prefix.rfind(kOwnKernelPrefix, 0) != 0) continue;
    if (a.name().rfind(k.cuda_name_prefix, 0) == 0 || norm.rfind(k.cuda_name_prefix, 0) == 0) {
      return &k;
    }
  }
  return nullptr;
}

namespace {

// Measured tensor-pipe activity beats everything; a measured count of tensor work (ncu
// counters without the pipe utilisation) decides the class too. `role_note` says where the
// role came from when a launch context decided it.
void ApplyMeasured(const proto::Activity& a, double threshold_pct, const std::string& role_note,
                   proto::Attribution* out) {
  if (a.has_metrics() && a.metrics().has_tensor_pipe_pct()) {
    double pct = a.metrics().tensor_pipe_pct();
    std::string src = a.metrics().source().empty() ? "metrics" : a.metrics().source();
    if (pct >= threshold_pct) {
      out->set_pipe_class(std::string(pipe::kTensor));
      out->set_evidence_detail(absl::StrFormat("tensor pipe active %.2f%% >= %.2g%% (%s)", pct,
                                              threshold_pct, src));
    } else {
      if (out->pipe_class() != pipe::kComm && out->pipe_class() != pipe::kMemory) {
        out->set_pipe_class(std::string(pipe::kSimt));
      }
      out->set_evidence_detail(absl::StrFormat("tensor pipe active %.2f%% < %.2g%% (%s)", pct,
                                              threshold_pct, src));
    }
    out->set_evidence(std::string(evidence::kMeasured));
    if (!role_note.empty()) out->set_evidence_detail(absl::StrCat(out->evidence_detail(), "; ", role_note));
  } else if (a.has_metrics() && a.metrics().has_tensor_count()) {
    // Only a count of tensor work was measured (ncu counters without the pipe utilisation):
    // any tensor-core instruction makes a tensor kernel, none a SIMT one.
    const double n = a.metrics().tensor_count();
    std::string src = a.metrics().source().empty() ? "metrics" : a.metrics().source();
    if (n > 0) {
      out->set_pipe_class(std::string(pipe::kTensor));
    } else if (out->pipe_class() != pipe::kComm && out->pipe_class() != pipe::kMemory) {
      out->set_pipe_class(std::string(pipe::kSimt));
    }
    out->set_evidence_detail(absl::StrFormat("%s = %.4g %s (%s)", a.metrics().tensor_count_metric(),
                                            n, n > 0 ? "tensor-pipe work" : "(no tensor-pipe work)",
                                            src));
    out->set_evidence(std::string(evidence::kMeasured));
    if (!role_note.empty()) out->set_evidence_detail(absl::StrCat(out->evidence_detail(), "; ", role_note));
  }
}

}  // namespace

proto::Attribution Classifier::Classify(const proto::Activity& a, const std::string& norm,
                                        const ContextVerdict* context) const {
  proto::Attribution out;
  if (a.kind() == proto::ACTIVITY_KIND_MEMCPY || a.kind() == proto::ACTIVITY_KIND_MEMSET) {
    out.set_role(std::string(role::kMemory));
    out.set_pipe_class(std::string(pipe::kMemory));
    out.set_format(std::string(format::kUnknown));
    out.set_evidence(std::string(evidence::kMeasured));
    out.set_evidence_detail(a.kind() == proto::ACTIVITY_KIND_MEMCPY ? "memcpy activity record"
                                                                    : "memset activity record");
    return out;
  }
  const NameRuleMatch rule = MatchNameRules(norm);
  // A modelled trace (analysis/model) attributes every activity from the decode plan with
  // evidence "modelled": keep it. Role, class and format may be filled from the registry or
  // a name rule, but no registry match, SASS or metric relabels a modelled figure.
  if (a.attribution().evidence() == evidence::kModelled) {
    out = a.attribution();
    const KnownKernel* k = FindKnown(a, norm);
    if (out.role().empty()) out.set_role(k ? k->role : rule.role.empty() ? std::string(role::kOther) : rule.role);
    if (out.pipe_class().empty()) {
      out.set_pipe_class(k ? k->pipe_class : rule.pipe_class.empty() ? std::string(pipe::kOther) : rule.pipe_class);
    }
    if (out.format().empty()) out.set_format(k ? k->format : rule.format);
    if (out.evidence_detail().empty()) out.set_evidence_detail("modelled from the decode plan");
    return out;
  }
  // Base: registry (already attributed, or a known kernel) > name rule > unknown.
  if (a.attribution().evidence() == evidence::kRegistry) {
    out = a.attribution();
  } else if (const KnownKernel* k = FindKnown(a, norm)) {
    out.set_role(k->role);
    out.set_pipe_class(k->pipe_class);
    out.set_format(k->format);
    out.set_evidence(std::string(evidence::kRegistry));
    out.set_evidence_detail(absl::StrCat("registry ", k->kernel_id));
  } else if (!rule.pipe_class.empty()) {
    out.set_pipe_class(rule.pipe_class);
    out.set_evidence(std::string(evidence::kNameRule));
    out.set_evidence_detail(absl::StrCat("rule ", rule.class_rule, ": ", rule.class_why));
  } else {
    out.set_pipe_class(std::string(pipe::kOther));
    out.set_evidence(std::string(evidence::kUnknown));
    out.set_evidence_detail("no measured metric, SASS, registry entry or name rule");
  }
  // Launch context: the role (and a format the name did not tell) from the frame that
  // launched the kernel; it outranks the name rules, never the registry.
  std::string role_note;
  const bool registry = out.evidence() == evidence::kRegistry;
  if (context != nullptr && !registry && ContextRoleWins(*context, rule.role)) {
    out.set_role(context->role);
    role_note = absl::StrCat("role from ", context->frame_kind, " frame '", context->frame,
                             "' (context rule ", context->rule, ": ", context->why, ")");
    const bool class_known = out.evidence() == evidence::kNameRule;
    out.set_evidence_detail(absl::StrCat(
        role_note, "; ",
        class_known ? absl::StrCat("class from rule ", rule.class_rule, ": ", rule.class_why)
                    : "pipe class unknown (no metric, SASS, registry entry or name rule)"));
    out.set_evidence(std::string(evidence::kLaunchContext));
  }
  if (out.role().empty()) out.set_role(rule.role.empty() ? std::string(role::kOther) : rule.role);
  if (out.format().empty()) out.set_format(rule.format);
  if (context != nullptr && !registry && !context->format.empty() &&
      (out.format() == format::kUnknown || out.format() == "fp4")) {
    out.set_format(context->format);
    out.set_evidence_detail(absl::StrCat(out.evidence_detail(), "; format ", context->format,
                                         " named by the launch context"));
  }

  // SASS: tells tensor vs not. It does not turn comm/memory kernels into SIMT.
  if (const SassVerdict* s = FindSass(a, norm)) {
    bool keep_kind = s->pipe_class != "tensor" &&
                     (out.pipe_class() == pipe::kComm || out.pipe_class() == pipe::kMemory);
    if (!keep_kind) out.set_pipe_class(s->pipe_class == "other" ? std::string(pipe::kOther)
                                                                : s->pipe_class);
    out.set_evidence(std::string(evidence::kSass));
    out.set_evidence_detail(absl::StrCat("SASS ", s->detail));
    if (!role_note.empty()) out.set_evidence_detail(absl::StrCat(out.evidence_detail(), "; ", role_note));
  }
  ApplyMeasured(a, options_.tensor_pipe_threshold_pct, role_note, &out);
  return out;
}

}  // namespace qprof::classify
