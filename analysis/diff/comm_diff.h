// The communication part of a diff: each side's exposed and hidden communication and copy
// time, and the collectives (by type, library and process group) and copy kinds (by kind and
// memory) matched across the two profiles, per unit of work (normalise.h) with their rates.
#ifndef QPROF_ANALYSIS_DIFF_COMM_DIFF_H_
#define QPROF_ANALYSIS_DIFF_COMM_DIFF_H_

#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::diff {

// Fills d's sides' comm figures and d->comm(); call after NormaliseForWork (it needs the
// units of each side).
void DiffComm(const proto::Profile& a, const proto::Profile& b, proto::Diff* d);

}  // namespace qprof::diff

#endif  // QPROF_ANALYSIS_DIFF_COMM_DIFF_H_
