#include "analysis/importers/common/launch_context.h"

#include <algorithm>

namespace qprof::importers {

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

uint32_t LaunchContextBuilder::GlobalFrame(uint32_t name, uint32_t kind,
                                           proto::LaunchContextStats* stats) {
  const uint64_t key = (uint64_t{name} << 32) | kind;
  auto it = global_frames_.find(key);
  if (it != global_frames_.end()) return it->second;
  // Another builder may have added the same frame to this trace's table already.
  const std::string& n = strings_[name];
  const std::string& k = strings_[kind];
  for (int i = 0; i < stats->frames_size(); ++i) {
    if (stats->frames(i).name() == n && stats->frames(i).kind() == k) {
      return global_frames_[key] = static_cast<uint32_t>(i);
    }
  }
  proto::LaunchFrame* f = stats->add_frames();
  f->set_name(n);
  f->set_kind(k);
  return global_frames_[key] = static_cast<uint32_t>(stats->frames_size() - 1);
}

uint32_t LaunchContextBuilder::GlobalStack(const std::vector<uint32_t>& frames, uint32_t dropped,
                                           proto::LaunchContextStats* stats) {
  if (stats->stacks_size() == 0) stats->add_stacks();  // stacks[0]: the empty stack
  if (global_stacks_.empty()) {
    // Stacks another builder added: index them once.
    for (int i = 1; i < stats->stacks_size(); ++i) {
      const proto::LaunchStack& s = stats->stacks(i);
      std::string key(reinterpret_cast<const char*>(s.frames().data()),
                      static_cast<size_t>(s.frames_size()) * sizeof(uint32_t));
      key += std::to_string(s.frames_dropped());
      global_stacks_.emplace(std::move(key), static_cast<uint32_t>(i));
    }
  }
  std::string key(reinterpret_cast<const char*>(frames.data()), frames.size() * sizeof(uint32_t));
  key += std::to_string(dropped);
  auto it = global_stacks_.find(key);
  if (it != global_stacks_.end()) return it->second;
  proto::LaunchStack* s = stats->add_stacks();
  for (uint32_t f : frames) s->add_frames(f);
  s->set_frames_dropped(dropped);
  const uint32_t id = static_cast<uint32_t>(stats->stacks_size() - 1);
  global_stacks_.emplace(std::move(key), id);
  return id;
}

void LaunchContextBuilder::AddFrame(ThreadKey thread, int64_t start, int64_t end,
                                    std::string_view name, std::string_view kind) {
  if (kind == "python_function" && IsPlumbingFrame(name)) return;
  frames_.push_back({thread, start, end, Intern(name), Intern(kind)});
}

void LaunchContextBuilder::AddLaunch(ThreadKey thread, int64_t time, int activity_index,
                                     std::string_view api) {
  launches_.push_back({thread, time, activity_index, Intern(api)});
}

void LaunchContextBuilder::Resolve(proto::Trace* trace, proto::LaunchContextStats* stats,
                                   bool only_if_empty) {
  // Outer before inner at equal starts (longer first), as in RangeNester.
  // Stable: frames with identical intervals nest in the order the source wrote them.
  std::stable_sort(frames_.begin(), frames_.end(), [](const Frame& a, const Frame& b) {
    if (!(a.thread == b.thread)) return a.thread < b.thread;
    if (a.start != b.start) return a.start < b.start;
    return a.end > b.end;
  });
  std::sort(launches_.begin(), launches_.end(), [](const Launch& a, const Launch& b) {
    if (!(a.thread == b.thread)) return a.thread < b.thread;
    return a.time < b.time;
  });
  std::vector<const Frame*> stack;
  std::vector<uint32_t> ids;
  proto::LaunchContextStats scratch;
  if (stats == nullptr) stats = &scratch;
  size_t f = 0, l = 0;
  while (l < launches_.size()) {
    const ThreadKey thread = launches_[l].thread;
    // Skip frames of threads that launched nothing.
    while (f < frames_.size() && frames_[f].thread < thread) ++f;
    stack.clear();
    auto pop_ended = [&stack](int64_t t) {
      while (!stack.empty() && stack.back()->end <= t) stack.pop_back();
    };
    for (; l < launches_.size() && launches_[l].thread == thread; ++l) {
      const Launch& ln = launches_[l];
      // Frames starting at the launch time enclose it.
      while (f < frames_.size() && frames_[f].thread == thread && frames_[f].start <= ln.time) {
        pop_ended(frames_[f].start);
        stack.push_back(&frames_[f++]);
      }
      // Frames that crossed instead of nesting (a user annotation opened inside a Python
      // frame that then returned) can leave ended frames under the top: drop those too.
      stack.erase(std::remove_if(stack.begin(), stack.end(),
                                 [&ln](const Frame* fr) { return fr->end <= ln.time; }),
                  stack.end());
      if (ln.index < 0 || ln.index >= trace->activities_size()) continue;
      proto::Activity* a = trace->mutable_activities(ln.index);
      if (only_if_empty && a->launch_context().stack() != 0) continue;
      proto::LaunchContext* ctx = a->mutable_launch_context();
      const std::string& api = strings_[ln.api];
      if (!api.empty() && ctx->launch_api().empty()) ctx->set_launch_api(api);
      if (api.find("GraphLaunch") != std::string::npos && !ctx->graph_launch()) {
        ctx->set_graph_launch(true);
        if (a->kind() == proto::ACTIVITY_KIND_KERNEL) stats->set_graph_launches(stats->graph_launches() + 1);
      }
      if (stack.empty()) continue;
      const size_t keep = std::min<size_t>(stack.size(), kMaxFrames);
      const size_t dropped = stack.size() - keep;
      ids.clear();
      for (size_t i = dropped; i < stack.size(); ++i) {
        ids.push_back(GlobalFrame(stack[i]->name, stack[i]->kind, stats));
      }
      ctx->set_stack(GlobalStack(ids, static_cast<uint32_t>(dropped), stats));
      if (a->kind() == proto::ACTIVITY_KIND_KERNEL) {
        stats->set_with_context(stats->with_context() + 1);
        stats->set_frames_dropped(stats->frames_dropped() + dropped);
      }
    }
  }
  frames_.clear();
  launches_.clear();
}

}  // namespace qprof::importers
