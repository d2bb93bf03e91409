// Graph captures, and the join that gives the kernels of a CUDA (or HIP) graph replay the
// launch contexts they had when the graph was captured.
//
// In a graph replay every kernel's launch record is the one cudaGraphLaunch, so its launch
// context is the replay loop's, and roles fall back to kernel names. A profiler trace taken
// while the graphs were captured (SGLang/vLLM "capture traces", one file per batch size or
// all batch sizes in one) holds, for every launch made inside cudaStreamBeginCapture ...
// cudaStreamEndCapture, its runtime record and the CPU frames around it: the capture-time
// context. TraceLens joins the two the same way (Trace2Tree/trace_capture_merge).
//
// A GraphCaptureSet is what the capture traces hold: per captured graph its kernel launches
// in call order, each with its kernel name when the runtime recorded one (ROCm's
// hipLaunchKernel records it in args "kernel"; CUDA's cudaLaunchKernel does not) and its
// stack of frames (in the set's own LaunchContextStats tables, frames copied whole so
// anything an importer records on a frame travels with it).
//
// The join, per graph replay (the kernels of one graph launch):
//  - by kernel name, when the capture names its kernels: the captured launches are walked
//    in call order and each is paired with the earliest unpaired replay kernel of the same
//    name at the head of a stream (kernels of one stream run in launch order); a replay
//    kernel at a stream's head whose name the capture does not launch within the next
//    kLookahead launches is left unpaired (a kernel the capture lacks), and a captured
//    launch no stream head can take is skipped (one the replay lacks);
//  - by launch order and count, when it does not (CUDA) and the counts agree: on one
//    stream the i-th kernel is the i-th captured launch; on several (a shared expert or a
//    second micro-batch on a stream of its own) each stream is paired in launch order with
//    its share of the launches, the share read from the replay's start times and required
//    to keep every captured op call on one stream; otherwise nothing is paired.
// Several captures (one graph per batch size, or vLLM's piecewise pieces): each replay
// takes the capture that pairs the most of its kernels; among those, the one whose launch
// geometry (grid and block, where both sides record them) differs at the fewest kernels,
// then the one captured for the batch the replay's step range names (that batch, else the
// smallest above it, as engines pad a batch to a captured size), then the one whose
// geometry agrees at the most kernels, then the closest kernel count, then the first; the
// choice says why (ReplayMatch::chosen_by,
// GraphCaptureUse.chosen_by: when several are alike it says whether their op calls differ).
// Replays repeat, so results are cached per distinct replay (its streams' kernel name and
// geometry sequences): the cost is per distinct replay and capture, and memory is the
// captures' plus one entry per distinct replay.
// Paired kernels take the capture-time stack (copied into the replay trace's tables) and the
// kernel sets of the op calls that launched them at capture (the names the replay ran, per
// call, as the eager join lists them: the work rules pick the worker kernel from them);
// unpaired ones keep the graph launch's and are counted, with the reason, in the
// GraphCaptureJoin statistics of the replay trace's launch_context_stats.
#ifndef QPROF_ANALYSIS_IMPORTERS_COMMON_GRAPH_CAPTURE_H_
#define QPROF_ANALYSIS_IMPORTERS_COMMON_GRAPH_CAPTURE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/importers/common/launch_context.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

struct CapturedLaunch {
  uint32_t name = 0;   // GraphCaptureSet::names index; 0 = the runtime did not record it
  uint32_t stack = 0;  // index into GraphCaptureSet::tables.stacks (0 = no frames)
  // The innermost and outermost cpu_op calls enclosing the launch (ids unique within the
  // set, 0 = none) and the innermost's name (GraphCaptureSet::Op): what the calls' kernel
  // sets are built from once the launches are paired with replay kernels.
  uint32_t inner_call = 0, outer_call = 0;
  uint32_t inner_op = 0;
  // Launch geometry where the launch record gives it (ROCm's hipLaunchKernel args); all 0
  // when it does not (CUDA's runtime records).
  uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
};

struct GraphCapture {
  std::string label;                     // "capture.json #2 (capture_32_DECODE)"
  std::string file;                      // the capture trace's base name
  std::string annotation;                // the annotation open at its begin call ("" none)
  std::vector<CapturedLaunch> kernels;   // kernel launches, in call order
  bool named = false;                    // every launch names its kernel
  // The batch the graph was captured for, where the capture says it (CaptureBatch), and
  // what said it ("capture_32_DECODE", "file name bs_32_rank0.json.gz"); 0 = not said.
  uint32_t batch = 0;
  std::string batch_source;
};

