#include "analysis/aggregate/accumulator.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/aggregate/decode_tokens.h"
#include "analysis/names/kernel_name.h"
#include "proto/vocabulary.h"

namespace qprof::aggregate {
namespace {

// Caches of repeated strings are dropped past this many entries (a trace whose every NVTX
// path differs would otherwise keep one entry per launch).
constexpr size_t kMaxCacheEntries = 1 << 16;

void AddTraceTime(std::vector<TraceTime>* v, uint32_t trace, uint64_t calls, uint64_t time) {
  auto it = std::lower_bound(v->begin(), v->end(), trace,
                             [](const TraceTime& t, uint32_t tr) { return t.trace < tr; });
  if (it == v->end() || it->trace != trace) it = v->insert(it, TraceTime{trace, 0, 0});
  it->calls += calls;
  it->time_ns += time;
}

void AddDevice(std::vector<uint32_t>* v, uint32_t id) {
  auto it = std::lower_bound(v->begin(), v->end(), id);
  if (it == v->end() || *it != id) v->insert(it, id);
}

void MergeConfig(LaunchConfigAcc& c, const LaunchConfigAcc& o) {
  if (c.count == 0 || o.first < c.first) c.first = o.first;
  c.count += o.count;
  c.time += o.time;
  c.reported_weight += o.reported_weight;
  c.reported_sum += o.reported_sum;
  if (o.reported_positive > 0) {
    c.reported_min = c.reported_positive > 0 ? std::min(c.reported_min, o.reported_min)
                                             : o.reported_min;
    c.reported_max = c.reported_positive > 0 ? std::max(c.reported_max, o.reported_max)
                                             : o.reported_max;
  }
  c.reported_positive += o.reported_positive;
  c.reported_zero += o.reported_zero;
}

bool HasUsableWork(const proto::Activity& a) {
  return a.has_work() && (a.work().bytes() > 0 || a.work().flops() > 0);
}

void MergeGroup(KernelGroup& g, KernelGroup&& o, uint32_t trace_offset) {
  o.rep_key.trace += trace_offset;
  o.metrics_key.trace += trace_offset;
  if (o.launches > 0 && (g.launches == 0 || o.rep_key < g.rep_key)) {
    g.rep = std::move(o.rep);
    g.rep_key = o.rep_key;
  }
  if (o.has_metrics_rep && (!g.has_metrics_rep || o.metrics_key < g.metrics_key)) {
    g.metrics_rep = std::move(o.metrics_rep);
    g.metrics_key = o.metrics_key;
    g.has_metrics_rep = true;
  }
  g.class_tp_sum += o.class_tp_sum;
  g.class_tp_weight += o.class_tp_weight;
  AddLaunchFigures(g, o);
  for (const TraceTime& t : o.per_trace) {
    AddTraceTime(&g.per_trace, t.trace + trace_offset, t.calls, t.time_ns);
  }
  if (g.without_work + o.without_work > 0) {
    g.work = WorkList();  // no roofline for this kernel: the list is of no use
  } else {
    g.work.Merge(o.work);
  }
  g.without_work += o.without_work;
  for (auto& [key, c] : o.configs) {
    LaunchConfigKey k = key;
    k.trace += trace_offset;
    c.first.trace += trace_offset;
    MergeConfig(g.configs[k], c);
  }
  g.context_time += o.context_time;
  if (!g.comm_known) {
    g.comm = o.comm;
    g.comm_known = o.comm_known;
  }
}

// Whether text[i..] starts a counter word ("step", "iteration", "iter"; any case) that ends
// at the returned position, else npos.
size_t CounterWordEnd(const std::string& text, size_t i) {
  for (absl::string_view word : {"iteration", "iter", "step"}) {
    if (text.size() - i >= word.size() &&
        absl::EqualsIgnoreCase(absl::string_view(text).substr(i, word.size()), word)) {
      return i + word.size();
    }
  }
  return std::string::npos;
}

// The number of a step counter in a frame's text becomes "N" ("ProfilerStep#12" ->
// "ProfilerStep#N", "step 123" -> "step N", "iter_7" -> "iter_N"): a kernel launched
// directly inside numbered frames would otherwise make a verdict, and a kernel group, per
// step, and the state would grow with the steps (it must grow with distinct kernels only).
// Other digits ("layer 3", "fp8", a Python line number) are kept: they are bounded.
std::string FoldStepNumbers(const std::string& text) {
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const size_t w = CounterWordEnd(text, i);
    if (w == std::string::npos) continue;
    size_t j = w;
    while (j < text.size() && (text[j] == ' ' || text[j] == '#' || text[j] == '_' ||
                               text[j] == '-' || text[j] == ':' || text[j] == '=')) {
      ++j;
    }
    size_t k = j;
    while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
    if (k == j) continue;
    out.append(text, copied, j - copied);
    out.push_back('N');
    copied = k;
    i = k - 1;
  }
  if (copied == 0) return text;
  out.append(text, copied, std::string::npos);
  return out;
}

std::string VerdictKey(const classify::ContextVerdict& v) {
  return absl::StrCat(v.role, "\x1f", v.format, "\x1f", v.frame, "\x1f", v.frame_kind, "\x1f",
                      v.rule, "\x1f", v.why, "\x1f", v.weak ? "w" : "s", v.gemm_op ? "g" : "",
                      "\x1f", v.innermost);
}

// The verdict of one stack of a trace's tables.
classify::ContextVerdict StackVerdict(const proto::LaunchContextStats& t, int stack) {
  std::vector<classify::Frame> frames;
  for (uint32_t f : t.stacks(stack).frames()) {
    if (f >= static_cast<uint32_t>(t.frames_size())) continue;
    const proto::LaunchFrame& fr = t.frames(static_cast<int>(f));
    frames.push_back({fr.name(), fr.kind(), !fr.input_dims().empty()});
  }
  return classify::MatchContext(frames);
}

// "ProfilerStep#N" (torch.profiler's step annotation) as a whole path component.
int64_t ProfilerStepOfPath(const std::string& path) {
  static constexpr std::string_view kTag = "ProfilerStep#";
  size_t pos = 0;
  while ((pos = path.find(kTag, pos)) != std::string::npos) {
    bool starts_component = pos == 0 || path[pos - 1] == '/';
    size_t i = pos + kTag.size(), j = i;
    while (j < path.size() && std::isdigit(static_cast<unsigned char>(path[j]))) ++j;
    if (starts_component && j > i && j - i < 10 && (j == path.size() || path[j] == '/')) {
      return std::stoll(path.substr(i, j - i));
    }
    pos += kTag.size();
  }
  return -1;
}

}  // namespace

