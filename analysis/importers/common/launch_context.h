// Launch contexts: the frames open on the thread that launched a kernel, at the moment of
// its launch call (Activity.launch_context). Importers feed frames (Kineto cpu_op,
// python_function and user_annotation events; nsys NVTX push/pop ranges) and launch points
// (the runtime/driver launch event found through the kernel's correlation id: its thread,
// time and API name), then Resolve() sweeps each thread in time order, as HTA and Kineto
// relate a GPU kernel to the CPU op that launched it.
//
// Contracts:
//  - A frame encloses a launch when start <= launch time < end (end = kOpenEnd if the
//    source never closed it), whether or not the frames nest: Kineto's user annotations
//    (ProfilerStep#N) start inside a Python frame and outlive it, so frames that cross are
//    dropped from the stack once they have ended, wherever they sit in it.
//  - Stacks are stored once per trace: TraceHeader.launch_context_stats holds the distinct
//    frames and stacks (stacks[0] empty), each activity the index of its stack. Frames are
//    outermost first; at most kMaxFrames innermost frames are kept (the count of the others
//    goes to frames_dropped). Two kinds of Python frames carry no
//    information and are left out before counting: torch's module-call plumbing
//    ("torch/nn/modules/module.py(...): _call_impl" / "_wrapped_call_impl") and
//    "<built-in method ...>" entries (the aten op that follows names the call).
//  - A CUDA-graph launch (API name contains "GraphLaunch") gives every kernel of the graph
//    the graph launch's context, with graph_launch set.
//  - Resolve(..., only_if_empty = true) writes only activities that have no stack yet:
//    used for GPU-side annotations, which stand in when the CPU side is missing. Several
//    builders may resolve into one trace: each adds to the same frame and stack tables.
#ifndef QPROF_ANALYSIS_IMPORTERS_COMMON_LAUNCH_CONTEXT_H_
#define QPROF_ANALYSIS_IMPORTERS_COMMON_LAUNCH_CONTEXT_H_

#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/importers/common/import_util.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

class LaunchContextBuilder {
 public:
  static constexpr int kMaxFrames = 24;
  static constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();

  // `kind` is a LaunchFrame.kind ("cpu_op", "python_function", "user_annotation",
  // "gpu_user_annotation", "nvtx"); names are interned, so repeated names cost one copy.
  void AddFrame(ThreadKey thread, int64_t start, int64_t end, std::string_view name,
                std::string_view kind);
  // A launch of activity `activity_index` by the call `api` ("cudaLaunchKernel") on
  // `thread` at `time`.
  void AddLaunch(ThreadKey thread, int64_t time, int activity_index, std::string_view api);
  // Sets Activity.launch_context, and in `stats` (which must be the trace header's
  // launch_context_stats when stacks are to be read back) the frame and stack tables and
  // the counts with_context, graph_launches, frames_dropped. Call once.
  void Resolve(proto::Trace* trace, proto::LaunchContextStats* stats, bool only_if_empty = false);

  size_t frame_count() const { return frames_.size(); }

  // True for the Python frames left out (see the contracts above).
  static bool IsPlumbingFrame(std::string_view name);

 private:
  uint32_t Intern(std::string_view s);
  uint32_t GlobalFrame(uint32_t name, uint32_t kind, proto::LaunchContextStats* stats);
  uint32_t GlobalStack(const std::vector<uint32_t>& frames, uint32_t dropped,
                       proto::LaunchContextStats* stats);
  struct Frame {
    ThreadKey thread;
    int64_t start;
    int64_t end;
    uint32_t name;
    uint32_t kind;
  };
  struct Launch {
    ThreadKey thread;
    int64_t time;
    int index;
    uint32_t api;
  };
  std::deque<std::string> strings_;  // stable: ids_ keys view into it
  std::unordered_map<std::string_view, uint32_t> ids_;
  std::unordered_map<uint64_t, uint32_t> global_frames_;  // (name, kind) -> stats frame index
  std::unordered_map<std::string, uint32_t> global_stacks_;
  std::vector<Frame> frames_;
  std::vector<Launch> launches_;
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_COMMON_LAUNCH_CONTEXT_H_
