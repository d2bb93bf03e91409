#include "analysis/model/kernel_facts.h"

#include <string>

namespace qprof::model {

const KernelFacts* FindKernelFacts(std::string_view kernel, std::string_view arch) {
  // "sm_120" and "sm_120a" name the same SM; the table keeps the build's spelling.
  auto base = [](std::string_view a) {
    return !a.empty() && a.back() == 'a' ? a.substr(0, a.size() - 1) : a;
  };
  for (const KernelFacts& f : AllKernelFacts()) {
    if (kernel == f.kernel && base(arch) == base(f.arch)) return &f;
  }
  return nullptr;
}

double IssueSlotsPerFma(const KernelFacts& f) {
  return f.fma_loop_ffma > 0 ? static_cast<double>(f.fma_loop_instructions) / f.fma_loop_ffma
                              : 0.0;
}

}  // namespace qprof::model