int32_t KernelGroup::ShapeEntry(const work::LaunchWork& w) {
  std::string key = w.Key();
  auto it = shape_index.find(key);
  if (it != shape_index.end()) return static_cast<int32_t>(it->second);
  if (shape_work.size() >= kMaxShapeWork) return -1;
  shape_index.emplace(std::move(key), static_cast<uint32_t>(shape_work.size()));
  shape_work.push_back(ShapeWorkAcc{w, 0, 0, 0});
  return static_cast<int32_t>(shape_work.size() - 1);
}

void AddLaunchFigures(KernelGroup& g, const KernelGroup& o) {
  g.work_launches += o.work_launches;
  for (const ShapeWorkAcc& e : o.shape_work) {
    const int32_t i = g.ShapeEntry(e.work);
    if (i < 0) continue;  // past the limit: those launches count as without work
    ShapeWorkAcc& mine = g.shape_work[static_cast<size_t>(i)];
    mine.launches += e.launches;
    mine.timed += e.timed;
    mine.time_ns += e.time_ns;
  }
  if (o.shape_invalid > 0 &&
      (g.shape_invalid == 0 || o.shape_invalid_example < g.shape_invalid_example)) {
    g.shape_invalid_example = o.shape_invalid_example;
  }
  g.shape_invalid += o.shape_invalid;
  g.launches += o.launches;
  g.calls += o.calls;
  g.time_ns += o.time_ns;
  g.durations.Merge(o.durations);
  g.work_bytes += o.work_bytes;
  g.work_flops += o.work_flops;
  g.work_time_ns += o.work_time_ns;
  g.tp_sum += o.tp_sum;
  g.tp_weight += o.tp_weight;
  g.fma_sum += o.fma_sum;
  g.fma_weight += o.fma_weight;
  g.dram_sum += o.dram_sum;
  g.dram_weight += o.dram_weight;
  for (uint32_t d : o.devices) AddDevice(&g.devices, d);
}

