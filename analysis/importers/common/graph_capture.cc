#include "analysis/importers/common/graph_capture.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace qprof::importers {
namespace {

constexpr size_t kNever = std::numeric_limits<size_t>::max();

// The kernels of a replay in lane order: per (device, stream) in start order, lanes ordered
// by their first kernel's start. `lanes` holds the lane sizes.
struct LaneOrder {
  std::vector<uint32_t> order;  // input index of each position
  std::vector<uint32_t> lanes;
};

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

// By launch order and count (no kernel names): one stream, equal counts.
Pairing PairByOrder(const GraphCapture& c, const std::vector<ReplayKernel>& k,
                    const std::vector<uint32_t>& lanes) {
  Pairing p;
  p.launch.assign(k.size(), -1);
  if (lanes.size() != 1) {
    p.reason = absl::StrCat("the replay runs on ", lanes.size(),
                            " streams and the capture records no kernel names: no launch order "
                            "to pair by");
    return p;
  }
  if (c.kernels.size() != k.size()) {
    p.reason = absl::StrCat("no capture without kernel names has the replay's ", k.size(),
                            " kernels (closest: '", c.label, "' with ", c.kernels.size(), ")");
    return p;
  }
  for (size_t i = 0; i < k.size(); ++i) p.launch[i] = static_cast<int32_t>(i);
  p.paired = k.size();
  return p;
}

uint64_t Gap(size_t a, size_t b) { return a > b ? a - b : b - a; }

ReplayMatch MatchReplay(const GraphCaptureSet& set, const std::vector<ReplayKernel>& k,
                        const std::vector<uint32_t>& lanes, const std::vector<uint32_t>& names) {
  ReplayMatch best;
  best.launch.assign(k.size(), -1);
  std::string closest_reason;
  uint64_t closest_gap = std::numeric_limits<uint64_t>::max();
  for (size_t ci = 0; ci < set.captures.size(); ++ci) {
    const GraphCapture& c = set.captures[ci];
    Pairing p = c.named ? PairByName(c, k, lanes, names) : PairByOrder(c, k, lanes);
    const uint64_t gap = Gap(c.kernels.size(), k.size());
    if (p.paired == 0) {
      if (gap < closest_gap) {
        closest_gap = gap;
        closest_reason = std::move(p.reason);
      }
      continue;
    }
    if (p.paired == best.paired && best.capture >= 0) {
      ++best.equal_candidates;
      const uint64_t best_gap = Gap(set.captures[static_cast<size_t>(best.capture)].kernels.size(),
                                    k.size());
      if (gap >= best_gap) continue;
    } else if (p.paired < best.paired) {
      continue;
    } else {
      best.equal_candidates = 0;
    }
    best.capture = static_cast<int>(ci);
    best.launch = std::move(p.launch);
    best.paired = p.paired;
    best.reason = std::move(p.reason);
  }
  if (best.capture < 0) best.reason = closest_reason;
  return best;
}

}  // namespace

uint32_t GraphCaptureSet::InternName(const std::string& name) {
  if (name.empty()) return 0;
  auto [it, inserted] = index_.try_emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(name);
  return it->second;
}

uint32_t GraphCaptureSet::FindName(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? 0 : it->second;
}

GraphCaptureJoiner::GraphCaptureJoiner(const GraphCaptureSet* set, LaunchStackTable* table,
                                       proto::GraphCaptureJoin* stats)
    : set_(set), table_(table), stats_(stats) {}

uint32_t GraphCaptureJoiner::SetName(const ReplayKernel& k) {
  auto [it, inserted] = names_.try_emplace(k.name_key, 0);
  if (inserted) it->second = set_->FindName(std::string(k.name));
  return it->second;
}

uint32_t GraphCaptureJoiner::TableStack(uint32_t set_stack) {
  if (set_stack == 0) return 0;
  auto [it, inserted] = stacks_.try_emplace(set_stack, 0);
  if (inserted) it->second = table_->CopyStack(set_->tables, set_stack);
  return it->second;
}

void GraphCaptureJoiner::JoinReplay(const std::vector<ReplayKernel>& kernels,
                                    std::vector<uint32_t>* stacks) {
  stacks->assign(kernels.size(), 0);
  if (kernels.empty()) return;
  const LaneOrder lo = OrderByLane(kernels);
  std::vector<ReplayKernel> ordered;
  ordered.reserve(kernels.size());
  set_names_.clear();
  // The signature: lane sizes, then the name keys in lane order.
  std::string key;
  key.reserve((lo.lanes.size() + kernels.size()) * sizeof(uint32_t));
  for (uint32_t n : lo.lanes) key.append(reinterpret_cast<const char*>(&n), sizeof(n));
  for (uint32_t i : lo.order) {
    ordered.push_back(kernels[i]);
    set_names_.push_back(SetName(kernels[i]));
    key.append(reinterpret_cast<const char*>(&kernels[i].name_key), sizeof(uint32_t));
  }
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    it = cache_.emplace(std::move(key), MatchReplay(*set_, ordered, lo.lanes, set_names_)).first;
  }
  const ReplayMatch& m = it->second;
  Use& use = uses_[m.capture];
  ++use.replays;
  use.paired += m.paired;
  use.unpaired += kernels.size() - m.paired;
  use.equal_candidates = std::max(use.equal_candidates, m.equal_candidates);
  if (m.paired < kernels.size()) reasons_[m.reason] += kernels.size() - m.paired;
  for (size_t pos = 0; pos < lo.order.size(); ++pos) {
    if (m.launch[pos] < 0) continue;
    const GraphCapture& c = set_->captures[static_cast<size_t>(m.capture)];
    (*stacks)[lo.order[pos]] = TableStack(c.kernels[static_cast<size_t>(m.launch[pos])].stack);
  }
  stats_->set_replays(stats_->replays() + 1);
  stats_->set_kernels(stats_->kernels() + kernels.size());
  stats_->set_matched(stats_->matched() + m.paired);
  stats_->set_unmatched(stats_->unmatched() + kernels.size() - m.paired);
}

void GraphCaptureJoiner::Finish() {
  for (const std::string& s : set_->sources) stats_->add_sources(s);
  stats_->set_captures(static_cast<uint32_t>(set_->captures.size()));
  stats_->set_method(
      "graph replay kernels paired with the launches recorded while the graph was captured: by "
      "kernel name where the capture's launch records name the kernel (ROCm), else by launch "
      "order and count on one stream (CUDA)");
  for (const auto& [capture, use] : uses_) {
    if (capture < 0) continue;
    const GraphCapture& c = set_->captures[static_cast<size_t>(capture)];
    proto::GraphCaptureUse* u = stats_->add_uses();
    u->set_capture(c.label);
    u->set_method(c.named ? "kernel names" : "launch order and count");
    u->set_replays(use.replays);
    u->set_matched(use.paired);
    u->set_unmatched(use.unpaired);
    u->set_equal_candidates(use.equal_candidates);
  }
  if (auto none = uses_.find(-1); none != uses_.end()) {
    stats_->set_replays_without_capture(none->second.replays);
  }
  // A few reasons, most kernels first.
  std::vector<std::pair<uint64_t, std::string>> reasons;
  for (const auto& [r, n] : reasons_) reasons.emplace_back(n, r);
  std::sort(reasons.begin(), reasons.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; i < reasons.size() && i < 4; ++i) {
    stats_->add_notes(absl::StrCat(reasons[i].first, " kernels: ", reasons[i].second));
  }
  for (const std::string& w : set_->warnings) stats_->add_notes(w);
}

}  // namespace qprof::importers
