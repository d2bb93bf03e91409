// CUDA-graph captures in Kineto documents (PendingTrace's capture half): reading the
// launches of a graph-capture trace, and giving a replay trace's graph kernels their
// capture-time contexts. The pairing itself is common/graph_capture.h's.
#include <algorithm>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/step_names.h"
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
                           const std::string& kernel, const uint32_t grid[3],
                           const uint32_t block[3]) {
  if (!keep_calls_) return;
  Call c{thread, ts_ns, std::max<int64_t>(dur_ns, 0), ApiIndex(api, PrehashedStrings::Hash(api)),
         kernel.empty() ? 0 : NameIndex(kernel) + 1};
  std::copy(grid, grid + 3, c.grid);
  std::copy(block, block + 3, c.block);
  calls_.push_back(c);
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
    std::string annotation;
    if (ctx.stack() != 0) {
      const proto::LaunchStack& st = set->tables.stacks(static_cast<int>(ctx.stack()));
      for (int k = st.frames_size(); k-- > 0;) {
        const proto::LaunchFrame& f = set->tables.frames(static_cast<int>(st.frames(k)));
        if (f.kind() == "user_annotation") {
          annotation = f.name();
          absl::StrAppend(&c.label, " (", f.name(), ")");
          break;
        }
      }
    }
    c.file = label;
    c.annotation = annotation;
    c.batch = CaptureBatch(annotation, label, &c.batch_source);
    if (!ended) absl::StrAppend(&c.label, " [no end of capture in the trace]");
    c.named = true;
    const int64_t window_start = begin.ts_ns + begin.dur_ns;
    int64_t last_end = window_start;
    // Op calls numbered within the capture (the builder's ids are frame addresses).
    std::unordered_map<uint64_t, uint32_t> call_ids;
    auto call_id = [&call_ids](uint64_t id) -> uint32_t {
      if (id == 0) return 0;
      return call_ids.try_emplace(id, static_cast<uint32_t>(call_ids.size() + 1)).first->second;
    };
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
      const LaunchContextBuilder::OpCalls& calls = cpu_contexts_.last_op_calls();
      l.inner_call = call_id(calls.inner);
      l.outer_call = call_id(calls.outer);
      l.inner_op = set->InternOp(calls.inner_name);
      std::copy(call.grid, call.grid + 3, l.grid);
      std::copy(call.block, call.block + 3, l.block);
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

namespace {

// The tensor-parallel degree modelled replays split their layers by: --tp, else the
// trace's world size (Kineto distributedInfo), else 1; and where it came from.
uint32_t ModelTp(const LayerModel& m, const proto::TraceHeader& header, std::string* source) {
  if (m.tp > 0) {
    *source = "--tp";
    return m.tp;
  }
  auto it = header.run().extra().find("distributed.world_size");
  uint32_t world = 0;
  if (it != header.run().extra().end() && absl::SimpleAtoi(it->second, &world) && world > 0) {
    *source = "the trace's world size, distributedInfo; --tp to set it";
    return world;
  }
  *source = "the trace gives no world size; --tp to set it";
  return 1;
}

}  // namespace

// The kernels of each graph launch (one correlation id, one runtime launch record) are one
// replay; each takes the stack of its captured launch when the pairing finds one, else,
// with a layer model, the op call the model's layer order gives it.
void PendingTrace::JoinGraphCaptures(const GraphCaptureSet* set, const LayerModel* model,
                                     proto::TraceHeader* header) {
  proto::LaunchContextStats* stats = header->mutable_launch_context_stats();
  std::vector<uint32_t> graph;
  for (uint32_t i = 0; i < gpu_.size(); ++i) {
    const PendingGpu& p = gpu_[i];
    if (p.kind == proto::ACTIVITY_KIND_KERNEL && p.graph_launch && p.launch >= 0) graph.push_back(i);
  }
  if (graph.empty()) return;
  std::stable_sort(graph.begin(), graph.end(),
                   [this](uint32_t a, uint32_t b) { return gpu_[a].launch < gpu_[b].launch; });
  LaunchStackTable table(stats);
  std::optional<GraphCaptureJoiner> joiner;
  if (set != nullptr) joiner.emplace(set, &table, stats->mutable_graph_capture());
  std::optional<ReplayModeller> modeller;
  if (model != nullptr) {
    std::string tp_source;
    const uint32_t tp = ModelTp(*model, *header, &tp_source);
    modeller.emplace(model, tp, std::move(tp_source), &table, stats->mutable_graph_capture());
  }
  std::vector<ReplayKernel> replay;
  std::vector<ReplayPairing> pairing;
  // The batch the step around a graph launch names (its innermost decode-step range).
  std::unordered_map<const std::string*, uint32_t> step_batch;
  auto batch_of = [&step_batch](const std::string* path) -> uint32_t {
    if (path == nullptr) return 0;
    auto [it, inserted] = step_batch.try_emplace(path, 0);
    if (inserted) {
      const std::string_view p(*path);
      for (size_t begin = 0; begin <= p.size();) {
        const size_t end = std::min(p.find('/', begin), p.size());
        const DecodeStepName d = ParseDecodeStepName(p.substr(begin, end - begin));
        if (d.kind != DecodeStepName::kNone) it->second = d.padded_tokens;
        begin = end + 1;
      }
    }
    return it->second;
  };
  for (size_t b = 0; b < graph.size();) {
    size_t e = b;
    replay.clear();
    while (e < graph.size() && gpu_[graph[e]].launch == gpu_[graph[b]].launch) {
      const PendingGpu& p = gpu_[graph[e]];
      ReplayKernel& k = replay.emplace_back();
      k.device = p.device;
      k.stream = p.stream;
      k.start = p.start;
      k.name_key = p.name;
      k.name = names_[p.name];
      std::copy(p.grid, p.grid + 3, k.grid);
      std::copy(p.block, p.block + 3, k.block);
      k.step_batch = batch_of(p.path);
      ++e;
    }
    bool paired = false;
    if (joiner) {
      joiner->JoinReplay(replay, &pairing);
      for (size_t k = 0; k < pairing.size(); ++k) {
        if (pairing[k].stack == 0) continue;
        PendingGpu& p = gpu_[graph[b + k]];
        if (p.stack == 0) stats->set_with_context(stats->with_context() + 1);
        p.stack = pairing[k].stack;
        p.op_kernels = pairing[k].op_kernels;
        p.outer_op_kernels = pairing[k].outer_op_kernels;
        p.graph_capture = true;
        paired = true;
      }
    }
    if (modeller && !paired) {
      modeller->Model(replay, &pairing);
      for (size_t k = 0; k < pairing.size(); ++k) {
        if (pairing[k].stack != 0) modelled_[graph[b + k]] = pairing[k];
      }
    }
    b = e;
  }
  if (joiner) joiner->Finish();
  if (modeller) modeller->Finish();
}

}  // namespace qprof::importers
