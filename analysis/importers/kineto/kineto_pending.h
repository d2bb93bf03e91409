// The GPU events of a Kineto document, kept compact until its end, and what resolves them.
//
// A kernel's launch call (cuda_runtime, same correlation id), the record_function ranges
// that give its path, the counter ranges that carry its metrics and baseTimeNanoseconds may
// all come after it in the document, so GPU events wait here in a compact form (about 100
// bytes each, names interned) with the launch calls and ranges, and are resolved and handed
// out at the end, in (start, device, stream) order:
//   JoinLaunches          launch context: event -> launch call -> thread and time -> the
//                         user_annotation path open there (else the GPU annotation on its
//                         stream), and the stack of cpu_op / python_function /
//                         user_annotation frames enclosing the call (else the GPU
//                         annotations on its stream), interned once per trace
//                         (common/launch_context.h) into the header's launch_context_stats;
//                         when cpu_ops carry shapes, the kernels each innermost and
//                         outermost cpu_op call launched (kernel_sets);
//   AttachProfilerRanges  the i-th cuda_profiler_range named N -> the i-th kernel named N;
//   DescribeDevices       the devices the events used;
//   Emit                  ranges, the launch-context tables, then activities, to the sink.
#ifndef QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_PENDING_H_
#define QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_PENDING_H_

#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/importers/common/graph_capture.h"
#include "analysis/importers/common/import_util.h"
#include "analysis/importers/common/launch_context.h"
#include "analysis/importers/common/layer_model.h"
#include "analysis/importers/common/trace_sink.h"
#include "analysis/importers/kineto/kineto_event.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

class PendingTrace {
 public:
  // A kernel, memcpy or memset event with valid times (may move from `e`).
  void AddGpu(KinetoEvent& e);
  // A launch call with a correlation id and a time (its name is the API called:
  // "cudaLaunchKernel", "cudaGraphLaunch").
  void AddLaunch(const KinetoEvent& e);
  // A user_annotation range: a path component and a launch-context frame.
  void AddCpuRange(ThreadKey thread, int64_t start, int64_t end, const std::string& name);
  // A cpu_op or python_function event with a time: a launch-context frame that ends at
  // `end`, its name and shapes interned by the hashes they were decoded with.
  void AddCpuFrame(const KinetoEvent& e, int64_t end);
  void AddGpuRange(ThreadKey stream, int64_t start, int64_t end, const std::string& name);
  void AddProfilerRange(KinetoEvent& e);
  size_t size() const { return gpu_.size(); }
  // GPU events Emit left out as timestamp outliers (kOutlierGapNs).
  uint64_t outliers() const { return outliers_; }

  // A GPU event whose start lies beyond a gap of more than a day from the rest, when the gap
  // is also over kOutlierGapRatio times the rest's own extent (first to last start) and the
  // rest holds more events, is a timestamp from another clock (an epoch-based ts among
  // relative ones, a writer bug): it would stretch the span, idle time and timeline by
  // decades (and past 2^53 ns). Emit leaves such events out, largest gap first, at most
  // kMaxOutlierCuts times, with a warning naming how many and where.
  static constexpr int64_t kOutlierGapNs = int64_t{86400} * 1000 * 1000 * 1000;
  static constexpr double kOutlierGapRatio = 1e4;
  static constexpr int kMaxOutlierCuts = 4;

  // Resolves everything and hands it to `sink`, times shifted by `base_ns`; keeps the
  // devices used in `header`, adds the counter-join statistics to its collector and the
  // launch contexts to its launch_context_stats. With `captures`, the kernels of graph
  // replays take their capture-time contexts (common/graph_capture.h).
  // With `layer_model`, replays no capture pairs get modelled op calls (layer_model.h).
  void Emit(int64_t base_ns, proto::TraceHeader* header, TraceSink* sink,
            const GraphCaptureSet* captures = nullptr, const LayerModel* layer_model = nullptr);

  // Graph-capture traces (kineto_capture.cc): every launch-API call is kept, with the
  // kernel its record names, and BuildCaptures turns the calls made inside each
  // Stream{Begin,End}Capture pair into a capture of `set`, labelled "<label> #k".
  void KeepCalls() { keep_calls_ = true; }
  void AddCall(ThreadKey thread, int64_t ts_ns, int64_t dur_ns, const std::string& api,
               const std::string& kernel, const uint32_t grid[3], const uint32_t block[3]);
  void BuildCaptures(const std::string& label, GraphCaptureSet* set);