int64_t StepOfPath(const std::string& path) {
  if (path.find("ProfilerStep#") != std::string::npos) {
    if (int64_t s = ProfilerStepOfPath(path); s >= 0) return s;
  }
  size_t pos = 0;
  while ((pos = path.find("step ", pos)) != std::string::npos) {
    bool starts_component = pos == 0 || path[pos - 1] == '/';
    size_t i = pos + 5, j = i;
    while (j < path.size() && std::isdigit(static_cast<unsigned char>(path[j]))) ++j;
    if (starts_component && j > i && j - i < 10 && (j == path.size() || path[j] == '/')) {
      return std::stoll(path.substr(i, j - i));
    }
    pos += 5;
  }
  return -1;
}

uint32_t ProfileState::GroupFor(const std::string& normalised, uint32_t context, bool own) {
  std::string key = normalised;
  if (context != 0 || own) absl::StrAppend(&key, "\x1f", context, own ? "o" : "");
  auto [it, inserted] = group_index_.emplace(std::move(key), static_cast<uint32_t>(groups.size()));
  if (inserted) {
    groups.emplace_back();
    groups.back().name = normalised;
    groups.back().context = context;
    groups.back().own = own;
    names_.push_back(normalised);
  }
  return it->second;
}

uint32_t ProfileState::ContextFor(const classify::ContextVerdict& v) {
  // Verdicts that differ only in a step number or a module instance number are one
  // (FoldStepNumbers, FoldModuleInstances): the frames, the display text and so the key
  // never carry the number.
  classify::ContextVerdict folded = v;
  folded.frame = names::FoldModuleInstances(FoldStepNumbers(v.frame));
  folded.innermost = names::FoldModuleInstances(FoldStepNumbers(v.innermost));
  auto [it, inserted] =
      context_index_.emplace(VerdictKey(folded), static_cast<uint32_t>(contexts.size() + 1));
  if (inserted) contexts.push_back(std::move(folded));
  return it->second;
}

void ProfileState::Merge(ProfileState&& other) {
  const uint32_t offset = static_cast<uint32_t>(traces.size());
  for (TraceState& t : other.traces) traces.push_back(std::move(t));
  std::vector<uint32_t> context_map(other.contexts.size() + 1, 0);
  for (size_t i = 0; i < other.contexts.size(); ++i) context_map[i + 1] = ContextFor(other.contexts[i]);
  std::vector<uint32_t> group_map(other.groups.size());
  for (size_t i = 0; i < other.groups.size(); ++i) {
    const KernelGroup& og = other.groups[i];
    group_map[i] = GroupFor(og.name, og.context < context_map.size() ? context_map[og.context] : 0,
                            og.own);
    MergeGroup(groups[group_map[i]], std::move(other.groups[i]), offset);
  }
  for (const auto& [path, r] : other.ranges) {
    RangeAcc& mine = ranges[path];
    mine.time_ns += r.time_ns;
    mine.calls += r.calls;
  }
  for (const auto& [n, s] : other.steps) {
    StepAcc& mine = steps[n];
    mine.first_ns = std::min(mine.first_ns, s.first_ns);
    mine.last_ns = std::max(mine.last_ns, s.last_ns);
    mine.time_ns += s.time_ns;
    mine.count += s.count;
    mine.comm_time_ns += s.comm_time_ns;
    mine.comm_count += s.comm_count;
  }
  for (const auto& [k, c] : other.collectives) collectives[k].Merge(c, offset);
  for (const auto& [k, c] : other.copies) copies[k].Merge(c, offset);
  timeline.Merge(std::move(other.timeline), group_map, offset, names_);
  step_work.weight_bytes += other.step_work.weight_bytes;
  step_work.other_bytes += other.step_work.other_bytes;
  step_work.flops += other.step_work.flops;
  step_work.weight_launches += other.step_work.weight_launches;
  dropped_negative += other.dropped_negative;
  launch_counts.launches += other.launch_counts.launches;
  launch_counts.with_context += other.launch_counts.with_context;
  launch_counts.graph_launches += other.launch_counts.graph_launches;
  range_summary.Merge(other.range_summary);
  other = ProfileState();
}

