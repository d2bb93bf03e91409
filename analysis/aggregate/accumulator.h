// The aggregation state of a profile, built one record at a time.
//
// ProfileState holds everything the Profile's tables are made from, as running figures:
// per kernel (normalised name) counts, time, min/max, a quantile sketch (quantiles.h),
// duration-weighted metric sums, work models for rooflines (work_list.h), per-trace time;
// per trace its header, interval unions per device and per stream (interval_union.h), span,
// memcpy/memset time and "step N" ranges; over all traces the NVTX range table (folded
// paths), per-step figures, a bounded timeline sample (timeline_sample.h) and the sums that
// make the format ceilings. Nothing is kept per launch, so memory grows with the number of
// distinct kernels, devices, streams, folded paths and steps, never with the number of
// launches (a quantile or work list stops growing at its exact limit).
//
// TraceAccumulator is the importers' TraceSink that feeds one trace into a state; records
// may come in any order. ProfileState::Merge appends another state's traces and combines
// the rest; every figure merges exactly except where a component says otherwise, and a
// state made by merging per-trace states equals, field for field, the one analysis of all
// those traces builds (analysis/analyze.h analyses files that way). partial.h turns a state
// into the versioned PartialProfile proto and back.
//
// Classification and ceilings are not done here: they need every launch of a kernel (the
// metrics of its first launch, its time-weighted tensor-pipe share), so analysis/analyze.cc
// runs them on the finished state, once per kernel; tables.h then emits the tables.
//
// Communication and copies. Each kernel group is decided comm or not once, at ingest
// (IsCommLaunch: the registry attribution the record carries, else the name rules, the same
// evidence the classifier gives class comm from; the analysis warns when its final class
// disagrees), so each device keeps, next to the union of all its kernels, the unions of its
// compute (non-comm) kernels, its comm kernels, its copies (memcpy and memset) and of kernels
// and copies together: exposed comm = |all kernels| - |compute| (what no compute kernel
// hides), exposed copies = |kernels and copies| - |all kernels|. The kernel union is tagged
// with each piece's launch time, which gives every idle gap its cause (gap_stats.h). Comm
// launches also go to a row per collective type and process group, memcpy and memset
// activities to a row per kind and memory pair (collectives.h).
//
// Launch contexts and occupancy. A kernel group is one normalised name launched from one
// launch-context verdict (classify/context_rules.h: the role and frame its launch stack, or
// its NVTX path, gives), so the analysis can split a name whose context changes its role
// (the same GEMM under vllm::moe_forward and under aten::mm) and fold the rest back into one
// row. The verdict of a stack is decided once per distinct stack of a trace (the importer
// hands the stack tables over before the launches that use them: trace_sink.h). Occupancy
// is a function of the launch configuration and the device's limits only, so a group keeps
// one entry per distinct (trace, device, grid, block, registers, shared memory) with its
// launch count and time, and the occupancy figures are computed per entry when the tables
// are emitted, with the limits of the trace header's device (or --device).
#ifndef QPROF_ANALYSIS_AGGREGATE_ACCUMULATOR_H_
#define QPROF_ANALYSIS_AGGREGATE_ACCUMULATOR_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/aggregate/collectives.h"
#include "analysis/aggregate/decode_steps.h"
#include "analysis/aggregate/interval_union.h"
#include "analysis/aggregate/quantiles.h"
#include "analysis/aggregate/range_summary.h"
#include "analysis/aggregate/timeline_sample.h"
#include "analysis/aggregate/work_list.h"
#include "analysis/classify/context_rules.h"
#include "analysis/work/launch_work.h"
#include "analysis/importers/common/trace_sink.h"
#include "proto/trace.pb.h"

