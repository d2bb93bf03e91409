// Attribution of one kernel: role, pipe class, weight format and the evidence that
// decided, in DESIGN.md's order of trust:
//   1. measured: KernelMetrics.tensor_pipe_pct (CUPTI or ncu). A kernel whose tensor pipe
//      is active for at least kTensorPipeThresholdPct of its cycles is "tensor"; below it
//      the kernel is "simt" (or keeps comm/memory when weaker evidence said so).
//   2. sass: the kernel's machine code (analysis/sass) has tensor MMA instructions.
//   0. modelled: an activity of a modelled trace keeps its "modelled" attribution.
//   3. registry: our own kernels, from KnownKernel entries the caller passes in (the cli
//      builds them from kernels/registry; analysis does not depend on kernels/), or an
//      Attribution the collector already wrote with evidence "registry".
//   4. launch_context: the frame the kernel was launched from (context_rules.h) decides
//      the ROLE (never the pipe class) where the registry has no entry; the name rules
//      keep roles that are a function of the kernel itself (comm, router, ...).
//   5. name rules (analysis/classify/name_rules.h).
//   6. unknown: class "other", evidence "unknown"; the caller lists these kernels.
// Roles and formats come from the strongest source that has them (registry, launch
// context, then name rules); measured metrics and SASS tell the pipe, not the role.
#ifndef QPROF_ANALYSIS_CLASSIFY_CLASSIFY_H_
#define QPROF_ANALYSIS_CLASSIFY_CLASSIFY_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/classify/context_rules.h"
#include "proto/trace.pb.h"

namespace qprof::classify {

// Threshold on measured tensor-pipe activity. A kernel that issues no MMA shows 0%
// exactly; a tensor-core GEMM/GEMV in memory-bound decode still keeps the tensor pipe
// busy for several percent (H100, BF16 weights at batch 1: 2 FLOP per weight byte
// padded to m16 -> ~16 FLOP/B x 3.35 TB/s = ~54 TFLOPS = ~5% of 989). 1% separates the
// two with margin for counter noise and short kernels.
inline constexpr double kTensorPipeThresholdPct = 1.0;

// Prefix of every CUDA kernel qprof ships (kernels/). Only KnownKernel names with this
// prefix match by name; other entries match by kernel_id alone (see FindKnown).
inline constexpr char kOwnKernelPrefix[] = "qprof";  // "qprof_..." or "qprof::..."

// One of our kernels, as the cli describes it from kernels/registry.
struct KnownKernel {
  std::string cuda_name_prefix;  // demangled-name prefix of the CUDA kernel
  std::string kernel_id;         // "moe.slot_gemv.mxfp4"
  std::string role;
  std::string pipe_class;        // "simt", "tensor", ...
  std::string format;
  std::string compute_pipe;      // "simt_fp32", "tensor_bf16", ...
};

// What a kernel's machine code says, as the SASS reader (analysis/sass) found it. A plain
// struct, so that classification does not depend on the reader that runs cuobjdump: the
// pipeline (analysis/analyze.cc) hands each kernel's verdict over.
struct SassVerdict {
  std::string name;        // as the dump names it after "Function :" (usually mangled)
  std::string demangled;   // normalised (analysis/names/kernel_name.h)
  std::string pipe_class;  // "tensor", "simt", "other"
  std::string detail;      // "HMMA 24, FFMA 310, IMAD 95"
};

struct ClassifyOptions {
  std::vector<KnownKernel> known_kernels;
  std::vector<SassVerdict> sass;
  double tensor_pipe_threshold_pct = kTensorPipeThresholdPct;
};

class Classifier {
 public:
  explicit Classifier(ClassifyOptions options);

  // Attribution for a kernel activity. `normalised_name` is NormaliseKernelName(a.name)
  // (passed in so callers can cache it). Memcpy/memset activities are "memory".
  // `context`, when given, is the launch context's verdict (context_rules.h) for this
  // kernel's launches: it sets the role where ContextRoleWins says so.
  proto::Attribution Classify(const proto::Activity& a, const std::string& normalised_name,
                              const ContextVerdict* context = nullptr) const;

  // The registry entry matching a kernel (by kernel_id, then by a name prefix that starts
  // with kOwnKernelPrefix), or nullptr.
  const KnownKernel* FindKnown(const proto::Activity& a, const std::string& normalised_name) const;

 private:
  const SassVerdict* FindSass(const proto::Activity& a,
                                        const std::string& normalised_name) const;
  ClassifyOptions options_;
  std::unordered_map<std::string, size_t> sass_by_name_;  // mangled and normalised names
};

}  // namespace qprof::classify

#endif  // QPROF_ANALYSIS_CLASSIFY_CLASSIFY_H_