void TraceAccumulator::ClearCaches() {
  name_cache_.clear();
  raw_norm_.clear();
  norms_.clear();
  tables_.Clear();
  work_cache_.clear();
  work_errors_.clear();
  last_work_key_ = WorkKey{UINT32_MAX, 0, 0, 0, false};
  step_of_path_.clear();
  steps_.resize(1);
  last_step_id_ = 0;
  group_cache_.clear();
  stack_context_.clear();
  path_context_.clear();
  last_path_context_ = UINT32_MAX;
  path_cache_.clear();
  last_group_ = UINT32_MAX;
  last_path_info_ = {nullptr, -1};
  last_device_union_ = nullptr;
  last_copy_acc_ = nullptr;
  last_stream_union_ = nullptr;
  last_step_acc_ = nullptr;
}

void TraceAccumulator::Begin(const proto::TraceHeader& header) {
  trace_ = static_cast<uint32_t>(state_->traces.size());
  state_->traces.emplace_back();
  state_->traces.back().header = header;
  ClearCaches();
  LaunchContexts(header.launch_context_stats());
}

void TraceAccumulator::LaunchContexts(const proto::LaunchContextStats& tables) {
  // The tables only grow: copy what is new (the work of a launch reads its stack's frames
  // and its calls' kernel lists).
  for (int i = tables_.frames_size(); i < tables.frames_size(); ++i) *tables_.add_frames() = tables.frames(i);
  for (int i = tables_.stacks_size(); i < tables.stacks_size(); ++i) *tables_.add_stacks() = tables.stacks(i);
  for (int i = tables_.kernel_sets_size(); i < tables.kernel_sets_size(); ++i) {
    *tables_.add_kernel_sets() = tables.kernel_sets(i);
  }
  if (stack_context_.empty()) stack_context_.push_back(0);  // stacks[0]: no frames
  for (int i = static_cast<int>(stack_context_.size()); i < tables.stacks_size(); ++i) {
    classify::ContextVerdict v = StackVerdict(tables, i);
    stack_context_.push_back(state_->ContextFor(v));
  }
}

// The verdict of a launch's stack, else of its NVTX path; 0 when it has neither (or a stack
// the tables never described).
uint32_t TraceAccumulator::ContextOf(const proto::Activity& a) {
  if (const uint32_t stack = a.launch_context().stack(); stack != 0) {
    return stack < stack_context_.size() ? stack_context_[stack] : 0;
  }
  const std::string& path = a.nvtx_path();
  if (path.empty()) return 0;
  if (last_path_context_ != UINT32_MAX && path == last_context_path_) return last_path_context_;
  auto it = path_context_.find(path);
  if (it == path_context_.end()) {
    std::vector<classify::Frame> frames;
    for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
      frames.push_back({std::string(part), "nvtx"});
    }
    if (path_context_.size() >= kMaxCacheEntries) path_context_.clear();
    it = path_context_.emplace(path, state_->ContextFor(classify::MatchContext(frames))).first;
  }
  last_context_path_ = path;
  last_path_context_ = it->second;
  return it->second;
}

DeviceAcc& TraceAccumulator::DeviceUnion(uint32_t device) {
  if (last_device_union_ == nullptr || last_device_ != device) {
    last_device_union_ = &state_->traces[trace_].devices[device];  // map nodes do not move
    last_device_ = device;
  }
  return *last_device_union_;
}

UnionAcc& TraceAccumulator::StreamUnion(uint32_t device, uint64_t stream) {
  const std::pair<uint32_t, uint64_t> key{device, stream};
  if (last_stream_union_ == nullptr || last_stream_ != key) {
    last_stream_union_ = &state_->traces[trace_].streams[key];
    last_stream_ = key;
  }
  return *last_stream_union_;
}

void TraceAccumulator::Reset() {
  proto::TraceHeader header = std::move(state_->traces.back().header);
  *state_ = ProfileState();
  Begin(header);  // clears the caches, which point into the old state
}

void TraceAccumulator::End(const proto::TraceHeader& header, bool truncated,
                           const std::string& truncation_detail) {
  TraceState& t = state_->traces[trace_];
  t.header = header;
  t.truncated = truncated;
  t.truncation_detail = truncated ? truncation_detail : "";
}