// The batch a capture was taken for: from the annotation open at its begin call
// ("capture_32_DECODE", "capture_8192_PIECEWISE": the TraceLens SGLang/vLLM plugins; "bs=32",
// "bs_32"), else the capture file's name (SGLang writes bs_<N>_rank<R>.json.gz). 0 and ""
// when neither names one. `source` gets what said it.
uint32_t CaptureBatch(std::string_view annotation, std::string_view file_name,
                      std::string* source);

class GraphCaptureSet {
 public:
  GraphCaptureSet() { names_.emplace_back(); }
  std::vector<std::string> sources;      // the capture traces read
  proto::LaunchContextStats tables;      // frames and stacks of every capture
  std::vector<GraphCapture> captures;
  std::vector<std::string> warnings;     // what reading the capture traces could not use

  uint32_t InternName(const std::string& name);
  // 0 when no capture launches a kernel of that name.
  uint32_t FindName(const std::string& name) const;
  const std::string& Name(uint32_t id) const { return names_[id]; }
  // Names of the cpu_ops launches were made in (CapturedLaunch::inner_op); 0 = "".
  uint32_t InternOp(std::string_view op);
  const std::string& Op(uint32_t id) const { return ops_[id]; }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<std::string> ops_{std::string()};
  std::unordered_map<std::string, uint32_t> op_index_;
};

// One kernel of a graph replay.
struct ReplayKernel {
  uint32_t device = 0;
  uint64_t stream = 0;
  int64_t start = 0;
  uint32_t name_key = 0;   // the replay trace's own id for the name (equal names, equal keys)
  std::string_view name;
  uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};  // 0 = not recorded
  // The batch the replay's step range names (base/step_names.h: "step[DECODE bs=32]",
  // "execute_32_..."), the same for every kernel of a replay; 0 = not named.
  uint32_t step_batch = 0;
};

// What the join gives one replay kernel: the stack of its captured launch and the kernel
// sets of the op calls that launched it at capture (LaunchContext.stack, op_kernels and
// outer_op_kernels in the replay trace's tables); all 0 when it was not paired.
struct ReplayPairing {
  uint32_t stack = 0;
  uint32_t op_kernels = 0, outer_op_kernels = 0;
};

// The pairing of one replay with its best capture.
struct ReplayMatch {
  int capture = -1;             // the capture chosen; -1 when none pairs anything
  std::vector<int32_t> launch;  // per kernel (lane order): index into its kernels, -1 unpaired
  uint64_t paired = 0;
  uint32_t equal_candidates = 0;  // other captures that pair as many and fit as well
  std::string reason;           // why kernels went unpaired ("" when all paired)
  // How the capture was chosen when others paired as many kernels ("" when it alone did):
  // by launch geometry, by kernel count, or the first of several whose op calls are alike.
  std::string chosen_by;
  // Per kernel (lane order): its pairing in the replay trace's tables (JoinReplay fills).
  std::vector<ReplayPairing> pairing;
};

// Joins the replays of one trace: call JoinReplay per graph launch, Finish once.
class GraphCaptureJoiner {
 public:
  // Captured launches within this many calls ahead still count as "the capture has it".
  static constexpr size_t kLookahead = 64;

  GraphCaptureJoiner(const GraphCaptureSet* set, LaunchStackTable* table,
                     proto::GraphCaptureJoin* stats);
  // `out` gets, per kernel, the pairing (in `table`'s stats) of its captured launch, or
  // zeros.
  void JoinReplay(const std::vector<ReplayKernel>& kernels, std::vector<ReplayPairing>* out);
  void Finish();

 private:
  uint32_t SetName(const ReplayKernel& k);
  uint32_t TableStack(uint32_t set_stack);
  // The stacks and op-call kernel sets of a match's paired kernels (`ordered`: lane order).
  void FillPairing(const std::vector<ReplayKernel>& ordered, ReplayMatch* m);

  const GraphCaptureSet* set_;
  LaunchStackTable* table_;
  proto::GraphCaptureJoin* stats_;
  std::unordered_map<uint32_t, uint32_t> names_;         // replay name key -> set name
  std::unordered_map<uint32_t, uint32_t> stacks_;        // set stack -> table stack
  KernelSetTable kernel_sets_;                           // in the replay trace's tables
  std::unordered_map<std::string, ReplayMatch> cache_;   // by replay signature
  std::vector<uint32_t> set_names_;                      // scratch
  struct Use {
    uint64_t replays = 0, paired = 0, unpaired = 0;
    uint32_t equal_candidates = 0;
    std::string chosen_by;
  };
  std::map<int, Use> uses_;                              // by capture (-1: none)
  std::map<std::string, uint64_t> reasons_;              // unpaired kernels per reason
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_COMMON_GRAPH_CAPTURE_H_
