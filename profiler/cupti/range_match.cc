#include "profiler/cupti/range_match.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace qprof::profiler::cupti {

// ---- LaunchSequence ----------------------------------------------------------------------

LaunchSequence::Segment& LaunchSequence::Open(SegmentKind kind, uint64_t thread) {
  (void)thread;
  Segment s;
  s.kind = kind;
  s.first = entries_.size();
  segments_.push_back(s);
  return segments_.back();
}

bool LaunchSequence::Push(const std::string& kernel, LaunchShape shape, uint64_t node,
                          uint64_t thread) {
  if (entries_.size() >= capacity_) {
    ++past_limit_;
    return false;
  }
  auto [it, inserted] = name_index_.emplace(kernel, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(kernel);
  entries_.push_back(
      Entry{it->second, shape, node, thread, static_cast<uint32_t>(segments_.size() - 1)});
  ++segments_.back().count;
  return true;
}

void LaunchSequence::AddLaunch(const std::string& kernel, LaunchShape shape, uint64_t thread) {
  if (segments_.empty() || segments_.back().kind != SegmentKind::kEager) {
    Open(SegmentKind::kEager, thread);
  }
  Segment& s = segments_.back();
  // Launches from several threads: CUPTI may profile them in another order than their
  // callbacks came in (not documented), so neighbours from two threads are not ordered.
  if (s.count > 0 && entries_.back().thread != thread) s.order_known = false;
  Push(kernel, shape, 0, thread);
}

void LaunchSequence::AddGraphLaunch(const GraphKernels* graph, uint64_t thread,
                                    const std::string& label) {
  ++graph_launches_;
  Segment& s = Open(graph != nullptr ? SegmentKind::kGraph : SegmentKind::kGraphUnknown, thread);
  s.label = label;
  if (graph == nullptr) {
    s.order_known = false;
    return;
  }
  s.order_known = graph->order_known;
  for (const GraphKernelNode& n : graph->nodes) {
    Push(n.kernel, LaunchShape{n.ctas, n.threads}, n.node_id, thread);
  }
}

// ---- MatchRanges ---------------------------------------------------------------------------

namespace {

using Kind = LaunchSequence::SegmentKind;
using Segment = LaunchSequence::Segment;

enum class GraphRanges { kPerNode, kOnePerLaunch, kNone, kOther };

const char* GraphRangesText(GraphRanges g) {
  switch (g) {
    case GraphRanges::kPerNode: return "one range per kernel node";
    case GraphRanges::kOnePerLaunch: return "one range for the whole graph launch";
    case GraphRanges::kNone: return "no range";
    default: return "ranges not matching its nodes";
  }
}

std::string Count(double v) { return std::to_string(std::llround(v)); }

class Matcher {
 public:
  Matcher(const LaunchSequence& seq, size_t ranges, uint64_t dropped,
          const std::vector<RangeShape>& measured)
      : seq_(seq), ranges_(ranges), dropped_(dropped), measured_(measured) {}

  // One pass in which every known graph launch makes ranges as `how` says. False when an
  // eager launch does not fit, a graph launch cannot be matched that way, or the counts
  // do not come out even.
  bool Strict(GraphRanges how, RangeMatch* out) {
    Reset(out);
    size_t r = 0;
    const auto& segs = seq_.segments();
    for (size_t s = 0; s < segs.size(); ++s) {
      if (Done(r)) break;
      const Segment& seg = segs[s];
      if (seg.kind == Kind::kEager) {
        if (!TakeEager(seg, &r, out)) return false;
        continue;
      }
      if (seg.kind == Kind::kGraphUnknown) return false;
      if (seg.count == 0) {  // a graph without kernel nodes makes no range either way
        Take(seg, &r, 0, true, GraphRanges::kPerNode, out);
        continue;
      }
      size_t m = 0;
      bool named = false;
      if (how == GraphRanges::kPerNode) {
        m = seg.count;
        named = NodesFit(seg, r);
      } else if (how == GraphRanges::kOnePerLaunch) {
        if (!WholeFits(seg, r)) return false;
        m = 1;
      }
      const GraphRanges came = named ? GraphRanges::kPerNode
                               : how == GraphRanges::kPerNode ? GraphRanges::kOther : how;
      Take(seg, &r, m, named, came, out);
    }
    return Even(r);
  }

  // Launch by launch: each graph launch consumes what lets the next launches fit, when
  // that is unique. Called when no single way fits every graph launch.
  void Greedy(RangeMatch* out) {
    Reset(out);
    size_t r = 0;
    const auto& segs = seq_.segments();
    for (size_t s = 0; s < segs.size(); ++s) {
      if (Done(r)) break;
      const Segment& seg = segs[s];
      if (seg.kind == Kind::kEager) {
        if (!TakeEager(seg, &r, out)) return;
        continue;
      }
      std::map<size_t, std::pair<bool, GraphRanges>> fits;  // ranges taken -> named, how
      const size_t left = ranges_ - r;
      if (seg.kind == Kind::kGraphUnknown) {
        for (size_t m = 0; m <= left; ++m) {
          if (NextFits(s + 1, r + m)) fits[m] = {false, GraphRanges::kOther};
        }
      } else {
        const bool nodes = NodesFit(seg, r);
        auto consider = [&](size_t m, bool named, GraphRanges how) {
          if (m <= left && NextFits(s + 1, r + m) && !fits.count(m)) fits[m] = {named, how};
        };
        if (nodes) consider(seg.count, true, GraphRanges::kPerNode);
        if (seg.count > 1 && WholeFits(seg, r)) consider(1, false, GraphRanges::kOnePerLaunch);
        consider(0, false, GraphRanges::kNone);
        if (!nodes) consider(seg.count, false, GraphRanges::kOther);
      }
      auto per_node = fits.find(seg.count);
      if (seg.kind == Kind::kGraph && per_node != fits.end() && per_node->second.first) {
        Take(seg, &r, seg.count, true, GraphRanges::kPerNode, out);
      } else if (fits.size() == 1) {
        Take(seg, &r, fits.begin()->first, false, fits.begin()->second.second, out);
      } else {
        RefuseFrom(r, out);
        out->reasons.push_back(
            seg.label + ": the ranges CUPTI made for it " +
            (fits.empty() ? std::string("fit none of one per node, one for the launch or none")
                          : "cannot be told from those of the launches after it") +
            "; the context's ranges from there on are refused (" + std::to_string(ranges_ - r) +
            " ranges)");
        return;
      }
    }
    if (!Even(r)) {
      RefuseFrom(r, out);
      out->reasons.push_back(std::to_string(ranges_ - r) + " ranges left over after the last "
                             "launch; refused");
    }
  }

  // Runs of neighbouring launches whose order is not certain and that measure alike: no
  // check can tell their ranges apart, so a run holding two kernels is refused whole.
  void RefuseIndistinguishable(RangeMatch* out) const {
    const auto& segs = seq_.segments();
    auto alike = [&](int64_t a, int64_t b) {
      const auto& ea = seq_.entry(static_cast<size_t>(a));
      const auto& eb = seq_.entry(static_cast<size_t>(b));
      if (b != a + 1 || ea.segment != eb.segment || segs[ea.segment].order_known) return false;
      return ea.shape.ctas == 0 || eb.shape.ctas == 0 ||
             (ea.shape.ctas == eb.shape.ctas && ea.shape.threads == eb.shape.threads);
    };
    std::vector<int64_t>& of = out->launch_of_range;
    size_t r = 0;
    while (r < of.size()) {
      size_t end = r + 1;
      while (of[r] >= 0 && end < of.size() && of[end] >= 0 && alike(of[end - 1], of[end])) ++end;
      std::set<uint32_t> names;
      std::set<uint64_t> threads;
      for (size_t i = r; i < end && of[r] >= 0; ++i) {
        names.insert(seq_.entry(static_cast<size_t>(of[i])).name);
        threads.insert(seq_.entry(static_cast<size_t>(of[i])).thread);
      }
      const bool eager = of[r] >= 0 &&
                         segs[seq_.entry(static_cast<size_t>(of[r])).segment].kind == Kind::kEager;
      if (end - r >= 2 && names.size() >= 2 && (!eager || threads.size() >= 2)) {
        const size_t a = static_cast<size_t>(of[r]);
        const size_t b = static_cast<size_t>(of[end - 1]);
        out->reasons.push_back(
            "launches " + std::to_string(a) + " (" + seq_.name(a) + ") to " + std::to_string(b) +
            " (" + seq_.name(b) + ") have the same grid and block and no certain order (" +
            (eager ? std::string("launched from several threads")
                   : "nodes of a graph that is not a single-stream chain") +
            "): their ranges cannot be told apart, so all " + std::to_string(end - r) +
            " are refused rather than risk swapping their metrics");
        for (size_t i = r; i < end; ++i) of[i] = -1;
        out->neighbours_refused += end - r;
      }
      r = end;
    }
  }

 private:
  void Reset(RangeMatch* out) {
    *out = RangeMatch{};
    out->launch_of_range.assign(ranges_, -1);
    graph_how_.clear();
  }
  bool Done(size_t r) const { return r >= ranges_ && dropped_ > 0; }
  bool Even(size_t r) const { return r == ranges_; }

  bool Fits(size_t r, const LaunchShape& want, LaunchShape* counted = nullptr) const {
    if (r >= measured_.size()) return false;
    const RangeShape& m = measured_[r];
    bool ok = true;
    if (std::isfinite(m.ctas) && want.ctas != 0) {
      ok = ok && static_cast<uint64_t>(std::llround(m.ctas)) == want.ctas;
      if (counted != nullptr) ++counted->ctas;
    }
    if (std::isfinite(m.threads) && want.ctas != 0 && want.threads != 0) {
      ok = ok && static_cast<uint64_t>(std::llround(m.threads)) == want.ctas * want.threads;
      if (counted != nullptr) ++counted->threads;
    }
    return ok;
  }

  bool NodesFit(const Segment& seg, size_t r) const {
    for (size_t i = 0; i < seg.count; ++i) {
      if (r + i >= ranges_) return dropped_ > 0;
      if (!Fits(r + i, seq_.entry(seg.first + i).shape)) return false;
    }
    return true;
  }

  // One range for the whole launch: its counts are the sums over the nodes.
  bool WholeFits(const Segment& seg, size_t r) const {
    if (r >= ranges_) return false;
    LaunchShape sum;
    double threads = 0;
    for (size_t i = 0; i < seg.count; ++i) {
      const LaunchShape& s = seq_.entry(seg.first + i).shape;
      if (s.ctas == 0) return false;
      sum.ctas += s.ctas;
      threads += static_cast<double>(s.ctas * s.threads);
    }
    const RangeShape& m = measured_[r];
    if (!std::isfinite(m.ctas)) return false;
    return std::llround(m.ctas) == static_cast<long long>(sum.ctas) &&
           (!std::isfinite(m.threads) || std::llround(m.threads) == std::llround(threads));
  }

  bool EagerFits(const Segment& seg, size_t r) const {
    for (size_t i = 0; i < seg.count; ++i) {
      if (r + i >= ranges_) return dropped_ > 0;
      if (!Fits(r + i, seq_.entry(seg.first + i).shape)) return false;
    }
    return true;
  }

  // Whether the launches from segment `s` on can start at range `r`.
  bool NextFits(size_t s, size_t r) const {
    const auto& segs = seq_.segments();
    if (s >= segs.size()) return r == ranges_ || (dropped_ > 0 && r >= ranges_);
    if (r >= ranges_) return dropped_ > 0;
    const Segment& seg = segs[s];
    if (seg.kind == Kind::kEager) return EagerFits(seg, r);
    if (seg.kind == Kind::kGraphUnknown) return true;
    return NodesFit(seg, r) || WholeFits(seg, r) || NextFits(s + 1, r);
  }

  bool TakeEager(const Segment& seg, size_t* r, RangeMatch* out) {
    for (size_t i = 0; i < seg.count; ++i) {
      const size_t e = seg.first + i;
      ++out->eager.launches;
      ++out->eager.ranges_expected;
      if (Done(*r)) continue;
      LaunchShape counted;
      if (*r >= ranges_ || !Fits(*r, seq_.entry(e).shape, &counted)) {
        EagerMismatch(*r, e, out);
        return false;
      }
      out->checked_by_ctas += counted.ctas;
      out->checked_by_threads += counted.threads;
      out->launch_of_range[*r] = static_cast<int64_t>(e);
      ++out->eager.ranges_matched;
      ++*r;
    }
    return true;
  }

  void Take(const Segment& seg, size_t* r, size_t m, bool named, GraphRanges how,
            RangeMatch* out) {
    ++out->graph.launches;
    out->graph.ranges_expected += seg.count;
    ++graph_how_[how];
    const size_t taken = std::min(m, ranges_ - std::min(*r, ranges_));
    out->graph.ranges_matched += taken;
    if (named) {
      for (size_t i = 0; i < taken; ++i) {
        out->launch_of_range[*r + i] = static_cast<int64_t>(seg.first + i);
        LaunchShape counted;
        Fits(*r + i, seq_.entry(seg.first + i).shape, &counted);
        out->checked_by_ctas += counted.ctas;
        out->checked_by_threads += counted.threads;
      }
    } else {
      ++out->graph_launches_refused;
      if (out->graph_launches_refused == 1) {
        out->reasons.push_back(
            seg.label + (seg.kind == Kind::kGraphUnknown
                             ? std::string(" (its instantiation was not seen: made before the "
                                           "collector started?)")
                             : " (" + std::to_string(seg.count) + " kernel nodes)") +
            " made " + GraphRangesText(how) + " (" + std::to_string(taken) +
            " ranges): its kernels are refused, the context's other ranges stay");
      }
    }
    *r += taken;
  }

  void EagerMismatch(size_t r, size_t e, RangeMatch* out) const {
    out->context_refused = true;
    if (r >= ranges_) {
      out->reasons.push_back("launch " + std::to_string(e) + " (" + seq_.name(e) +
                             ") and later ones made no range");
      return;
    }
    const RangeShape& m = measured_[r];
    const LaunchShape& want = seq_.entry(e).shape;
    out->reasons.push_back(
        "range " + std::to_string(r) + " launched " +
        (std::isfinite(m.ctas) ? Count(m.ctas) : std::string("?")) + " CTAs" +
        (std::isfinite(m.threads) ? " (" + Count(m.threads) + " threads)" : std::string()) +
        ", but launch " + std::to_string(e) + " (" + seq_.name(e) + ") has a grid of " +
        std::to_string(want.ctas) + (want.threads != 0 ? " x " + std::to_string(want.threads) +
                                                             " threads"
                                                       : std::string()) +
        ": ranges and launches are out of step; metrics refused rather than given to the "
        "wrong kernels");
  }

  void RefuseFrom(size_t r, RangeMatch* out) const {
    for (size_t i = r; i < out->launch_of_range.size(); ++i) out->launch_of_range[i] = -1;
  }

 public:
  std::string HowText() const {
    std::string text;
    for (const auto& [how, n] : graph_how_) {
      if (!text.empty()) text += "; ";
      text += std::to_string(n) + " x " + GraphRangesText(how);
    }
    return text;
  }

 private:
  const LaunchSequence& seq_;
  const size_t ranges_;
  const uint64_t dropped_;
  const std::vector<RangeShape>& measured_;
  std::map<GraphRanges, uint64_t> graph_how_;
};

std::string CountReason(const LaunchSequence& launches, size_t ranges, uint64_t dropped) {
  const uint64_t made = ranges + dropped;
  return std::to_string(made) + " ranges (" + std::to_string(dropped) +
         " of them dropped) but " + std::to_string(launches.total()) +
         " launches recorded by callback: " +
         (made > launches.total()
              ? "kernels ran without a launch callback (launched inside a library or the "
                "driver, or replayed from a graph whose nodes were not seen)"
              : "launches made no range (captured into a graph, failed, or not run)") +
         "; metrics refused rather than given to the wrong kernels";
}

}  // namespace

RangeMatch MatchRanges(const LaunchSequence& launches, size_t ranges, uint64_t dropped,
                       const std::vector<RangeShape>& measured) {
  RangeMatch out;
  Matcher m(launches, ranges, dropped, measured);
  bool matched = false;
  for (GraphRanges how : {GraphRanges::kPerNode, GraphRanges::kOnePerLaunch, GraphRanges::kNone}) {
    if (m.Strict(how, &out)) {
      matched = true;
      break;
    }
    if (launches.graph_launches() == 0) break;  // the three are the same pass
  }
  if (!matched) {
    const bool graphs = launches.graph_launches() > 0;
    if (graphs) m.Greedy(&out);
    if (!graphs || out.context_refused) {
      // Nothing is named: say what is most telling, the counts when they differ.
      const uint64_t total = launches.total();
      if (!graphs && ranges + dropped != total) {
        out.reasons.insert(out.reasons.begin(), CountReason(launches, ranges, dropped));
      }
      out.context_refused = true;
      out.launch_of_range.assign(ranges, -1);
    }
  }
  m.RefuseIndistinguishable(&out);
  out.graph_ranges = m.HowText();
  for (int64_t l : out.launch_of_range) (l >= 0 ? out.named : out.refused) += 1;
  return out;
}

}  // namespace qprof::profiler::cupti