namespace qprof::aggregate {

// Order of launches across inputs; the smallest launch of a kernel is its representative.
struct LaunchKey {
  uint32_t trace = std::numeric_limits<uint32_t>::max();
  int64_t start_ns = 0;
  uint32_t device = 0;
  uint64_t stream = 0;
  uint64_t seq = 0;  // arrival within the trace
  bool operator<(const LaunchKey& o) const {
    return std::tie(trace, start_ns, device, stream, seq) <
           std::tie(o.trace, o.start_ns, o.device, o.stream, o.seq);
  }
};

// One distinct launch configuration of a kernel on one device of one trace.
struct LaunchConfigKey {
  uint32_t trace = 0;
  uint32_t device = 0;
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t registers = 0;
  uint64_t shared_bytes = 0;  // static + dynamic
  auto Tie() const {
    return std::tie(trace, device, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                    registers, shared_bytes);
  }
  bool operator<(const LaunchConfigKey& o) const { return Tie() < o.Tie(); }
};

// The launches (end >= start) with one configuration; weights are max(1, duration) ns.
struct LaunchConfigAcc {
  uint64_t count = 0;
  double time = 0;
  LaunchKey first;                  // earliest launch with it
  // The source's own occupancy estimate (Kineto "est. achieved occupancy %"), where given:
  double reported_weight = 0, reported_sum = 0;  // time-weighted
  uint64_t reported_positive = 0;   // launches where it is above zero
  double reported_min = 0, reported_max = 0;     // over those
  uint64_t reported_zero = 0;       // launches where it is 0
};

struct TraceTime {
  uint32_t trace = 0;
  uint64_t calls = 0;
  uint64_t time_ns = 0;
};

// The launches of a kernel group that share one work derived from their op call's shapes
// (analysis/work/launch_work.h), resolved once per distinct (stack, call kernel lists,
// kernel name) of a trace.
struct ShapeWorkAcc {
  work::LaunchWork work;               // per launch
  uint64_t launches = 0;               // every launch
  uint64_t timed = 0;                  // launches with end >= start
  double time_ns = 0;                  // their time
};

// All launches of one normalised kernel name.
struct KernelGroup {
  std::string name;
  uint32_t context = 0;                // ProfileState::contexts index + 1; 0 = no context
  bool own = false;                    // our kernel or modelled: its context never sets its role
  proto::Activity rep;                 // first launch (LaunchKey): what classification reads
  LaunchKey rep_key;
  bool has_metrics_rep = false;
  proto::KernelMetrics metrics_rep;    // of the first launch with tensor_pipe_pct or tensor_count
  LaunchKey metrics_key;
  // Classification's measured tensor-pipe share: sum(pct * max(1, duration)) over every
  // launch that has it, and the weight.
  double class_tp_sum = 0, class_tp_weight = 0;
  uint64_t launches = 0;               // every launch, end < start included
  // Launches with end >= start:
  uint64_t calls = 0;
  uint64_t time_ns = 0;
  DurationQuantiles durations;
  double work_bytes = 0, work_flops = 0, work_time_ns = 0;  // those with a work model
  double tp_sum = 0, tp_weight = 0, fma_sum = 0, fma_weight = 0, dram_sum = 0,
         dram_weight = 0;
  std::vector<uint32_t> devices;       // sorted
  std::vector<TraceTime> per_trace;    // sorted by trace
  // Every launch: work models for rooflines, and how many had none.
  WorkList work;
  uint64_t without_work = 0;
  uint64_t work_launches = 0;          // launches with end >= start and a registry work model
  // Launches without a registry work model whose op call's shapes give their work, one entry
  // per distinct work (at most kMaxShapeWork; later distinct works count as without work),
  // and the launches whose shapes did not add up (with the smallest error text).
  static constexpr size_t kMaxShapeWork = 1024;
  std::vector<ShapeWorkAcc> shape_work;
  std::unordered_map<std::string, uint32_t> shape_index;  // LaunchWork::Key() -> shape_work
  uint64_t shape_invalid = 0;
  std::string shape_invalid_example;
  // Index of `w` in shape_work, added when new; -1 past kMaxShapeWork.
  int32_t ShapeEntry(const work::LaunchWork& w);
  // Launch configurations, and the time (sum of max(1, duration)) of the launches with end
  // >= start, for the row's dominant launch-context frame.
  std::map<LaunchConfigKey, LaunchConfigAcc> configs;
  double context_time = 0;
  // Communication kernels (IsCommLaunch), decided when the group first sees a launch.
  bool comm = false;
  bool comm_known = false;
};

// Profile-wide launch counts (Profile.launch_summary): every kernel launch.
struct LaunchCounts {
  uint64_t launches = 0;
  uint64_t with_context = 0;           // a launch stack or an NVTX path
  uint64_t graph_launches = 0;
};

struct UnionAcc {
  IntervalUnion busy;
  uint64_t kernel_time_ns = 0;
};

// One device of one trace: its kernels (tagged with launch times for the idle causes) and
// the unions that split comm and copies into exposed and hidden time.
struct DeviceAcc {
  TaggedIntervalUnion busy;  // every kernel
  uint64_t kernel_time_ns = 0;
  IntervalUnion compute;     // kernels outside class comm
  IntervalUnion comm;        // comm kernels
  IntervalUnion copy;        // memcpy and memset activities
  IntervalUnion all;         // kernels and copies
};

struct StepRangeSpan {
  int64_t start_ns = 0, end_ns = 0;
};

struct TraceState {
  proto::TraceHeader header;
  bool truncated = false;
  std::string truncation_detail;
  uint64_t kernel_records = 0;
  int64_t first_ns = std::numeric_limits<int64_t>::max();
  int64_t last_ns = std::numeric_limits<int64_t>::min();
  std::map<uint32_t, DeviceAcc> devices;  // entries also for devices with copies only
  std::map<std::pair<uint32_t, uint64_t>, UnionAcc> streams;
  uint64_t memcpy_ns = 0, memset_ns = 0;
  std::map<int64_t, StepRangeSpan> step_ranges;  // first "step N" range of each step
  DecodeSteps decode_steps;  // ranges that name a decode step's tokens (decode_steps.h)
  // The first GEMM (by start) of the graph replays with work from their capture: its rows
  // (M, the tokens a decode step's linear layers take; decode_tokens.h) and its op call.
  double first_replay_gemm_rows = 0;
  int64_t first_replay_gemm_ns = std::numeric_limits<int64_t>::max();
  std::string first_replay_gemm;
  uint64_t seq = 0;
};

struct RangeAcc {
  uint64_t time_ns = 0;
  uint64_t calls = 0;
};

struct StepAcc {
  int64_t first_ns = std::numeric_limits<int64_t>::max();
  int64_t last_ns = std::numeric_limits<int64_t>::min();
  uint64_t time_ns = 0;
  uint64_t count = 0;
  uint64_t comm_time_ns = 0;  // of the comm kernels among them
  uint64_t comm_count = 0;
};

struct StepWorkSums {
  double weight_bytes = 0, other_bytes = 0, flops = 0;
  uint64_t weight_launches = 0;
};

class ProfileState {
 public:
  std::vector<TraceState> traces;
  std::vector<KernelGroup> groups;
  std::map<std::string, RangeAcc> ranges;  // folded NVTX path
  std::map<int64_t, StepAcc> steps;
  TimelineSample timeline;
  StepWorkSums step_work;
  uint64_t dropped_negative = 0;           // kernel launches with end < start
  std::vector<classify::ContextVerdict> contexts;  // distinct launch-context verdicts
  LaunchCounts launch_counts;
  RangeSummary range_summary;              // NVTX ranges by name (range_summary.h)
  std::map<CollectiveKey, CollectiveAcc> collectives;  // comm launches (collectives.h)
  std::map<CopyKey, CopyAcc> copies;                   // memcpy and memset activities

