// Dispatch by the registry: the kernel variants a run can choose, validated and resolved
// here, so that run validation, `--moe-backend auto`, the CLI's choices and its help text
// all say the same thing, and a new variant needs only its registry entry to be offered.
//
// MoE paths are the families "moe.<path>" with a CUDA implementation ("slot_gemv",
// "w4a16_mma", "fp4_mma"); the sparse-MLA variants the ids "attn.sparse_mla.<name>"
// ("simt", "mma"). An unknown or unsupported name is InvalidArgument naming the choices;
// nothing falls back silently.
#ifndef QPROF_KERNELS_REGISTRY_DISPATCH_H_
#define QPROF_KERNELS_REGISTRY_DISPATCH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/registry/registry.h"

namespace qprof::kernels {

// In registration order.
std::vector<std::string> MoePathNames();
std::vector<std::string> MlaVariantNames();

// "auto, slot_gemv, w4a16_mma, fp4_mma": the values --moe-backend / --mla-kernel take.
std::string MoeBackendChoices();
std::string MlaKernelChoices();

// Whether the variant's CUDA code runs on `arch` ("sm_90", "sm_120", "sm_120a"; the 'a'
// is ignored). `arch` "" (no GPU known, e.g. a CPU run): only variants built for every
// target count, so `auto` picks the portable variant there.
bool RunsOnArch(const KernelInfo& info, const std::string& arch);

// "sm_80+", "sm_120a": where a variant runs, for messages.
std::string ArchList(const KernelInfo& info);

// The MoE variant "moe.<path>.<format>" for --moe-backend `requested`:
//   "auto" (or "")  the lowest auto_preference among the format's paths that run on `arch`;
//   a path name     that path, if it runs on `arch` (any arch when `arch` is "": the CPU
//                   runs every path through its stand-in).
// InvalidArgument "unknown MoE backend 'x' (choices: auto, slot_gemv, ...)" for a name
// the registry does not have, or "MoE backend fp4_mma has no kernel for sm_90 (it runs
// on sm_120a; choices on sm_90: auto, slot_gemv, w4a16_mma)".
absl::StatusOr<const KernelInfo*> ResolveMoeVariant(const std::string& format,
                                                    const std::string& requested,
                                                    const std::string& arch);

// The sparse-MLA variant for --mla-kernel `requested`: "auto" takes the one on the MoE
// path's pipe class (SIMT with slot_gemv: the story's all-SIMT deployment; else tensor).
absl::StatusOr<const KernelInfo*> ResolveMlaVariant(const std::string& requested,
                                                    const KernelInfo& moe);

// The MoE path name of a MoE variant ("slot_gemv" for "moe.slot_gemv.mxfp4").
std::string MoePathOf(const KernelInfo& moe);

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_REGISTRY_DISPATCH_H_
