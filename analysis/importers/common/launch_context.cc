#include "analysis/importers/common/launch_context.h"

#include <algorithm>
#include <initializer_list>

namespace qprof::importers {
namespace {

std::string StackKey(const std::vector<uint32_t>& frames, uint32_t dropped) {
  std::string key(reinterpret_cast<const char*>(frames.data()), frames.size() * sizeof(uint32_t));
  key += std::to_string(dropped);
  return key;
}

}  // namespace

std::string PackShapes(std::string_view dims, std::string_view types, std::string_view concrete) {
  if (dims.empty() && types.empty() && concrete.empty()) return "";
  std::string out;
  out.reserve(dims.size() + types.size() + concrete.size() + 2);
  out.append(dims).push_back('\x1f');
  out.append(types).push_back('\x1f');
  out.append(concrete);
  return out;
}

void UnpackShapes(std::string_view packed, proto::LaunchFrame* frame) {
  if (packed.empty()) return;
  const size_t a = packed.find('\x1f');
  const size_t b = a == std::string_view::npos ? a : packed.find('\x1f', a + 1);
  if (b == std::string_view::npos) return;
  frame->set_input_dims(std::string(packed.substr(0, a)));
  frame->set_input_types(std::string(packed.substr(a + 1, b - a - 1)));
  frame->set_concrete_inputs(std::string(packed.substr(b + 1)));
}

namespace {

bool ContainsAny(std::string_view s, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) {
    if (s.find(p) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

std::string StripNvtxCallNumbers(std::string_view name) {
  if (name.find(", seq = ") == std::string_view::npos &&
      name.find(", op_id = ") == std::string_view::npos &&
      name.find(", input_op_ids = ") == std::string_view::npos) {
    return std::string(name);
  }
  std::string out;
  size_t i = 0;
  while (i < name.size()) {
    size_t next = name.find(", ", i + 1);
    if (i == 0) {  // the op name itself
      out.append(name.substr(0, next));
    } else {
      std::string_view part = name.substr(i, next == std::string_view::npos ? next : next - i);
      // ", key = value": sizes may hold ", " inside its brackets.
      if (part.rfind(", sizes = ", 0) == 0) {
        out.append(name.substr(i));  // sizes runs to the end or to input_op_ids
        size_t ids = out.find(", input_op_ids = ");
        if (ids != std::string::npos) out.resize(ids);
        break;
      }
      if (part.rfind(", input_op_ids = ", 0) == 0) break;  // always last
      if (part.rfind(", seq = ", 0) != 0 && part.rfind(", op_id = ", 0) != 0) out.append(part);
    }
    if (next == std::string_view::npos) break;
    i = next;
  }
  return out;
}

bool KeepConcreteValue(std::string_view op, std::string_view value) {
  if (value.empty() || value == "True" || value == "False" || value.front() == '[') return true;
  return ContainsAny(op, {"attention", "attn", "mla", "scaled_mm", "grouped_mm", "conv", "norm",
                          "moe"});
}

uint32_t KernelSetTable::Intern(std::vector<std::pair<std::string_view, std::string_view>>* kernels) {
  std::sort(kernels->begin(), kernels->end());
  if (kernels->empty()) return 0;
  // Distinct (kernel, inner op) with counts.
  std::vector<std::pair<std::pair<std::string_view, std::string_view>, uint32_t>> counted;
  for (const auto& k : *kernels) {
    if (!counted.empty() && counted.back().first == k) {
      ++counted.back().second;
    } else {
      counted.push_back({k, 1});
    }
  }
  if (counted.size() > kMaxKernels) return 0;
  std::string key;
  for (const auto& [k, n] : counted) {
    key.append(k.first).push_back('\x1f');
    key.append(k.second).push_back('\x1f');
    key.append(std::to_string(n)).push_back('\x1e');
  }
  if (stats_->kernel_sets_size() == 0) stats_->add_kernel_sets();  // [0]: not recorded
  auto [it, inserted] = sets_.try_emplace(std::move(key), static_cast<uint32_t>(stats_->kernel_sets_size()));
  if (inserted) {
    proto::LaunchKernelSet* s = stats_->add_kernel_sets();
    for (const auto& [k, n] : counted) {
      s->add_kernels(std::string(k.first));
      s->add_inner_ops(std::string(k.second));
      s->add_launches(n);
    }
  }
  return it->second;
}

LaunchStackTable::LaunchStackTable(proto::LaunchContextStats* stats) : stats_(stats) {
  for (int i = 0; i < stats_->frames_size(); ++i) {
    const proto::LaunchFrame& f = stats_->frames(i);
    frames_.emplace(std::make_tuple(f.name(), f.kind(),
                                    PackShapes(f.input_dims(), f.input_types(), f.concrete_inputs())),
                    static_cast<uint32_t>(i));
  }
  for (int i = 1; i < stats_->stacks_size(); ++i) {
    const proto::LaunchStack& s = stats_->stacks(i);
    std::vector<uint32_t> f(s.frames().begin(), s.frames().end());
    stacks_.emplace(StackKey(f, s.frames_dropped()), static_cast<uint32_t>(i));
  }
}

uint32_t LaunchStackTable::Frame(const std::string& name, const std::string& kind,
                                 std::string_view shapes) {
  auto [it, inserted] = frames_.try_emplace(std::make_tuple(name, kind, std::string(shapes)),
                                            static_cast<uint32_t>(stats_->frames_size()));
  if (inserted) {
    proto::LaunchFrame* f = stats_->add_frames();
    f->set_name(name);
    f->set_kind(kind);
    UnpackShapes(shapes, f);
  }
  return it->second;
}

uint32_t LaunchStackTable::Stack(const std::vector<uint32_t>& frames, uint32_t dropped,
                                 bool* added) {
  if (added != nullptr) *added = false;
  if (frames.empty()) return 0;
  if (stats_->stacks_size() == 0) stats_->add_stacks();  // stacks[0]: the empty stack
  auto [it, inserted] =
      stacks_.try_emplace(StackKey(frames, dropped), static_cast<uint32_t>(stats_->stacks_size()));
  if (inserted) {
    proto::LaunchStack* s = stats_->add_stacks();
    for (uint32_t f : frames) s->add_frames(f);
    s->set_frames_dropped(dropped);
    if (added != nullptr) *added = true;
  }
  return it->second;
}

uint32_t LaunchStackTable::CopyStack(const proto::LaunchContextStats& from, uint32_t stack) {
  if (stack == 0 || stack >= static_cast<uint32_t>(from.stacks_size())) return 0;
  const proto::LaunchStack& s = from.stacks(static_cast<int>(stack));
  std::vector<uint32_t> frames;
  frames.reserve(static_cast<size_t>(s.frames_size()));
  for (uint32_t f : s.frames()) {
    if (f >= static_cast<uint32_t>(from.frames_size())) continue;
    const proto::LaunchFrame& src = from.frames(static_cast<int>(f));
    const int before = stats_->frames_size();
    // Keyed by the shapes too: the capture's op calls of one name (every aten::mm of a
    // decode step) are distinct frames, each with its own shapes.
    const uint32_t id = Frame(src.name(), src.kind(),
                              PackShapes(src.input_dims(), src.input_types(), src.concrete_inputs()));
    if (stats_->frames_size() > before) *stats_->mutable_frames(static_cast<int>(id)) = src;
    frames.push_back(id);
  }
  return Stack(frames, s.frames_dropped());
}

bool LaunchContextBuilder::IsPlumbingFrame(std::string_view name) {
  if (name.rfind("<built-in method", 0) == 0) return true;
  if (name.find("torch/nn/modules/module.py(") != std::string_view::npos &&
      (name.find("_call_impl") != std::string_view::npos)) {
    return true;  // matches _call_impl and _wrapped_call_impl
  }
  return false;
}

uint32_t LaunchContextBuilder::Intern(std::string_view s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(s);
  ids_.emplace(std::string_view(strings_.back()), id);
  return id;
}

uint32_t LaunchContextBuilder::InternString(std::string_view s) {
  if (empty_id_ == UINT32_MAX) empty_id_ = Intern("");
  return Intern(s);
}

void LaunchContextBuilder::AddFrame(ThreadKey thread, int64_t start, int64_t end,
                                    std::string_view name, std::string_view kind,
                                    std::string_view shapes) {
  if (kind == "python_function" && IsPlumbingFrame(name)) return;
  const uint32_t name_id = InternString(name);
  const uint32_t kind_id = Intern(kind);
  const uint32_t shapes_id = shapes.empty() ? empty_id_ : Intern(shapes);
  AddInternedFrame(thread, start, end, name_id, kind_id, shapes_id);
}

void LaunchContextBuilder::AddInternedFrame(ThreadKey thread, int64_t start, int64_t end,
                                            uint32_t name, uint32_t kind, uint32_t shapes) {
  has_shapes_ |= shapes != empty_id_;
  threads_[thread].frames.push_back({start, end, name, kind, shapes});
  ++frame_count_;
}

void LaunchContextBuilder::Build() {
  if (built_) return;
  built_ = true;
  for (auto& [key, t] : threads_) {
    // Outer before inner at equal starts (longer first), as in RangeIndex. Stable: frames
    // with identical intervals nest in the order the source wrote them. Sources mostly
    // write a thread's frames in that order already (SortRuns).
    SortRuns(t.frames.begin(), t.frames.end(), [](const Frame& a, const Frame& b) {
      if (a.start != b.start) return a.start < b.start;
      return a.end > b.end;
    });
    // Checkpoints: the frames open at each kCheckpoint-th frame's start, so a launch looks
    // at one checkpoint and at most kCheckpoint frames after it.
    std::vector<uint32_t> open;
    for (size_t p = 0; p < t.frames.size(); p += kCheckpoint) {
      const int64_t at = t.frames[p].start;
      std::vector<uint32_t> next;
      for (uint32_t i : open) {
        if (t.frames[i].end > at) next.push_back(i);
      }
      if (p > 0) {
        for (size_t i = p - kCheckpoint; i < p; ++i) {
          if (t.frames[i].end > at) next.push_back(static_cast<uint32_t>(i));
        }
      }
      open = std::move(next);
      t.open.push_back(open);
    }
  }
}

const LaunchContextBuilder::Thread* LaunchContextBuilder::ThreadOf(ThreadKey thread) {
  if (last_ != nullptr && last_thread_ == thread) return last_;
  auto it = threads_.find(thread);
  last_thread_ = thread;
  last_ = it == threads_.end() ? nullptr : &it->second;
  return last_;
}

void LaunchContextBuilder::FramesAt(const Thread& t, int64_t time,
                                    std::vector<const Frame*>* out) const {
  out->clear();
  // Frames starting at the launch time enclose it.
  const size_t k = static_cast<size_t>(
      std::upper_bound(t.frames.begin(), t.frames.end(), time,
                       [](int64_t v, const Frame& f) { return v < f.start; }) -
      t.frames.begin());
  if (k == 0) return;
  const size_t c = (k - 1) / kCheckpoint;
  for (uint32_t i : t.open[c]) {
    if (t.frames[i].end > time) out->push_back(&t.frames[i]);
  }
  for (size_t i = c * kCheckpoint; i < k; ++i) {
    if (t.frames[i].end > time) out->push_back(&t.frames[i]);
  }
}

bool LaunchContextBuilder::ContextAt(ThreadKey thread, int64_t time, std::string_view api,
                                     bool kernel, LaunchStackTable* table,
                                     proto::LaunchContext* ctx) {
  Build();
  proto::LaunchContextStats* stats = table->stats();
  if (!api.empty() && ctx->launch_api().empty()) ctx->set_launch_api(std::string(api));
  if (api.find("GraphLaunch") != std::string_view::npos && !ctx->graph_launch()) {
    ctx->set_graph_launch(true);
    if (kernel) stats->set_graph_launches(stats->graph_launches() + 1);
  }
  last_op_calls_ = OpCalls{};
  const Thread* t = ThreadOf(thread);
  if (t == nullptr) return false;
  FramesAt(*t, time, &scratch_);
  if (scratch_.empty()) return false;
  if (has_shapes_) {
    // The op calls around the launch: frame addresses are stable once built.
    if (cpu_op_id_ == UINT32_MAX) cpu_op_id_ = Intern("cpu_op");
    for (const Frame* f : scratch_) {
      if (f->kind != cpu_op_id_) continue;
      const uint64_t id = reinterpret_cast<uintptr_t>(f);
      if (last_op_calls_.outer == 0) last_op_calls_.outer = id;
      last_op_calls_.inner = id;
      last_op_calls_.inner_name = strings_[f->name];
    }
  }
  if (table_for_frames_ != table) {  // frame ids are per table
    table_frames_.clear();
    last_frames_.clear();
    table_for_frames_ = table;
  }
  const size_t keep = std::min<size_t>(scratch_.size(), kMaxFrames);
  const size_t dropped = scratch_.size() - keep;
  if (scratch_ == last_frames_) {  // consecutive launches mostly share their stack
    ctx->set_stack(last_stack_);
    if (kernel) {
      stats->set_with_context(stats->with_context() + 1);
      stats->set_frames_dropped(stats->frames_dropped() + dropped - KeptOuter(dropped));
    }
    return false;
  }
  last_frames_ = scratch_;
  return InternStack(dropped, kernel, table, ctx);
}

namespace {

// A serving engine's step annotation (vLLM "execute_...", SGLang "step[...", ATOM
// "prefill[..." / "decode[..."): the attention rules read the step's sequence lengths from it.
bool IsStepAnnotation(std::string_view name) {
  for (std::string_view p : {"execute_", "step[", "prefill[", "decode["}) {
    if (name.substr(0, p.size()) == p) return true;
  }
  return false;
}

}  // namespace

size_t LaunchContextBuilder::KeptOuter(size_t dropped) {
  if (dropped == 0) return 0;
  if (annotation_id_ == UINT32_MAX) annotation_id_ = Intern("user_annotation");
  size_t kept = 0;
  for (size_t i = 0; i < dropped; ++i) {
    kept += scratch_[i]->kind == annotation_id_ && IsStepAnnotation(strings_[scratch_[i]->name]);
  }
  return kept;
}

bool LaunchContextBuilder::InternStack(size_t dropped, bool kernel, LaunchStackTable* table,
                                       proto::LaunchContext* ctx) {
  proto::LaunchContextStats* stats = table->stats();
  ids_scratch_.clear();
  const size_t kept_outer = KeptOuter(dropped);
  for (size_t i = 0; i < scratch_.size(); ++i) {
    const Frame& f = *scratch_[i];
    // An outer frame past kMaxFrames is kept only when it is a step annotation.
    if (i < dropped && (kept_outer == 0 || f.kind != annotation_id_ ||
                        !IsStepAnnotation(strings_[f.name]))) {
      continue;
    }
    const TableKey key{f.name, f.kind, f.shapes};
    auto it = table_frames_.find(key);
    if (it == table_frames_.end()) {
      it = table_frames_.emplace(key, table->Frame(strings_[f.name], strings_[f.kind],
                                                   strings_[f.shapes])).first;
    }
    ids_scratch_.push_back(it->second);
  }
  bool added = false;
  last_stack_ = table->Stack(ids_scratch_, static_cast<uint32_t>(dropped - kept_outer), &added);
  ctx->set_stack(last_stack_);
  if (kernel) {
    stats->set_with_context(stats->with_context() + 1);
    stats->set_frames_dropped(stats->frames_dropped() + dropped - kept_outer);
  }
  return added;
}

void LaunchContextBuilder::AddLaunch(ThreadKey thread, int64_t time, int activity_index,
                                     std::string_view api) {
  launches_.push_back({thread, time, activity_index, std::string(api)});
}

void LaunchContextBuilder::Resolve(proto::Trace* trace, proto::LaunchContextStats* stats,
                                   bool only_if_empty) {
  proto::LaunchContextStats scratch;
  LaunchStackTable table(stats != nullptr ? stats : &scratch);
  for (const Launch& ln : launches_) {
    if (ln.index < 0 || ln.index >= trace->activities_size()) continue;
    proto::Activity* a = trace->mutable_activities(ln.index);
    if (only_if_empty && a->launch_context().stack() != 0) continue;
    ContextAt(ln.thread, ln.time, ln.api, a->kind() == proto::ACTIVITY_KIND_KERNEL, &table,
              a->mutable_launch_context());
  }
  launches_.clear();
}

}  // namespace qprof::importers
