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
  auto it = ids_.find(std::string(s));
  if (it != ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(s);
  ids_.emplace(strings_.back(), id);
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
      proto::LaunchContext* ctx = a->mutable_launch_context();
      if (only_if_empty && ctx->frames_size() > 0) continue;
      const std::string& api = strings_[ln.api];
      if (!api.empty() && ctx->launch_api().empty()) ctx->set_launch_api(api);
      if (api.find("GraphLaunch") != std::string::npos && !ctx->graph_launch()) {
        ctx->set_graph_launch(true);
        if (a->kind() == proto::ACTIVITY_KIND_KERNEL && stats) stats->set_graph_launches(stats->graph_launches() + 1);
      }
      if (stack.empty()) continue;
      const size_t keep = std::min<size_t>(stack.size(), kMaxFrames);
      const size_t dropped = stack.size() - keep;
      ctx->clear_frames();
      for (size_t i = dropped; i < stack.size(); ++i) {
        proto::LaunchFrame* fr = ctx->add_frames();
        fr->set_name(strings_[stack[i]->name]);
        fr->set_kind(strings_[stack[i]->kind]);
      }
      ctx->set_frames_dropped(static_cast<uint32_t>(dropped));
      if (stats && a->kind() == proto::ACTIVITY_KIND_KERNEL) {
        stats->set_with_context(stats->with_context() + 1);
        stats->set_frames_dropped(stats->frames_dropped() + dropped);
      }
    }
  }
  frames_.clear();
  launches_.clear();
}

}  // namespace qprof::importers
