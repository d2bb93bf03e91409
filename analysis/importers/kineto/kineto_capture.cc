// CUDA-graph captures in Kineto documents (PendingTrace's capture half): reading the
// launches of a graph-capture trace, and giving a replay trace's graph kernels their
// capture-time contexts. The pairing itself is common/graph_capture.h's.
#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "analysis/importers/kineto/kineto_pending.h"

namespace qprof::importers {
namespace {

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// A call that launches one kernel (not a graph, not a host function).
bool IsKernelLaunch(std::string_view api) {
  return IsLaunchCall(api) && !Contains(api, "GraphLaunch");
}

}  // namespace

void PendingTrace::AddCall(ThreadKey thread, int64_t ts_ns, int64_t dur_ns, const std::string& api,
                           const std::string& kernel) {
  if (!keep_calls_) return;
  calls_.push_back({thread, ts_ns, std::max<int64_t>(dur_ns, 0),
                    ApiIndex(api, PrehashedStrings::Hash(api)),
                    kernel.empty() ? 0 : NameIndex(kernel) + 1});
}

// A capture is the calls on one thread from the end of a *StreamBeginCapture call to the
// start of the next *StreamEndCapture on that thread (CUDA and HIP alike; stream capture
// is per thread in the modes PyTorch uses). Kernel launches among them, in call order, are
// the graph's kernel nodes; a launch call inside another (a driver launch under a runtime
// launch) is the same launch and is left out.
void PendingTrace::BuildCaptures(const std::string& label, GraphCaptureSet* set) {
  std::stable_sort(calls_.begin(), calls_.end(), [](const Call& a, const Call& b) {
    if (!(a.thread == b.thread)) return a.thread < b.thread;
    return a.ts_ns < b.ts_ns;
  });
  LaunchStackTable table(&set->tables);
  proto::LaunchContext ctx;
  int count = 0;
  for (size_t i = 0; i < calls_.size(); ++i) {
    if (!Contains(api_names_[calls_[i].api], "StreamBeginCapture")) continue;
    const Call& begin = calls_[i];
    size_t j = i + 1;
    while (j < calls_.size() && calls_[j].thread == begin.thread &&
           !Contains(api_names_[calls_[j].api], "StreamEndCapture")) {
      ++j;
    }
    const bool ended = j < calls_.size() && calls_[j].thread == begin.thread;
    GraphCapture c;
    c.label = absl::StrCat(label, " #", ++count);
    // The innermost annotation open at the begin call names the capture
    // ("capture_32_DECODE" in SGLang's capture traces).
    ctx.Clear();
    cpu_contexts_.ContextAt(begin.thread, begin.ts_ns, "", false, &table, &ctx);
    if (ctx.stack() != 0) {
      const proto::LaunchStack& st = set->tables.stacks(static_cast<int>(ctx.stack()));
      for (int k = st.frames_size(); k-- > 0;) {
        const proto::LaunchFrame& f = set->tables.frames(static_cast<int>(st.frames(k)));
        if (f.kind() == "user_annotation") {
          absl::StrAppend(&c.label, " (", f.name(), ")");
          break;
        }
      }
    }
    if (!ended) absl::StrAppend(&c.label, " [no end of capture in the trace]");
    c.named = true;
    const int64_t window_start = begin.ts_ns + begin.dur_ns;
    int64_t last_end = window_start;
    for (size_t k = i + 1; k < j; ++k) {
      const Call& call = calls_[k];
      const std::string& api = api_names_[call.api];
      if (!IsKernelLaunch(api) || call.ts_ns < window_start) continue;
      if (!c.kernels.empty() && call.ts_ns < last_end) continue;  // inside the last launch call
      last_end = call.ts_ns + call.dur_ns;
      ctx.Clear();
      cpu_contexts_.ContextAt(call.thread, call.ts_ns, api, false, &table, &ctx);
      CapturedLaunch l;
      l.stack = ctx.stack();
      if (call.kernel != 0) {
        l.name = set->InternName(names_[call.kernel - 1]);
      } else {
        c.named = false;
      }
      c.kernels.push_back(l);
    }
    if (c.kernels.empty()) {
      set->warnings.push_back(absl::StrCat(c.label, ": no kernel launches inside the capture"));
    } else {
      set->captures.push_back(std::move(c));
    }
    i = ended ? j : calls_.size();
  }
  calls_.clear();
}

// The kernels of each graph launch (one correlation id, one runtime launch record) are one
// replay; each takes the stack of its captured launch when the pairing finds one.
void PendingTrace::JoinGraphCaptures(const GraphCaptureSet& set,
                                     proto::LaunchContextStats* stats) {
  std::vector<uint32_t> graph;
  for (uint32_t i = 0; i < gpu_.size(); ++i) {
    const PendingGpu& p = gpu_[i];
    if (p.kind == proto::ACTIVITY_KIND_KERNEL && p.graph_launch && p.launch >= 0) graph.push_back(i);
  }
  std::stable_sort(graph.begin(), graph.end(),
                   [this](uint32_t a, uint32_t b) { return gpu_[a].launch < gpu_[b].launch; });
  LaunchStackTable table(stats);
  GraphCaptureJoiner joiner(&set, &table, stats->mutable_graph_capture());
  std::vector<ReplayKernel> replay;
  std::vector<uint32_t> stacks;
  for (size_t b = 0; b < graph.size();) {
    size_t e = b;
    replay.clear();
    while (e < graph.size() && gpu_[graph[e]].launch == gpu_[graph[b]].launch) {
      const PendingGpu& p = gpu_[graph[e]];
      replay.push_back({p.device, p.stream, p.start, p.name, names_[p.name]});
      ++e;
    }
    joiner.JoinReplay(replay, &stacks);
    for (size_t k = 0; k < stacks.size(); ++k) {
      if (stacks[k] == 0) continue;
      PendingGpu& p = gpu_[graph[b + k]];
      if (p.stack == 0) stats->set_with_context(stats->with_context() + 1);
      p.stack = stacks[k];
      p.graph_capture = true;
    }
    b = e;
  }
  joiner.Finish();
}

}  // namespace qprof::importers