  // Group of a normalised name launched from context `context` (0 = none), created when new.
  uint32_t GroupFor(const std::string& normalised, uint32_t context = 0, bool own = false);
  // Index + 1 of a verdict in `contexts`, added when new. Step numbers in its frame texts
  // are folded first ("ProfilerStep#12" -> "ProfilerStep#N"), so the verdicts, and the
  // groups keyed by them, stay as many as the distinct contexts, however many steps run.
  uint32_t ContextFor(const classify::ContextVerdict& v);
  const TimelineSample::Names& names() const { return names_; }
  // Appends other's traces after ours and combines everything else.
  void Merge(ProfileState&& other);

 private:
  std::unordered_map<std::string, uint32_t> group_index_;
  std::unordered_map<std::string, uint32_t> context_index_;
  TimelineSample::Names names_;  // groups[i].name, for the timeline's ordering
};

// Feeds one trace into a state (see importers/common/trace_sink.h for the call order).
class TraceAccumulator : public importers::TraceSink {
 public:
  // `state` must outlive the accumulator. Reset() clears the whole state, so give each
  // accumulator whose importer may reset (the file importers) a state of its own.
  explicit TraceAccumulator(ProfileState* state) : state_(state) {}
  void Begin(const proto::TraceHeader& header) override;
  void Activity(const proto::Activity& a) override;
  void Range(const proto::NvtxRange& r) override;
  void LaunchContexts(const proto::LaunchContextStats& tables) override;
  void End(const proto::TraceHeader& header, bool truncated,
           const std::string& truncation_detail) override;
  void Reset() override;
  // Launch configurations are kept per kernel for occupancy and waves.
  bool WantsLaunchConfig() const override { return true; }