 private:
  // A GPU event, compact, until the end of the file: its launch call, the annotations that
  // give its path and the base time may all come later in the document. 128 bytes, wider
  // fields first: a deque block (512 bytes) holds four with nothing to spare, where the
  // same fields in declaration order took 152 and a block held three.
  struct PendingGpu {
    int64_t start = 0, end = 0;  // ns, before baseTimeNanoseconds
    uint64_t stream = 0, correlation = 0, bytes = 0;
    const std::string* path = nullptr;
    double reported_occupancy_pct = 0;  // Kineto's "est. achieved occupancy %"
    uint32_t device = 0;
    uint32_t name = 0;           // id in names_
    uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    uint32_t registers = 0, shared_memory = 0;
    int32_t args = -1;           // index into args_ (kernels with extra args)
    int32_t metrics = -1;        // index into profiler_ranges_ (counters joined onto it)
    int32_t launch = -1;         // index into runtime_ (after the join)
    uint32_t stack = 0;          // launch context (index into the header's stacks)
    uint32_t op_kernels = 0, outer_op_kernels = 0;  // kernel_sets of its op calls
    uint8_t kind = proto::ACTIVITY_KIND_UNSPECIFIED;  // a proto::ActivityKind
    bool has_correlation = false;
    bool graph_launch = false;
    bool graph_capture = false;  // `stack` is the capture-time context
    bool has_reported_occupancy = false;
    bool from_profiler_range = false;  // a kernel known only by its counter range
  };
  static_assert(sizeof(PendingGpu) == 128);

  // 24 bytes: a trace holds a launch call per kernel and as many other runtime calls, and
  // the join sorts them all.
  struct Runtime {
    uint64_t correlation;
    int64_t ts_ns;
    uint32_t thread;  // index into launch_threads_
    uint32_t api;     // index into api_names_
  };
  
  struct ProfilerRange {
    std::string name;
    int64_t ts_ns;
    std::vector<std::pair<std::string, double>> metrics;
  };

  struct Call {
    ThreadKey thread;
    int64_t ts_ns, dur_ns;
    uint32_t api;     // index into api_names_
    uint32_t kernel;  // id in names_ + 1; 0 = not recorded
    uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};  // where the record gives them
  };

  uint32_t NameIndex(std::string_view name, size_t hash);
  uint32_t NameIndex(std::string_view name) {
    return NameIndex(name, PrehashedStrings::Hash(name));
  }
  uint32_t ApiIndex(std::string_view api, size_t hash) { return api_names_.Intern(api, hash); }
  // The builder's ids of a frame's strings.
  uint32_t FrameKindId(KinetoEventKind kind);
  uint32_t FrameShapesId(const KinetoEvent& e);
  uint32_t LaunchThreadIndex(ThreadKey thread);
  // Graph replays: paired with `set`'s captures, else modelled by `model` (either may be
  // null, not both).
  void JoinGraphCaptures(const GraphCaptureSet* set, const LayerModel* model,
                         proto::TraceHeader* header);
  void JoinLaunches(proto::LaunchContextStats* stats);
  // The kernels each op call launched (`calls`: per kernel event index, its innermost and
  // outermost cpu_op call and the innermost's name), interned into stats' kernel_sets.
  struct OpCallOf {
    uint32_t gpu;
    LaunchContextBuilder::OpCalls calls;
  };
  void ListCallKernels(const std::vector<OpCallOf>& calls, proto::LaunchContextStats* stats);
  // The launches of each call (indices into `calls`): members[begin[g], begin[g + 1]) for
  // call g, calls numbered in order of their first launch, launches in event order.
  struct CallGroups {
    std::vector<uint32_t> begin, members;
  };
  static CallGroups GroupByCall(const std::vector<OpCallOf>& calls, bool inner);
  void AttachProfilerRanges(proto::CollectorStats* collector);
  void DescribeDevices(proto::TraceHeader* header) const;
  void FillActivity(const PendingGpu& p, int64_t base_ns, proto::Activity* a) const;
  struct EmitKey {
    int64_t start;
    uint64_t stream;
    uint32_t device;
    uint32_t index;  // into gpu_
  };
  // The order activities are emitted in (all of gpu_).
  std::vector<EmitKey> EmitOrder() const;

  std::deque<PendingGpu> gpu_;  // a deque: growing it never copies what it holds
  uint64_t outliers_ = 0;
  PrehashedStrings names_;  // GPU events' names
  std::vector<std::vector<std::pair<std::string, std::string>>> args_;
  std::vector<Runtime> runtime_;
  std::vector<ThreadKey> launch_threads_;  // the threads of runtime_: few distinct values
  std::map<ThreadKey, uint32_t> launch_thread_ids_;
  RangeIndex cpu_ranges_;
  RangeIndex gpu_ranges_;
  LaunchContextBuilder cpu_contexts_;
  LaunchContextBuilder gpu_contexts_;
  // cpu_op and python_function frames' names and shapes, and their ids in cpu_contexts_
  // (a plumbing name, left out, gets none).
  struct FrameName {
    bool plumbing;
    uint32_t id;
  };
  PrehashedStrings frame_names_;
  std::vector<FrameName> frame_name_ids_;
  PrehashedStrings frame_shapes_;
  std::vector<uint32_t> frame_shapes_ids_;
  uint32_t cpu_op_kind_ = UINT32_MAX, python_kind_ = UINT32_MAX, no_shapes_ = UINT32_MAX;
  PrehashedStrings api_names_;  // launch calls' names: few distinct values
  size_t gpu_range_count_ = 0;
  std::vector<ProfilerRange> profiler_ranges_;
  bool keep_calls_ = false;
  std::vector<Call> calls_;
  // Modelled op calls of replayed kernels (gpu_ index -> stack, kernel set): kept apart,
  // as PendingGpu has no room to spare and few traces are modelled.
  std::unordered_map<uint32_t, ReplayPairing> modelled_;
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_PENDING_H_
