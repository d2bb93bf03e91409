// Launch contexts: the frames open on the thread that launched a kernel, at the moment of
// its launch call (Activity.launch_context). Importers feed frames (Kineto cpu_op,
// python_function and user_annotation events; nsys NVTX push/pop ranges), call Build() once,
// and then ask for the context of each launch point (the runtime/driver launch event found
// through the kernel's correlation id: its thread, time and API name) one at a time, in any
// order, as they stream kernels, the way HTA and Kineto relate a GPU kernel to the CPU op
// that launched it. Memory is the frames' (one entry per frame, names interned) plus a
// checkpoint of the open frames every kCheckpoint frames of a thread, never per launch.
//
// Contracts:
//  - A frame encloses a launch when start <= launch time < end (end = kOpenEnd if the
//    source never closed it), whether or not the frames nest: Kineto's user annotations
//    (ProfilerStep#N) start inside a Python frame and outlive it, so frames that cross are
//    dropped from the stack once they have ended, wherever they sit in it. The stack is
//    ordered outermost first: by start, longer first at equal starts, then source order.
//  - Stacks are stored once per trace: LaunchStackTable interns the distinct frames and
//    stacks into TraceHeader.launch_context_stats (stacks[0] empty), each activity holds
//    the index of its stack. At most kMaxFrames innermost frames are kept (the count of the
//    others goes to frames_dropped), and a serving engine's step annotation however far out
//    it sits (a user annotation named "execute_...", "step[...", "prefill[...", "decode[...":
//    the attention work rules read the step's sequence lengths from it,
//    analysis/work/iteration_annotation.h). Two kinds of Python frames carry no information and
//    are left out before counting: torch's module-call plumbing
//    ("torch/nn/modules/module.py(...): _call_impl" / "_wrapped_call_impl") and
//    "<built-in method ...>" entries (the aten op that follows names the call).
//  - A CUDA-graph launch (API name contains "GraphLaunch") gives every kernel of the graph
//    the graph launch's context, with graph_launch set.
//  - Several builders may intern into one table (Kineto: CPU frames, then GPU annotations
//    standing in where the CPU side is missing).
//  - Frames may carry the shapes their op was called with (Kineto record_shapes: "Input
//    Dims", "Input type", "Concrete Inputs" as compact JSON arrays, LaunchFrame fields 60-62):
//    frames differ by them, so a stack is one op call's shapes. ContextAt also names the
//    innermost and outermost cpu_op frame instances (one call each), so an importer can
//    list the kernels each call launched (LaunchContextStats.kernel_sets).
#ifndef QPROF_ANALYSIS_IMPORTERS_COMMON_LAUNCH_CONTEXT_H_
#define QPROF_ANALYSIS_IMPORTERS_COMMON_LAUNCH_CONTEXT_H_

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/importers/common/import_util.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

// The frame and stack tables of one trace (a LaunchContextStats it does not own), interned.
class LaunchStackTable {
 public:
  // `stats` must outlive the table; entries already in it are indexed.
  explicit LaunchStackTable(proto::LaunchContextStats* stats);
  // `shapes`: "" or the packed arrays of PackShapes.
  uint32_t Frame(const std::string& name, const std::string& kind, std::string_view shapes = "");
  // Index of the stack of `frames` (table indices, outermost first) with `dropped` outer
  // frames left out; 0 for no frames. *added says whether it is new.
  uint32_t Stack(const std::vector<uint32_t>& frames, uint32_t dropped, bool* added = nullptr);
  // Interns stack `stack` of another trace's tables `from` (graph captures): its frames
  // (a frame new to this table is copied whole, every field, so what an importer records on
  // a frame travels with it) and the stack; 0 when `stack` is 0 or not in `from`.
  uint32_t CopyStack(const proto::LaunchContextStats& from, uint32_t stack);
  proto::LaunchContextStats* stats() const { return stats_; }

 private:
  proto::LaunchContextStats* stats_;
  std::map<std::tuple<std::string, std::string, std::string>, uint32_t> frames_;
  std::unordered_map<std::string, uint32_t> stacks_;
};

// Kineto "Input Dims", "Input type" and "Concrete Inputs" (compact JSON arrays, "" when
// absent) packed into one string for AddFrame, and back into a LaunchFrame.
std::string PackShapes(std::string_view dims, std::string_view types, std::string_view concrete);
void UnpackShapes(std::string_view packed, proto::LaunchFrame* frame);

// An emit_nvtx range name without its per-call numbers: "aten::mm, seq = 3, op_id = 7,
// sizes = [[8, 4], [4, 2]], input_op_ids = [(6,0)]" -> "aten::mm, sizes = [[8, 4], [4, 2]]".
// The numbers differ on every call; as frame names they would make a frame and a stack per
// launch. Other names are returned unchanged.
std::string StripNvtxCallNumbers(std::string_view name);

// Whether a "Concrete Inputs" value of `op` is kept in its frame. Flags ("True", "False")
// and lists ("[1, 1]": strides, paddings, dims) always; any value of attention (MLA
// included), scaled-mm, convolution, normalisation and MoE ops (causal flags, mask types,
// out_dtype, max sequence lengths, V head sizes, group counts);
// other values (positions, indices, fill values) vary from call to call and would make a
// frame, and a stack, per call, so they are blanked.
bool KeepConcreteValue(std::string_view op, std::string_view value);

// The kernels launched by each op call (cpu_op instance), interned into a trace's
// LaunchContextStats.kernel_sets (index 0 = not recorded).
class KernelSetTable {
 public:
  explicit KernelSetTable(proto::LaunchContextStats* stats) : stats_(stats) {}
  // `kernels`: (kernel name, innermost op name) per launch of one call, in any order.
  uint32_t Intern(std::vector<std::pair<std::string_view, std::string_view>>* kernels);
  static constexpr size_t kMaxKernels = 256;  // larger calls are "not recorded" (0)