void TraceAccumulator::Range(const proto::NvtxRange& r) {
  if (r.end_ns() >= r.start_ns() && r.end_ns() != std::numeric_limits<int64_t>::max()) {
    const std::string& p = r.path();
    std::string_view name = r.name();
    if (name.empty()) name = std::string_view(p).substr(p.find_last_of('/') + 1);
    state_->range_summary.Add(name, static_cast<uint64_t>(r.end_ns() - r.start_ns()));
  }
  if (r.end_ns() != std::numeric_limits<int64_t>::max()) {
    const std::string& p = r.path();
    state_->traces[trace_].decode_steps.AddRange(
        r.name().empty() ? std::string_view(p).substr(p.find_last_of('/') + 1)
                         : std::string_view(r.name()),
        r.start_ns(), r.end_ns(), r.pid(), r.tid());
  }
  // A "step N" range (named so itself, not only inside one) spans its step. Its own name is
  // looked at first: most ranges are no step, and their paths can be long.
  if (r.end_ns() <= r.start_ns()) return;
  const int64_t own = StepOfPath(r.name().empty() ? r.path() : r.name());
  if (own < 0) return;
  int64_t s = r.name().empty() ? own : StepOfPath(r.path());
  if (s < 0 || own != s) return;
  state_->traces[trace_].step_ranges.emplace(s, StepRangeSpan{r.start_ns(), r.end_ns()});
}

void TraceAccumulator::Activity(const proto::Activity& a) {
  TraceState& t = state_->traces[trace_];
  ++t.seq;
  if (a.has_work()) AddStepWork(a);
  const int64_t d = a.end_ns() - a.start_ns();
  switch (a.kind()) {
    case proto::ACTIVITY_KIND_KERNEL: {
      ++t.kernel_records;
      LaunchCounts& lc = state_->launch_counts;
      ++lc.launches;
      lc.with_context += a.launch_context().stack() != 0 || !a.nvtx_path().empty();
      lc.graph_launches += a.launch_context().graph_launch();
      KernelGroup& g = GroupOf(a);
      uint32_t gi = static_cast<uint32_t>(&g - state_->groups.data());
      AddLaunch(g, gi, a);
      // Work from the op call's shapes, for launches without a registry work model.
      const int32_t shape = HasUsableWork(a) ? -1 : ShapeWorkOf(g, gi, a);
      if (shape >= 0) ++g.shape_work[static_cast<size_t>(shape)].launches;
      if (d < 0) {
        ++state_->dropped_negative;
      } else {
        AddValidLaunch(g, gi, a, d);
        AddConfig(g, a, d);
        if (shape >= 0) {
          ShapeWorkAcc& e = g.shape_work[static_cast<size_t>(shape)];
          ++e.timed;
          e.time_ns += static_cast<double>(d);
        }
      }
      return;
    }
    case proto::ACTIVITY_KIND_MEMCPY:
      if (d >= 0) {
        t.memcpy_ns += static_cast<uint64_t>(d);
        AddCopy(a, d);
      }
      return;
    case proto::ACTIVITY_KIND_MEMSET:
      if (d >= 0) {
        t.memset_ns += static_cast<uint64_t>(d);
        AddCopy(a, d);
      }
      return;
    default:
      return;
  }
}

void TraceAccumulator::AddStepWork(const proto::Activity& a) {
  StepWorkSums& w = state_->step_work;
  w.weight_bytes += a.work().weight_bytes();
  w.other_bytes += a.work().kv_bytes() + a.work().activation_bytes();
  w.flops += a.work().flops();
  w.weight_launches += a.work().weight_bytes() > 0;
}