 private:
  struct PathInfo {
    RangeAcc* range;  // std::map nodes do not move
    int64_t step;
    bool decode_step = false;  // a component names a decode step (decode_steps.h)
  };
  KernelGroup& GroupOf(const proto::Activity& a);
  uint32_t ContextOf(const proto::Activity& a);
  void AddConfig(KernelGroup& g, const proto::Activity& a, int64_t d);
  const PathInfo& PathOf(const std::string& nvtx_path);
  void AddLaunch(KernelGroup& g, uint32_t group, const proto::Activity& a);
  void AddValidLaunch(KernelGroup& g, uint32_t group, const proto::Activity& a, int64_t d);
  void AddStepWork(const proto::Activity& a);
  // The shape-derived work entry of a launch in `g` (cached per distinct stack, call kernel
  // lists and raw name): >= 0 an index into g.shape_work, -1 none, -2 shapes invalid.
  int32_t ShapeWorkOf(KernelGroup& g, uint32_t group, const proto::Activity& a);

  DeviceAcc& DeviceUnion(uint32_t device);
  UnionAcc& StreamUnion(uint32_t device, uint64_t stream);
  void AddCopy(const proto::Activity& a, int64_t d);
  void AddCollective(const KernelGroup& g, const proto::Activity& a, uint64_t d);
  void ClearCaches();

