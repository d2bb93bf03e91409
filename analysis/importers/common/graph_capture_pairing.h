// The pairing strategies behind GraphCaptureJoiner (graph_capture.h): a replay's kernels
// in lane order, paired with one capture by kernel name or by launch order and count, and
// the choice of a capture among several. Internal to the join; exposed for its tests.
#ifndef QPROF_ANALYSIS_IMPORTERS_COMMON_GRAPH_CAPTURE_PAIRING_H_
#define QPROF_ANALYSIS_IMPORTERS_COMMON_GRAPH_CAPTURE_PAIRING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/importers/common/graph_capture.h"

namespace qprof::importers::internal {

// The kernels of a replay in lane order: per (device, stream) in start order, lanes ordered
// by their first kernel's start. `lanes` holds the lane sizes.
struct LaneOrder {
  std::vector<uint32_t> order;  // input index of each position
  std::vector<uint32_t> lanes;
};
LaneOrder OrderByLane(const std::vector<ReplayKernel>& k);

// `k` in lane order, `lanes` its lane sizes, `names` each kernel's GraphCaptureSet name id.
ReplayMatch MatchReplay(const GraphCaptureSet& set, const std::vector<ReplayKernel>& k,
                        const std::vector<uint32_t>& lanes, const std::vector<uint32_t>& names);

}  // namespace qprof::importers::internal

#endif  // QPROF_ANALYSIS_IMPORTERS_COMMON_GRAPH_CAPTURE_PAIRING_H_