KernelGroup& TraceAccumulator::GroupOf(const proto::Activity& a) {
  const std::string& raw = a.name().empty() ? a.mangled_name() : a.name();
  const uint32_t context = ContextOf(a);
  // Our kernels (and modelled activities) keep their registered role whatever the context.
  const bool own = a.attribution().evidence() == evidence::kRegistry ||
                   a.attribution().evidence() == evidence::kModelled || !a.kernel_id().empty();
  if (last_group_ != UINT32_MAX && raw == last_name_ && context == last_context_ &&
      own == last_own_) {
    return state_->groups[last_group_];
  }
  auto it = name_cache_.find(raw);
  if (it == name_cache_.end()) {
    std::string n = names::NormaliseKernelName(raw);
    if (n.empty()) n = "(unnamed kernel)";
    if (name_cache_.size() >= kMaxCacheEntries) {
      name_cache_.clear();
      raw_norm_.clear();
      norms_.clear();
      norm_is_comm_.clear();
      group_cache_.clear();
      work_cache_.clear();  // keyed by raw ids
      last_work_key_ = WorkKey{UINT32_MAX, 0, 0, 0, false};
    }
    norms_.push_back(std::move(n));
    norm_is_comm_.push_back(-1);
    raw_norm_.push_back(static_cast<uint32_t>(norms_.size() - 1));
    it = name_cache_.emplace(raw, static_cast<uint32_t>(raw_norm_.size() - 1)).first;
  }
  last_raw_ = it->second;
  const uint32_t norm = raw_norm_[it->second];
  const uint64_t key = (uint64_t{norm} << 33) | (uint64_t{context} << 1) | own;
  auto g = group_cache_.find(key);
  if (g == group_cache_.end()) {
    g = group_cache_.emplace(key, state_->GroupFor(norms_[norm], context, own)).first;
    KernelGroup& group = state_->groups[g->second];
    if (!group.comm_known) {
      group.comm = IsCommLaunch(a, group.name, &norm_is_comm_[norm]);
      group.comm_known = true;
    }
  }
  last_name_ = raw;
  last_context_ = context;
  last_own_ = own;
  last_group_ = g->second;
  return state_->groups[g->second];
}

// Occupancy is computed per configuration when the tables are emitted; here the launches
// and time of each, and the source's own estimate.
void TraceAccumulator::AddConfig(KernelGroup& g, const proto::Activity& a, int64_t d) {
  const double w = static_cast<double>(std::max<int64_t>(d, 1));
  g.context_time += w;
  if (uint64_t{a.grid().x()} * a.grid().y() * a.grid().z() == 0 ||
      uint64_t{a.block().x()} * a.block().y() * a.block().z() == 0) {
    return;
  }
  LaunchConfigKey k;
  k.trace = trace_;
  k.device = a.device_id();
  k.grid[0] = a.grid().x();
  k.grid[1] = a.grid().y();
  k.grid[2] = a.grid().z();
  k.block[0] = a.block().x();
  k.block[1] = a.block().y();
  k.block[2] = a.block().z();
  k.registers = a.registers_per_thread();
  k.shared_bytes = uint64_t{a.static_shared_bytes()} + a.dynamic_shared_bytes();
  LaunchConfigAcc one;
  one.count = 1;
  one.time = w;
  one.first = LaunchKey{trace_, a.start_ns(), a.device_id(), a.stream_id(),
                        state_->traces[trace_].seq};
  if (a.has_occupancy() && a.occupancy().has_reported_est_occupancy_pct()) {
    const double r = a.occupancy().reported_est_occupancy_pct();
    one.reported_weight = w;
    one.reported_sum = r * w;
    if (r > 0) {
      one.reported_positive = 1;
      one.reported_min = one.reported_max = r;
    } else {
      one.reported_zero = 1;
    }
  }
  MergeConfig(g.configs[k], one);
}

const TraceAccumulator::PathInfo& TraceAccumulator::PathOf(const std::string& nvtx_path) {
  if (last_path_info_.range != nullptr && nvtx_path == last_path_) return last_path_info_;
  auto it = path_cache_.find(nvtx_path);
  if (it == path_cache_.end()) {
    if (path_cache_.size() >= kMaxCacheEntries) path_cache_.clear();
    RangeAcc* r = &state_->ranges[names::FoldNvtxPath(nvtx_path)];
    it = path_cache_.emplace(nvtx_path, PathInfo{r, StepOfPath(nvtx_path),
                                                 PathHasDecodeStep(nvtx_path)}).first;
  }
  last_path_ = nvtx_path;
  last_path_info_ = it->second;
  return last_path_info_;
}