 private:
  proto::LaunchContextStats* stats_;
  std::unordered_map<std::string, uint32_t> sets_;
};

class LaunchContextBuilder {
 public:
  static constexpr int kMaxFrames = 24;
  static constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();
  static constexpr size_t kCheckpoint = 32;

  // `kind` is a LaunchFrame.kind ("cpu_op", "python_function", "user_annotation",
  // "gpu_user_annotation", "nvtx"); names are interned, so repeated names cost one copy.
  // `shapes`: PackShapes of a cpu_op recorded with shapes, else "".
  void AddFrame(ThreadKey thread, int64_t start, int64_t end, std::string_view name,
                std::string_view kind, std::string_view shapes = "");
  // The same by the ids of its strings, for an importer that maps each distinct string to
  // its id once (Kineto: by a hash computed where the event was decoded) rather than have
  // the builder hash it again for every frame; the plumbing frames (IsPlumbingFrame) are
  // the importer's to leave out. `shapes` is the id of "" when the frame has none.
  uint32_t InternString(std::string_view s);
  void AddInternedFrame(ThreadKey thread, int64_t start, int64_t end, uint32_t name,
                        uint32_t kind, uint32_t shapes);
  // The cpu_op calls enclosing the last ContextAt's launch: stable ids of the innermost and
  // outermost cpu_op frame instances (0 = none) and the innermost's name (the builder's
  // interned copy: equal names view the same bytes, for as long as the builder lives).
  struct OpCalls {
    uint64_t inner = 0, outer = 0;
    std::string_view inner_name;
  };
  const OpCalls& last_op_calls() const { return last_op_calls_; }
  // Whether any frame added carried shapes.
  bool has_shapes() const { return has_shapes_; }
  // Orders each thread's frames; call once, after the last AddFrame and before ContextAt.
  void Build();
  // The context of a launch by the call `api` ("cudaLaunchKernel"; "" when unknown) on
  // `thread` at `time`: sets ctx->stack (interned into `table`), ctx->launch_api and
  // ctx->graph_launch. For kernels (`kernel`), counts with_context, frames_dropped and
  // graph_launches into the table's stats. Returns true when the stack is new to the table.
  bool ContextAt(ThreadKey thread, int64_t time, std::string_view api, bool kernel,
                 LaunchStackTable* table, proto::LaunchContext* ctx);

  // Batch form for traces in memory: launches of activities by index, then Resolve() sets
  // their Activity.launch_context (only those without a stack when only_if_empty). Calls
  // Build() itself.
  void AddLaunch(ThreadKey thread, int64_t time, int activity_index, std::string_view api);
  void Resolve(proto::Trace* trace, proto::LaunchContextStats* stats, bool only_if_empty = false);

  size_t frame_count() const { return frame_count_; }

  // True for the Python frames left out (see the contracts above).
  static bool IsPlumbingFrame(std::string_view name);

 private:
  struct Frame {
    int64_t start;
    int64_t end;
    uint32_t name;
    uint32_t kind;
    uint32_t shapes;  // interned PackShapes text; empty_id_ when none
  };
  struct TableKey {
    uint32_t name, kind, shapes;
    bool operator==(const TableKey& o) const {
      return name == o.name && kind == o.kind && shapes == o.shapes;
    }
  };
  struct TableKeyHash {
    size_t operator()(const TableKey& k) const {
      return std::hash<uint64_t>()((uint64_t{k.name} << 32 | k.kind) ^ (uint64_t{k.shapes} * 0x9E3779B97F4A7C15ull));
    }
  };
  struct Thread {
    std::vector<Frame> frames;  // by (start, longer first), stable
    // For frame index p = k * kCheckpoint: the frames before p still open at frames[p].start.
    std::vector<std::vector<uint32_t>> open;
  };
  struct Launch {
    ThreadKey thread;
    int64_t time;
    int index;
    std::string api;
  };
  uint32_t Intern(std::string_view s);
  const Thread* ThreadOf(ThreadKey thread);
  void FramesAt(const Thread& t, int64_t time, std::vector<const Frame*>* out) const;
  bool InternStack(size_t dropped, bool kernel, LaunchStackTable* table,
                   proto::LaunchContext* ctx);
  // Of the first `dropped` (outer) frames of scratch_, the step annotations kept anyway.
  size_t KeptOuter(size_t dropped);

  std::deque<std::string> strings_;  // stable: ids_ keys view into it
  std::unordered_map<std::string_view, uint32_t> ids_;
  std::map<ThreadKey, Thread> threads_;
  size_t frame_count_ = 0;
  bool built_ = false;
  ThreadKey last_thread_{};
  const Thread* last_ = nullptr;
  std::vector<const Frame*> scratch_;
  std::vector<const Frame*> last_frames_;  // the last stack interned, and its index
  uint32_t last_stack_ = 0;
  std::vector<uint32_t> ids_scratch_;
  std::unordered_map<TableKey, uint32_t, TableKeyHash> table_frames_;  // -> table index
  uint32_t empty_id_ = UINT32_MAX;   // interned "" (frames without shapes)
  uint32_t cpu_op_id_ = UINT32_MAX;  // interned "cpu_op"
  uint32_t annotation_id_ = UINT32_MAX;  // interned "user_annotation"
  bool has_shapes_ = false;
  OpCalls last_op_calls_;
  const LaunchStackTable* table_for_frames_ = nullptr;
  std::vector<Launch> launches_;
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_COMMON_LAUNCH_CONTEXT_H_
