// Context rules: the role a kernel plays, read from where it was launched (its launch
// context, Activity.launch_context; for our own traces the NVTX path). Names mislead: a
// TRT-LLM FP8 `bmm_*` GEMM launched inside `vllm::moe_forward` is an MoE expert GEMM, not a
// dense GEMM, and `_tiled_sparse_decode_kernel` says nothing a name rule can read. The
// frame that launched it does.
//
// ONE table (context_rules.cc), read top to bottom like the name rules: a frame's role is
// the first row whose glob (case-insensitive, over the whole frame name) matches it. The
// launch's role comes from the innermost frame that matches a *strong* row; only when no
// frame matches a strong row does the innermost *weak* row count. Weak rows are the
// framework's plain ops (aten::mm, aten::addmm, aten::bmm, ...): they say "a GEMM" and
// nothing about which model part, so any named part further out wins over them.
// torch.autograd.profiler.emit_nvtx names ("aten::mm, op_id = 12, sizes = ...") are matched
// on the text before ", op_id" / ", seq".
//
// Op identity comes before context: when the op that launched the kernel (the innermost
// cpu_op, or an emit_nvtx range with sizes) is a GEMM or a convolution recorded with its
// shapes, the kernel does that op's work whatever module it sits in, so only rows whose role
// is a GEMM's (GEMM, MoE experts or router, attention, indexer) may decide: vLLM's LM head
// runs its [32,2880]x[2880,201088] GEMM inside vocab_parallel_embedding.py, a ViT's patch
// embedding is a convolution; neither is an embedding lookup. Context rules choose among the
// op's roles, never against it.
//
// Trust (DESIGN.md): measured > sass > registry > launch_context > name_rule. The context
// decides the ROLE only; the pipe class still comes from metrics, SASS, the registry or the
// name rules. It never overrides the registry's role, and it leaves alone a name-rule role
// that is a function of the kernel itself (communication, router, indexer, norm, sampling,
// embedding): a NCCL kernel launched inside an MoE layer is still communication. It may
// add the weight format when a frame names one (mxfp4, nvfp4, fp8) and the kernel name
// did not, or only said "fp4".
#ifndef QPROF_ANALYSIS_CLASSIFY_CONTEXT_RULES_H_
#define QPROF_ANALYSIS_CLASSIFY_CONTEXT_RULES_H_

#include <string>
#include <string_view>
#include <vector>

#include "proto/trace.pb.h"

namespace qprof::classify {

struct ContextRule {
  const char* pattern;  // glob, lower case
  const char* role;     // proto/vocabulary.h role
  bool weak;            // a plain framework op: used only when no strong row matched
  const char* why;      // one line, shown in evidence_detail
};

const std::vector<ContextRule>& ContextRules();

// A frame of a launch context (from Activity.launch_context, or an NVTX path split on '/').
struct Frame {
  std::string name;
  std::string kind;         // "cpu_op", "python_function", "user_annotation", "nvtx", ...
  bool has_shapes = false;  // the op recorded its input shapes (Kineto "Input Dims")
};

// The frames of a launch, outermost first: its launch_context stack (looked up in the
// trace header's tables, `stacks`) when it has one, else the NVTX path's components (kind
// "nvtx"; our traces and Kineto user annotations).
std::vector<Frame> FramesOf(const proto::Activity& a, const proto::LaunchContextStats& stacks);

// The decision for one context.
struct ContextVerdict {
  std::string role;        // "" when no row matched any frame
  std::string format;      // "mxfp4" / "nvfp4" / "fp8" when a frame names one, else ""
  std::string frame;       // the frame that decided, "vllm::moe_forward"
  std::string frame_kind;  // its kind
  std::string rule;        // the row's pattern
  std::string why;
  bool weak = false;
  // The launching op is a GEMM or convolution with shapes (see above): the role is one of a
  // GEMM's, and frames that named another were passed over.
  bool gemm_op = false;
  // Innermost meaningful frame, as reports show it: "vllm::moe_forward (cpu_op)",
  // "sparse_decode.py(88): sparse_decode_fwd (python)" (Python frames without directories).
  std::string innermost;
};

ContextVerdict MatchContext(const std::vector<Frame>& frames);

// Whether a role is one a GEMM or convolution can play (the op identity rule above).
bool IsGemmRole(std::string_view role);

// Whether a context role replaces the role the name rules gave (see the header comment):
// not for the kernel-intrinsic roles, and a weak row only fills an empty or "other" role.
bool ContextRoleWins(const ContextVerdict& v, std::string_view name_role);

// The text a frame is matched on: emit_nvtx decorations removed.
std::string_view FrameKey(std::string_view name);

}  // namespace qprof::classify

#endif  // QPROF_ANALYSIS_CLASSIFY_CONTEXT_RULES_H_
