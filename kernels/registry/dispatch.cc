#include "kernels/registry/dispatch.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/vocabulary.h"

namespace qprof::kernels {
namespace {

const std::string kMoePrefix = "moe.";
const std::string kMlaPrefix = "attn.sparse_mla.";

bool IsMoePath(const KernelInfo& k) {
  return k.role == role::kMoeExperts && k.has_cuda && k.family.rfind(kMoePrefix, 0) == 0;
}

// 90 for "sm_90", "sm_90a", "sm_90+"; -1 when not of that form.
int ComputeCapability(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) return -1;
  std::string digits = arch.substr(3);
  while (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f' || digits.back() == '+')) {
    digits.pop_back();
  }
  int cc = 0;
  return absl::SimpleAtoi(digits, &cc) ? cc : -1;
}

std::string WithAuto(const std::vector<std::string>& names) {
  return absl::StrCat("auto, ", absl::StrJoin(names, ", "));
}

// The paths of `format` that run on `arch`, by auto preference.
std::vector<const KernelInfo*> MoeCandidates(const std::string& format, const std::string& arch) {
  std::vector<const KernelInfo*> out;
  for (const KernelInfo& k : KernelRegistry::Global().All()) {
    if (IsMoePath(k) && k.format == format && RunsOnArch(k, arch)) out.push_back(&k);
  }
  std::stable_sort(out.begin(), out.end(), [](const KernelInfo* a, const KernelInfo* b) {
    return a->auto_preference < b->auto_preference;
  });
  return out;
}

}  // namespace

std::vector<std::string> MoePathNames() {
  std::vector<std::string> out;
  for (const KernelInfo& k : KernelRegistry::Global().All()) {
    if (!IsMoePath(k)) continue;
    const std::string path = MoePathOf(k);
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
  return out;
}

std::vector<std::string> MlaVariantNames() {
  std::vector<std::string> out;
  for (const KernelInfo& k : KernelRegistry::Global().All()) {
    if (k.role == role::kAttnSparseMla && k.id.rfind(kMlaPrefix, 0) == 0) {
      out.push_back(k.id.substr(kMlaPrefix.size()));
    }
  }
  return out;
}

std::string MoeBackendChoices() { return WithAuto(MoePathNames()); }
std::string MlaKernelChoices() { return WithAuto(MlaVariantNames()); }

bool RunsOnArch(const KernelInfo& info, const std::string& arch) {
  const int cc = ComputeCapability(arch);
  for (const std::string& a : info.cuda_archs) {
    const bool and_later = !a.empty() && a.back() == '+';
    if (arch.empty()) {
      if (and_later) return true;  // portable: built for every target
      continue;
    }
    const int need = ComputeCapability(a);
    if (need < 0 || cc < 0) continue;
    if (and_later ? cc >= need : cc == need) return true;
  }
  return false;
}

std::string ArchList(const KernelInfo& info) { return absl::StrJoin(info.cuda_archs, ", "); }

std::string MoePathOf(const KernelInfo& moe) {
  return moe.family.substr(std::min(moe.family.size(), kMoePrefix.size()));
}

absl::StatusOr<const KernelInfo*> ResolveMoeVariant(const std::string& format,
                                                    const std::string& requested,
                                                    const std::string& arch) {
  if (requested.empty() || requested == "auto") {
    const std::vector<const KernelInfo*> c = MoeCandidates(format, arch);
    if (c.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("no MoE path for format '", format,
                                                     "' runs on ", arch.empty() ? "any GPU" : arch));
    }
    return c.front();
  }
  const KernelInfo* k =
      KernelRegistry::Global().Find(absl::StrCat(kMoePrefix, requested, ".", format));
  if (k == nullptr || !IsMoePath(*k)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown MoE backend '", requested,
                                                   "' (choices: ", MoeBackendChoices(), ")"));
  }
  if (!arch.empty() && !RunsOnArch(*k, arch)) {
    std::vector<std::string> here;  // in registration order, like MoeBackendChoices
    for (const std::string& path : MoePathNames()) {
      const KernelInfo* c = KernelRegistry::Global().Find(absl::StrCat(kMoePrefix, path, ".", format));
      if (c != nullptr && RunsOnArch(*c, arch)) here.push_back(path);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "MoE backend ", requested, " has no kernel for ", arch, " (it runs on ", ArchList(*k),
        "; choices on ", arch, ": ", WithAuto(here), ")"));
  }
  return k;
}

absl::StatusOr<const KernelInfo*> ResolveMlaVariant(const std::string& requested,
                                                    const KernelInfo& moe) {
  const KernelRegistry& r = KernelRegistry::Global();
  if (requested.empty() || requested == "auto") {
    for (const std::string& name : MlaVariantNames()) {
      const KernelInfo* k = r.Find(absl::StrCat(kMlaPrefix, name));
      if (k->gpu_pipe_class == moe.gpu_pipe_class) return k;
    }
    return absl::InternalError(absl::StrCat("no sparse-MLA variant on the ", moe.gpu_pipe_class,
                                            " pipe of MoE path ", MoePathOf(moe)));
  }
  const KernelInfo* k = r.Find(absl::StrCat(kMlaPrefix, requested));
  if (k == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown MLA kernel '", requested,
                                                   "' (choices: ", MlaKernelChoices(), ")"));
  }
  return k;
}

}  // namespace qprof::kernels
