#include "profiler/cupti/range_match.h"

#include <cmath>

namespace qprof::profiler::cupti {

void LaunchSequence::Add(const std::string& kernel, uint64_t ctas, uint64_t graph_node_id) {
  if (entries_.size() >= capacity_) {
    ++past_limit_;
    return;
  }
  auto [it, inserted] = name_index_.emplace(kernel, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(kernel);
  entries_.push_back(Entry{it->second, ctas, graph_node_id});
}

RangeMatch MatchRanges(const LaunchSequence& launches, size_t ranges, uint64_t dropped,
                       const std::vector<double>& range_ctas) {
  RangeMatch out;
  const uint64_t made = ranges + dropped;
  if (launches.total() != made) {
    out.reason = std::to_string(made) + " ranges (" + std::to_string(dropped) +
                 " of them dropped) but " + std::to_string(launches.total()) +
                 " launches recorded by callback: " +
                 (made > launches.total()
                      ? "kernels ran without a launch callback (launched inside a library or "
                        "the driver, or replayed from a graph whose nodes were not seen)"
                      : "launches made no range (captured into a graph, failed, or not run)") +
                 "; metrics refused rather than given to the wrong kernels";
    return out;
  }
  for (size_t r = 0; r < ranges && r < launches.held(); ++r) {
    const double measured = r < range_ctas.size() ? range_ctas[r] : NAN;
    const uint64_t expected = launches.ctas(r);
    if (!std::isfinite(measured) || expected == 0) continue;
    ++out.checked_by_ctas;
    if (static_cast<uint64_t>(std::llround(measured)) != expected) {
      out.checked_by_ctas = 0;
      out.reason = "range " + std::to_string(r) + " launched " +
                   std::to_string(std::llround(measured)) + " CTAs, but launch " +
                   std::to_string(r) + " (" + launches.name(r) + ") has a grid of " +
                   std::to_string(expected) +
                   ": ranges and launches are out of step; metrics refused rather than given "
                   "to the wrong kernels";
      return out;
    }
  }
  out.accepted = true;
  return out;
}

}  // namespace qprof::profiler::cupti
