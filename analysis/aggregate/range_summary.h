// The NVTX range summary (like `nsys stats --report nvtx_sum`): per range name, how many
// ranges and how long they lasted on the host, whatever kernels they launched.
//
// Names are grouped after PyTorch's per-call suffixes are stripped (", seq = 45368",
// ", op_id = 990812": every call of an op would otherwise be a name of its own) and numbers
// folded as in range paths ("ProfilerStep#12" -> "ProfilerStep#*", "step 3" -> "step *"),
// so the table grows with the number of distinct ops, not with the number of calls. Past
// kMaxNames names, further new names are counted in one "(other ranges)" row.
#ifndef QPROF_ANALYSIS_AGGREGATE_RANGE_SUMMARY_H_
#define QPROF_ANALYSIS_AGGREGATE_RANGE_SUMMARY_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace qprof::aggregate {

// "FlashAttnFunc, seq = 45368, op_id = 990812" -> "FlashAttnFunc".
std::string RangeSummaryName(std::string_view name);

struct RangeNameAcc {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t min_ns = std::numeric_limits<uint64_t>::max();
  uint64_t max_ns = 0;
  void Add(uint64_t d);
  void Merge(const RangeNameAcc& o);
};

class RangeSummary {
 public:
  static constexpr size_t kMaxNames = 4096;
  static constexpr const char* kOther = "(other ranges)";
  RangeSummary() = default;
  // A copy starts with no cache (the cache points into its own map); a move keeps it.
  RangeSummary(const RangeSummary& o) : names_(o.names_) {}
  RangeSummary& operator=(const RangeSummary& o) {
    names_ = o.names_;
    slot_of_.clear();
    return *this;
  }
  RangeSummary(RangeSummary&&) = default;
  RangeSummary& operator=(RangeSummary&&) = default;
  // A range of `name` (raw) lasting `dur_ns`.
  void Add(std::string_view name, uint64_t dur_ns);
  void Merge(const RangeSummary& o);
  // By grouped name.
  const std::map<std::string, RangeNameAcc>& names() const { return names_; }
  RangeNameAcc& Slot(const std::string& grouped);  // for reading partial profiles

 private:
  std::map<std::string, RangeNameAcc> names_;
  // Name (per-call suffixes stripped, numbers not yet folded) -> its slot in names_: ranges
  // repeat a few names many times (one per op call), and folding each again costs more
  // than the range itself. Holds at most kMaxCached names; the rest fold every time.
  static constexpr size_t kMaxCached = 4 * kMaxNames;
  absl::flat_hash_map<std::string, RangeNameAcc*> slot_of_;
};

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_RANGE_SUMMARY_H_