// What every launch contributes, valid or not: the representative launch, classification's
// tensor-pipe share and the work models for rooflines.
void TraceAccumulator::AddLaunch(KernelGroup& g, uint32_t group, const proto::Activity& a) {
  const LaunchKey key{trace_, a.start_ns(), a.device_id(), a.stream_id(),
                      state_->traces[trace_].seq};
  if (g.launches == 0 || key < g.rep_key) {
    g.rep = a;
    g.rep_key = key;
  }
  ++g.launches;
  // Tensor-pipe evidence: a utilisation (weighted into the share classification reads), or
  // only a count of tensor work (ncu --metrics with counters: the representative carries it).
  const bool tensor_pct = a.has_metrics() && a.metrics().has_tensor_pipe_pct();
  if (tensor_pct || (a.has_metrics() && a.metrics().has_tensor_count())) {
    if (tensor_pct) {
      double w = static_cast<double>(std::max<int64_t>(1, a.end_ns() - a.start_ns()));
      g.class_tp_sum += a.metrics().tensor_pipe_pct() * w;
      g.class_tp_weight += w;
    }
    if (!g.has_metrics_rep || key < g.metrics_key) {
      g.metrics_rep = a.metrics();
      g.metrics_key = key;
      g.has_metrics_rep = true;
    }
  }
  if (!HasUsableWork(a)) {
    if (g.without_work++ == 0) g.work = WorkList();
  } else if (g.without_work == 0) {
    g.work.Add(LaunchWork{a.work().bytes(), a.work().flops(), a.work().compute_pipe()});
  }
}

void TraceAccumulator::AddValidLaunch(KernelGroup& g, uint32_t group, const proto::Activity& a,
                                      int64_t d) {
  TraceState& t = state_->traces[trace_];
  ++g.calls;
  g.time_ns += static_cast<uint64_t>(d);
  g.durations.Add(d);
  DeviceAcc& dev = DeviceUnion(a.device_id());
  dev.busy.Add(a.start_ns(), a.end_ns(), a.has_launch_ns() ? a.launch_ns() : GapStats::kNoLaunch);
  dev.kernel_time_ns += static_cast<uint64_t>(d);
  (g.comm ? dev.comm : dev.compute).Add(a.start_ns(), a.end_ns());
  dev.all.Add(a.start_ns(), a.end_ns());
  if (g.comm) AddCollective(g, a, static_cast<uint64_t>(d));
  UnionAcc& stream = StreamUnion(a.device_id(), a.stream_id());
  stream.busy.Add(a.start_ns(), a.end_ns());
  stream.kernel_time_ns += static_cast<uint64_t>(d);
  t.first_ns = std::min(t.first_ns, a.start_ns());
  t.last_ns = std::max(t.last_ns, a.end_ns());
  AddDevice(&g.devices, a.device_id());
  AddTraceTime(&g.per_trace, trace_, 1, static_cast<uint64_t>(d));
  if (!a.nvtx_path().empty()) {
    const PathInfo& p = PathOf(a.nvtx_path());
    p.range->time_ns += static_cast<uint64_t>(d);
    p.range->calls += 1;
    if (p.decode_step && a.has_launch_ns()) {
      state_->traces[trace_].decode_steps.AddKernel(a.launch_ns(), a.pid(), a.tid(),
                                                    a.start_ns(), a.end_ns());
    }
    if (p.step >= 0) {
      if (last_step_acc_ == nullptr || last_step_ != p.step) {
        last_step_acc_ = &state_->steps[p.step];
        last_step_ = p.step;
      }
      StepAcc& s = *last_step_acc_;
      s.first_ns = std::min(s.first_ns, a.start_ns());
      s.last_ns = std::max(s.last_ns, a.end_ns());
      s.time_ns += static_cast<uint64_t>(d);
      s.count += 1;
      if (g.comm) {
        s.comm_time_ns += static_cast<uint64_t>(d);
        s.comm_count += 1;
      }
      if (state_->timeline.Wants(p.step)) {
        state_->timeline.Add(p.step,
                             SampledLaunch{a.start_ns(), d, group, trace_, a.device_id(),
                                           a.stream_id(), a.nvtx_path()},
                             state_->names());
      }
    }
  }
  if (HasUsableWork(a)) {
    g.work_bytes += a.work().bytes();
    g.work_flops += a.work().flops();
    g.work_time_ns += static_cast<double>(d);
    ++g.work_launches;
  }
  if (a.has_metrics()) {
    const proto::KernelMetrics& m = a.metrics();
    if (m.has_tensor_pipe_pct()) { g.tp_sum += m.tensor_pipe_pct() * d; g.tp_weight += d; }
    if (m.has_fma_pipe_pct()) { g.fma_sum += m.fma_pipe_pct() * d; g.fma_weight += d; }
    if (m.has_dram_throughput_pct()) { g.dram_sum += m.dram_throughput_pct() * d; g.dram_weight += d; }
  }
}