  ProfileState* state_;
  uint32_t trace_ = 0;
  // Caches over repeated strings, cleared when they grow past a bound. Abseil's hash maps:
  // every launch looks its name and path up, and templated kernel names run to kilobytes
  // (std::hash's byte-at-a-time hashing of them was 5% of reading a 1M-kernel export).
  absl::flat_hash_map<std::string, uint32_t> name_cache_;  // raw name -> raw id
  std::vector<uint32_t> raw_norm_;                        // raw id -> norms_ index
  std::vector<std::string> norms_;
  std::vector<int8_t> norm_is_comm_;  // per norms_ entry: IsCommLaunch's name-rule answer
  uint32_t last_raw_ = 0;                                 // raw id of the last GroupOf
  // The launch-context tables of this trace as handed over (LaunchContexts), for the work
  // of each launch's op call, and that work per (raw name, stack, kernel lists, graph).
  proto::LaunchContextStats tables_;
  struct WorkKey {
    uint32_t raw, stack, inner, outer;
    bool graph;
    uint32_t step = 0;  // graph replays: the step annotation's id in steps_ (0: none)
    bool operator==(const WorkKey& o) const {
      return raw == o.raw && stack == o.stack && inner == o.inner && outer == o.outer &&
             graph == o.graph && step == o.step;
    }
  };
  struct WorkKeyHash {
    size_t operator()(const WorkKey& k) const {
      uint64_t h = (uint64_t{k.raw} << 32 | k.stack) * 0x9E3779B97F4A7C15ull;
      h ^= (uint64_t{k.inner} << 32 | k.outer) + (h << 6) + (h >> 2) + k.graph;
      h ^= uint64_t{k.step} * 0xC2B2AE3D27D4EB4Full;
      return static_cast<size_t>(h);
    }
  };
  struct CachedWork {
    uint32_t group = 0;
    int32_t entry = -1;            // -2: invalid shapes (work_errors_[error])
    uint32_t error = 0;
    double gemm_rows = 0;          // a replayed GEMM's M (GemmRows), 0 for anything else
  };
  // The step annotations of graph replays' NVTX paths (StepOfNvtxPath), by path; steps_[0]
  // is "none". A replayed kernel's stack is its capture's: its step comes from its path.
  uint32_t ReplayStep(const std::string& nvtx_path);
  std::unordered_map<std::string, uint32_t> step_of_path_;
  std::vector<std::optional<work::IterationAnnotation>> steps_{std::nullopt};
  std::string last_step_path_;
  uint32_t last_step_id_ = 0;
  std::vector<std::string> work_errors_;
  std::unordered_map<WorkKey, CachedWork, WorkKeyHash> work_cache_;
  WorkKey last_work_key_{UINT32_MAX, 0, 0, 0, false};
  CachedWork last_work_;
  std::unordered_map<uint64_t, uint32_t> group_cache_;   // (norm, context, own) -> group
  // Launch contexts of this trace: verdict (ProfileState::contexts index + 1, 0 = none) per
  // stack of its tables, and per NVTX path for launches without a stack.
  std::vector<uint32_t> stack_context_;
  absl::flat_hash_map<std::string, uint32_t> path_context_;
  std::string last_context_path_;
  uint32_t last_path_context_ = UINT32_MAX;
  absl::flat_hash_map<std::string, PathInfo> path_cache_;
  // The last lookups: consecutive launches mostly share a name, path, device and stream.
  std::string last_name_;
  uint32_t last_context_ = 0;
  bool last_own_ = false;
  uint32_t last_group_ = UINT32_MAX;
  std::string last_path_;
  PathInfo last_path_info_{nullptr, -1};
  uint32_t last_device_ = 0;
  DeviceAcc* last_device_union_ = nullptr;
  // The last copy row: consecutive copies mostly share a kind and memory pair.
  proto::ActivityKind last_copy_activity_ = proto::ACTIVITY_KIND_UNSPECIFIED;
  std::string last_copy_kind_, last_src_memory_, last_dst_memory_;
  CopyAcc* last_copy_acc_ = nullptr;
  std::pair<uint32_t, uint64_t> last_stream_{0, 0};
  UnionAcc* last_stream_union_ = nullptr;
  int64_t last_step_ = -1;
  StepAcc* last_step_acc_ = nullptr;
};

// Adds `o`'s launch figures to `g` (counts, time, durations, work and metric sums, devices):
// what merging states and folding groups into one kernel row both add.
void AddLaunchFigures(KernelGroup& g, const KernelGroup& o);

// Whether a kernel launch is communication: the class comm its record's registry or modelled
// attribution gives, else the name rules' (classify/name_rules.h). The classifier gives class
// comm from the same evidence only; measured tensor-pipe activity or SASS with MMAs may still
// class such a kernel "tensor" (analysis/analyze.cc warns when the two disagree).
bool IsCommLaunch(const proto::Activity& a, const std::string& normalised);
// The same, with the name rules' answer for `normalised` kept in *by_name (-1: not asked
// yet): the groups of one kernel name in many launch contexts match the rules once.
bool IsCommLaunch(const proto::Activity& a, const std::string& normalised, int8_t* by_name);

// Replays a trace in memory into `state` as one more trace.
void AccumulateTrace(const proto::Trace& trace, ProfileState* state);

// Step number from an NVTX path with a component "step N" ("decode/step 12/layer 3" -> 12)
// or "ProfilerStep#N" (torch.profiler: "ProfilerStep#7/## forward ##" -> 7); -1 when there
// is none.
int64_t StepOfPath(const std::string& path);

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_ACCUMULATOR_H_
