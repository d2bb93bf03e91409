#include "analysis/importers/common/graph_capture_pairing.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "absl/strings/str_cat.h"

namespace qprof::importers::internal {
namespace {

constexpr size_t kNever = std::numeric_limits<size_t>::max();

struct Pairing {
  std::vector<int32_t> launch;
  uint64_t paired = 0;
  std::string reason;
};

// By kernel name (see the header): captured launches in call order, each paired with the
// earliest-starting stream head of its name; when no head has it, either the heads up to the
// next kernel of that name are kernels the capture lacks (when that kernel is nearer in the
// replay than the head's own name is in the capture) or the capture's launch is one the
// replay lacks.
Pairing PairByName(const GraphCapture& c, const std::vector<ReplayKernel>& k,
                   const std::vector<uint32_t>& lanes, const std::vector<uint32_t>& names) {
  Pairing p;
  p.launch.assign(k.size(), -1);
  std::unordered_map<uint32_t, std::vector<uint32_t>> where;  // name -> capture positions
  for (uint32_t i = 0; i < c.kernels.size(); ++i) where[c.kernels[i].name].push_back(i);
  std::vector<size_t> begin(lanes.size()), end(lanes.size()), head(lanes.size());
  for (size_t l = 0, at = 0; l < lanes.size(); at += lanes[l++]) {
    begin[l] = head[l] = at;
    end[l] = at + lanes[l];
  }
  // Calls until the capture launches `name` at or after `ci`; kNever beyond the lookahead.
  auto capture_distance = [&where](uint32_t name, uint32_t ci) -> size_t {
    auto it = where.find(name);
    if (name == 0 || it == where.end()) return kNever;
    auto pos = std::lower_bound(it->second.begin(), it->second.end(), ci);
    if (pos == it->second.end() || *pos - ci >= GraphCaptureJoiner::kLookahead) return kNever;
    return *pos - ci;
  };
  for (uint32_t ci = 0; ci < c.kernels.size(); ++ci) {
    const uint32_t n = c.kernels[ci].name;
    size_t lane = kNever;
    for (size_t l = 0; l < lanes.size(); ++l) {
      if (head[l] < end[l] && names[head[l]] == n &&
          (lane == kNever || k[head[l]].start < k[head[lane]].start)) {
        lane = l;
      }
    }
    if (lane == kNever) {
      // The nearest kernel of this name behind a lane's head, within the lookahead.
      size_t best_lane = kNever, best_at = 0;
      for (size_t l = 0; l < lanes.size(); ++l) {
        const size_t stop = std::min(end[l], head[l] + GraphCaptureJoiner::kLookahead);
        for (size_t j = head[l] + 1; j < stop; ++j) {
          if (names[j] != n) continue;
          if (best_lane == kNever || j - head[l] < best_at - head[best_lane]) {
            best_lane = l;
            best_at = j;
          }
          break;
        }
      }
      if (best_lane == kNever) continue;  // a launch the replay lacks
      const size_t replay_distance = best_at - head[best_lane];
      if (capture_distance(names[head[best_lane]], ci) <= replay_distance) continue;
      head[best_lane] = best_at;  // the heads before it are kernels the capture lacks
      lane = best_lane;
    }
    p.launch[head[lane]++] = static_cast<int32_t>(ci);
    ++p.paired;
  }
  if (p.paired < k.size()) {
    for (size_t i = 0; i < k.size(); ++i) {
      if (p.launch[i] >= 0) continue;
      std::string name(k[i].name.substr(0, 96));
      p.reason = absl::StrCat("launched by no captured call of '", c.label, "' in their place (first: ",
                              name, k[i].name.size() > 96 ? "..." : "", ")");
      break;
    }
  }
  return p;
}

// By launch order and count (no kernel names), when the counts agree. One stream: the i-th
// kernel is the i-th captured launch. Several streams (a shared expert or a second
// micro-batch on a stream of its own): the graph keeps each stream's launches in call
// order, so each stream is paired in launch order with its share of the captured launches;
// which launches went to which stream is read from the replay's start times (the streams'
// kernels merged by start stand for the call order), and the result must keep every
// captured op call on one stream (an op runs on the stream current when it was called),
// else nothing is paired and the reason says so.
Pairing PairByOrder(const GraphCapture& c, const std::vector<ReplayKernel>& k,
                    const std::vector<uint32_t>& lanes) {
  Pairing p;
  p.launch.assign(k.size(), -1);
  if (c.kernels.size() != k.size()) {
    p.reason = absl::StrCat("no capture without kernel names has the replay's ", k.size(),
                            " kernels (closest: '", c.label, "' with ", c.kernels.size(), ")");
    return p;
  }
  std::vector<uint32_t> merged(k.size()), lane_of(k.size());
  std::iota(merged.begin(), merged.end(), 0);
  for (uint32_t l = 0, at = 0; l < lanes.size(); at += lanes[l++]) {
    std::fill(lane_of.begin() + at, lane_of.begin() + at + lanes[l], l);
  }
  if (lanes.size() > 1) {
    std::stable_sort(merged.begin(), merged.end(),
                     [&k](uint32_t a, uint32_t b) { return k[a].start < k[b].start; });
    std::unordered_map<uint32_t, uint32_t> call_lane;
    for (size_t i = 0; i < merged.size(); ++i) {
      const uint32_t call = c.kernels[i].inner_call;
      if (call == 0) continue;
      auto [it, inserted] = call_lane.try_emplace(call, lane_of[merged[i]]);
      if (!inserted && it->second != lane_of[merged[i]]) {
        p.reason = absl::StrCat(
            "the replay runs on ", lanes.size(), " streams, the capture records no kernel names, "
            "and its kernels in start order would split one op call of '", c.label,
            "' over two streams: no launch order to pair by");
        return p;
      }
    }
  }
  for (size_t i = 0; i < merged.size(); ++i) p.launch[merged[i]] = static_cast<int32_t>(i);
  p.paired = k.size();
  return p;
}

uint64_t Gap(size_t a, size_t b) { return a > b ? a - b : b - a; }

bool HasGeometry(const uint32_t grid[3]) { return grid[0] != 0; }

bool SameGeometry(const CapturedLaunch& c, const ReplayKernel& r) {
  return std::equal(c.grid, c.grid + 3, r.grid) && std::equal(c.block, c.block + 3, r.block);
}

// One capture's fit to a replay, as MatchReplay ranks them.
struct Fit {
  size_t capture;
  Pairing p;
  uint64_t geometry_same = 0, geometry_differ = 0;  // paired kernels both sides give it for
  // How the capture's batch fits the batch the replay's step names: 0 the same, 1 larger
  // (the engine padded the batch up to a captured size; batch_gap says by how much), 2 not
  // known on one side, 3 smaller (a graph for fewer sequences cannot run the step).
  int batch_class = 2;
  uint64_t batch_gap = 0;
  uint64_t gap = 0;                                 // kernel counts' difference
};

// Fewer kernels whose geometry differs from their captured launch's, then the batch the
// step names, then more kernels whose geometry agrees, then the closer kernel count.
bool Better(const Fit& a, const Fit& b) {
  if (a.geometry_differ != b.geometry_differ) return a.geometry_differ < b.geometry_differ;
  if (a.batch_class != b.batch_class) return a.batch_class < b.batch_class;
  if (a.batch_gap != b.batch_gap) return a.batch_gap < b.batch_gap;
  if (a.geometry_same != b.geometry_same) return a.geometry_same > b.geometry_same;
  return a.gap < b.gap;
}

void FitBatch(uint32_t capture_batch, uint32_t step_batch, Fit* f) {
  if (capture_batch == 0 || step_batch == 0) return;
  f->batch_class = capture_batch == step_batch ? 0 : capture_batch > step_batch ? 1 : 3;
  f->batch_gap = capture_batch > step_batch ? capture_batch - step_batch : 0;
}

// Paired kernels at which two fits' captured launches have different frames or shapes.
uint64_t CallsDiffer(const GraphCaptureSet& set, const Fit& a, const Fit& b) {
  uint64_t n = 0;
  const auto& ka = set.captures[a.capture].kernels;
  const auto& kb = set.captures[b.capture].kernels;
  for (size_t i = 0; i < a.p.launch.size(); ++i) {
    const int32_t la = a.p.launch[i], lb = b.p.launch[i];
    if (la < 0 || lb < 0) {
      n += (la < 0) != (lb < 0);
      continue;
    }
    n += ka[static_cast<size_t>(la)].stack != kb[static_cast<size_t>(lb)].stack;
  }
  return n;
}

// Why `fits[0]` was taken over the other captures that pair as many kernels (sorted best
// first): "" when it alone pairs that many.
std::string ChosenBy(const GraphCaptureSet& set, const std::vector<Fit>& fits, uint32_t* equal) {
  *equal = 0;
  if (fits.size() < 2) return "";
  const Fit& a = fits[0];
  const Fit& b = fits[1];
  const std::string& la = set.captures[a.capture].label;
  if (a.geometry_differ != b.geometry_differ) {
    return absl::StrCat("launch geometry: grid and block agree with '", la, "' at ",
                        a.geometry_same, " kernels and differ at ", a.geometry_differ,
                        " (next best '", set.captures[b.capture].label, "': ", b.geometry_same,
                        " and ", b.geometry_differ, "), of ", fits.size(),
                        " captures that pair as many kernels by ",
                        set.captures[a.capture].named ? "name" : "order");
  }
  if (a.batch_class != b.batch_class || a.batch_gap != b.batch_gap) {
    return absl::StrCat("the batch the replay's step range names: '", la, "' was captured for ",
                        set.captures[a.capture].batch,
                        a.batch_class == 0 ? ", that batch" : ", the smallest captured batch above it",
                        ", of ", fits.size(), " captures that pair as many kernels");
  }
  if (a.geometry_same != b.geometry_same) {
    return absl::StrCat("launch geometry: grid and block agree with '", la, "' at ",
                        a.geometry_same, " kernels (next best '", set.captures[b.capture].label,
                        "': ", b.geometry_same, "), of ", fits.size(),
                        " captures that pair as many kernels");
  }
  if (a.gap != b.gap) {
    return absl::StrCat("kernel count: '", la, "' has the count nearest the replay's, of ",
                        fits.size(), " captures that pair as many kernels");
  }
  uint64_t differ = 0;
  for (size_t i = 1; i < fits.size() && !Better(a, fits[i]) && !Better(fits[i], a); ++i) {
    ++*equal;
    differ = std::max(differ, CallsDiffer(set, a, fits[i]));
  }
  std::string why = absl::StrCat(
      "the first in capture order of ", *equal + 1, " captures that fit equally (",
      a.geometry_same + a.geometry_differ == 0 ? "no launch geometry on both sides to tell them "
                                                 "apart"
                                               : "the same launch geometry",
      "): ");
  if (differ == 0) {
    absl::StrAppend(&why, "their op calls and shapes are the same at every kernel, so the "
                          "choice changes no context and no work");
  } else {
    absl::StrAppend(&why, "their op calls differ at up to ", differ,
                    " kernels, so those kernels' contexts and work are the first capture's");
  }
  return why;
}

}  // namespace

LaneOrder OrderByLane(const std::vector<ReplayKernel>& k) {
  LaneOrder lo;
  lo.order.resize(k.size());
  std::iota(lo.order.begin(), lo.order.end(), 0);
  std::stable_sort(lo.order.begin(), lo.order.end(), [&k](uint32_t a, uint32_t b) {
    if (k[a].device != k[b].device) return k[a].device < k[b].device;
    if (k[a].stream != k[b].stream) return k[a].stream < k[b].stream;
    return k[a].start < k[b].start;
  });
  struct Lane {
    size_t begin, size;
  };
  std::vector<Lane> lanes;
  for (size_t i = 0; i < lo.order.size(); ++i) {
    const ReplayKernel& x = k[lo.order[i]];
    if (i == 0 || x.device != k[lo.order[i - 1]].device || x.stream != k[lo.order[i - 1]].stream) {
      lanes.push_back({i, 0});
    }
    ++lanes.back().size;
  }
  std::stable_sort(lanes.begin(), lanes.end(), [&](const Lane& a, const Lane& b) {
    return k[lo.order[a.begin]].start < k[lo.order[b.begin]].start;
  });
  std::vector<uint32_t> order;
  order.reserve(lo.order.size());
  for (const Lane& l : lanes) {
    order.insert(order.end(), lo.order.begin() + l.begin, lo.order.begin() + l.begin + l.size);
    lo.lanes.push_back(static_cast<uint32_t>(l.size));
  }
  lo.order = std::move(order);
  return lo;
}

ReplayMatch MatchReplay(const GraphCaptureSet& set, const std::vector<ReplayKernel>& k,
                        const std::vector<uint32_t>& lanes, const std::vector<uint32_t>& names) {
  ReplayMatch best;
  best.launch.assign(k.size(), -1);
  std::string closest_reason;
  uint64_t closest_gap = std::numeric_limits<uint64_t>::max();
  std::vector<Fit> fits;  // those that pair the most kernels
  for (size_t ci = 0; ci < set.captures.size(); ++ci) {
    const GraphCapture& c = set.captures[ci];
    Fit f{ci, c.named ? PairByName(c, k, lanes, names) : PairByOrder(c, k, lanes)};
    f.gap = Gap(c.kernels.size(), k.size());
    FitBatch(c.batch, k.empty() ? 0 : k[0].step_batch, &f);
    if (f.p.paired == 0) {
      if (f.gap < closest_gap) {
        closest_gap = f.gap;
        closest_reason = std::move(f.p.reason);
      }
      continue;
    }
    if (!fits.empty() && f.p.paired < fits[0].p.paired) continue;
    if (!fits.empty() && f.p.paired > fits[0].p.paired) fits.clear();
    for (size_t i = 0; i < k.size(); ++i) {
      const int32_t l = f.p.launch[i];
      if (l < 0 || !HasGeometry(k[i].grid)) continue;
      const CapturedLaunch& cl = c.kernels[static_cast<size_t>(l)];
      if (!HasGeometry(cl.grid)) continue;
      ++(SameGeometry(cl, k[i]) ? f.geometry_same : f.geometry_differ);
    }
    fits.push_back(std::move(f));
  }
  if (fits.empty()) {
    best.reason = closest_reason;
    return best;
  }
  std::stable_sort(fits.begin(), fits.end(), Better);
  best.chosen_by = ChosenBy(set, fits, &best.equal_candidates);
  Fit& f = fits[0];
  best.capture = static_cast<int>(f.capture);
  best.launch = std::move(f.p.launch);
  best.paired = f.p.paired;
  best.reason = std::move(f.p.reason);
  return best;
}

}  // namespace qprof::importers::internal
