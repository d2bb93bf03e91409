#include "analysis/aggregate/replay_work.h"

#include "absl/strings/str_cat.h"

namespace qprof::aggregate {

void FillReplayWork(const ProfileState& state, const work::ModelShape* model,
                    proto::LaunchSummary* s) {
  const uint64_t replayed = state.launch_counts.graph_launches;
  if (replayed == 0) return;
  uint64_t capture = 0, modelled = 0;
  for (const KernelGroup& g : state.groups) {
    for (const ShapeWorkAcc& acc : g.shape_work) {
      const work::LaunchWork& w = acc.work;
      if (!w.from_capture && w.modelled.empty()) continue;
      if (w.needs_model) {
        work::LaunchWork resolved = w;
        if (model == nullptr || !work::ApplyModelShape(*model, &resolved).ok()) continue;
      }
      (w.modelled.empty() ? capture : modelled) += acc.launches;
    }
  }
  const uint64_t none = replayed > capture + modelled ? replayed - capture - modelled : 0;
  s->set_graph_work_capture(capture);
  s->set_graph_work_modelled(modelled);
  s->set_graph_work_none(none);
  s->set_graph_work(absl::StrCat(
      capture + modelled, " of ", replayed, " graph-replayed kernel launches carry work: ",
      capture, " from the op call that launched them at graph capture (its shapes), ", modelled,
      " modelled from --model-shape and the layer order, ", none,
      " none (not paired with a capture, a helper kernel of its call such as a split-K "
      "reduction, an op with no work rule, or an MoE call without --model-shape)"));
}

}  // namespace qprof::aggregate