int32_t TraceAccumulator::ShapeWorkOf(KernelGroup& g, uint32_t group, const proto::Activity& a) {
  const proto::LaunchContext& ctx = a.launch_context();
  // A replayed kernel without a capture resolves through its modelled op call, a stack of
  // its own (never a launch's stack), so the cache key stays unique.
  const bool modelled = ctx.graph_launch() && !ctx.graph_capture() && ctx.modelled_stack() != 0;
  if (ctx.stack() == 0 && !modelled) return -1;
  const uint32_t step = ctx.graph_launch() ? ReplayStep(a.nvtx_path()) : 0;
  const WorkKey key = modelled ? WorkKey{last_raw_, ctx.modelled_stack(), ctx.modelled_op_kernels(),
                                         ctx.modelled_op_kernels(), true, step}
                               : WorkKey{last_raw_, ctx.stack(), ctx.op_kernels(),
                                         ctx.outer_op_kernels(), ctx.graph_launch(), step};
  CachedWork c;
  if (key == last_work_key_ && last_work_.group == group) {
    c = last_work_;
  } else {
    auto it = work_cache_.find(key);
    if (it == work_cache_.end() || it->second.group != group) {
      // Once per distinct (kernel, stack, call kernel lists) of the trace.
      const std::string& raw = a.name().empty() ? a.mangled_name() : a.name();
      const work::IterationAnnotation* annotation = steps_[step] ? &*steps_[step] : nullptr;
      work::LaunchWorkResult r = work::ResolveLaunchWork(tables_, ctx, raw, annotation);
      c.group = group;
      std::string error;
      if (r.outcome == work::LaunchOutcome::kWork) {
        c.entry = g.ShapeEntry(r.work);
        if (r.work.from_capture && r.work.work.kind == work::kind::kGemm) {
          c.gemm_rows = GemmRows(tables_, ctx.stack());
        }
      } else if (r.outcome == work::LaunchOutcome::kInvalid) {
        c.entry = -2;
        error = std::move(r.error);
      }
      if (work_cache_.size() >= kMaxCacheEntries) {
        work_cache_.clear();
        work_errors_.clear();
      }
      if (c.entry == -2) {
        c.error = static_cast<uint32_t>(work_errors_.size());
        work_errors_.push_back(std::move(error));
      }
      it = work_cache_.insert_or_assign(key, c).first;
    }
    c = it->second;
    last_work_key_ = key;
    last_work_ = c;
  }
  if (c.gemm_rows > 0 && a.start_ns() < state_->traces[trace_].first_replay_gemm_ns) {
    TraceState& t = state_->traces[trace_];
    t.first_replay_gemm_ns = a.start_ns();
    t.first_replay_gemm_rows = c.gemm_rows;
    t.first_replay_gemm = g.shape_work[static_cast<size_t>(c.entry)].work.work.description;
  }
  if (c.entry == -2) {
    const std::string& e = work_errors_[c.error];
    if (g.shape_invalid == 0 || e < g.shape_invalid_example) g.shape_invalid_example = e;
    ++g.shape_invalid;
  }
  return c.entry;
}

uint32_t TraceAccumulator::ReplayStep(const std::string& nvtx_path) {
  if (nvtx_path.empty()) return 0;
  if (last_step_id_ != 0 && nvtx_path == last_step_path_) return last_step_id_;
  auto it = step_of_path_.find(nvtx_path);
  if (it == step_of_path_.end()) {
    if (step_of_path_.size() >= kMaxCacheEntries) {  // bounded; the work cache keys on ids
      step_of_path_.clear();
      steps_.resize(1);
      work_cache_.clear();
      work_errors_.clear();
      last_work_key_ = WorkKey{UINT32_MAX, 0, 0, 0, false};
    }
    uint32_t id = 0;
    if (std::optional<work::IterationAnnotation> a = StepOfNvtxPath(nvtx_path)) {
      id = static_cast<uint32_t>(steps_.size());
      steps_.push_back(std::move(a));
    }
    it = step_of_path_.emplace(nvtx_path, id).first;
  }
  last_step_path_ = nvtx_path;
  last_step_id_ = it->second;
  return it->second;
}

void AccumulateTrace(const proto::Trace& trace, ProfileState* state) {
  TraceAccumulator acc(state);
  importers::FeedTrace(trace, &acc);
}

}  // namespace qprof::aggregate
