// How many graph-replayed kernel launches carry work, and from what: their capture's op
// calls, the model's layers (modelled), or nothing. Read from the groups' work entries
// (group_work.h), MoE calls counted only when the model's shape resolves them.
#ifndef QPROF_ANALYSIS_AGGREGATE_REPLAY_WORK_H_
#define QPROF_ANALYSIS_AGGREGATE_REPLAY_WORK_H_

#include "analysis/aggregate/accumulator.h"
#include "analysis/work/model_shape.h"
#include "proto/profile.pb.h"

namespace qprof::aggregate {

// Sets s->graph_work_* and the line; nothing when the traces ran no graph replays.
void FillReplayWork(const ProfileState& state, const work::ModelShape* model,
                    proto::LaunchSummary* s);

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_REPLAY_WORK_H_
