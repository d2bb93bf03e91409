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
//  - by launch order and count, when it does not: the i-th kernel of a one-stream replay is
//    the i-th captured launch, when the counts agree; otherwise nothing is paired (a
//    multi-stream replay has no launch order to follow without names).
// Several captures (one graph per batch size): each replay takes the capture that pairs the
// most of its kernels, ties to the one whose kernel count is closest, then the first; how
// many others fit equally is recorded. Replays repeat, so results are cached per distinct
// replay (its streams' kernel name sequences): the cost is per distinct replay and capture,
// and memory is the captures' plus one entry per distinct replay.
// Paired kernels take the capture-time stack (copied into the replay trace's tables);
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
};

struct GraphCapture {
  std::string label;                     // "capture.json #2 (capture_32_DECODE)"
  std::vector<CapturedLaunch> kernels;   // kernel launches, in call order
  bool named = false;                    // every launch names its kernel
};

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

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> index_;
};

// One kernel of a graph replay.
struct ReplayKernel {
  uint32_t device = 0;
  uint64_t stream = 0;
  int64_t start = 0;
  uint32_t name_key = 0;   // the replay trace's own id for the name (equal names, equal keys)
  std::string_view name;
};

// The pairing of one replay with its best capture.
struct ReplayMatch {
  int capture = -1;             // the capture chosen; -1 when none pairs anything
  std::vector<int32_t> launch;  // per kernel (lane order): index into its kernels, -1 unpaired
  uint64_t paired = 0;
  uint32_t equal_candidates = 0;  // other captures that pair as many
  std::string reason;           // why kernels went unpaired ("" when all paired)
};

// Joins the replays of one trace: call JoinReplay per graph launch, Finish once.
class GraphCaptureJoiner {
 public:
  // Captured launches within this many calls ahead still count as "the capture has it".
  static constexpr size_t kLookahead = 64;

  GraphCaptureJoiner(const GraphCaptureSet* set, LaunchStackTable* table,
                     proto::GraphCaptureJoin* stats);
  // `stacks` gets, per kernel, the stack (in `table`) of its captured launch, or 0.
  void JoinReplay(const std::vector<ReplayKernel>& kernels, std::vector<uint32_t>* stacks);
  void Finish();

 private:
  uint32_t SetName(const ReplayKernel& k);
  uint32_t TableStack(uint32_t set_stack);

  const GraphCaptureSet* set_;
  LaunchStackTable* table_;
  proto::GraphCaptureJoin* stats_;
  std::unordered_map<uint32_t, uint32_t> names_;         // replay name key -> set name
  std::unordered_map<uint32_t, uint32_t> stacks_;        // set stack -> table stack
  std::unordered_map<std::string, ReplayMatch> cache_;   // by replay signature
  std::vector<uint32_t> set_names_;                      // scratch
  struct Use {
    uint64_t replays = 0, paired = 0, unpaired = 0;
    uint32_t equal_candidates = 0;
  };
  std::map<int, Use> uses_;                              // by capture (-1: none)
  std::map<std::string, uint64_t> reasons_;              // unpaired kernels per reason
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_COMMON_GRAPH_CAPTURE_H_
