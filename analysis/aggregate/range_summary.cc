#include "analysis/aggregate/range_summary.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/string_view.h"
#include "analysis/names/kernel_name.h"

namespace qprof::aggregate {
namespace {

// Strips one trailing ", key = 123" where key is seq or op_id; true when it did.
bool StripCallSuffix(std::string_view* s) {
  size_t j = s->size();
  while (j > 0 && std::isdigit(static_cast<unsigned char>((*s)[j - 1]))) --j;
  if (j == s->size()) return false;
  for (std::string_view key : {", seq = ", ", op_id = "}) {
    if (j >= key.size() && s->substr(j - key.size(), key.size()) == key) {
      *s = s->substr(0, j - key.size());
      return true;
    }
  }
  return false;
}

}  // namespace

std::string RangeSummaryName(std::string_view name) {
  while (StripCallSuffix(&name)) {
  }
  return names::FoldNvtxPath(name);
}

void RangeNameAcc::Add(uint64_t d) {
  ++count;
  total_ns += d;
  min_ns = std::min(min_ns, d);
  max_ns = std::max(max_ns, d);
}

void RangeNameAcc::Merge(const RangeNameAcc& o) {
  count += o.count;
  total_ns += o.total_ns;
  min_ns = std::min(min_ns, o.min_ns);
  max_ns = std::max(max_ns, o.max_ns);
}

RangeNameAcc& RangeSummary::Slot(const std::string& grouped) {
  auto it = names_.find(grouped);
  if (it != names_.end()) return it->second;
  if (names_.size() >= kMaxNames) return names_[kOther];
  return names_[grouped];
}

void RangeSummary::Add(std::string_view name, uint64_t dur_ns) {
  std::string_view stripped = name;
  while (StripCallSuffix(&stripped)) {
  }
  if (auto it = slot_of_.find(absl::string_view(stripped.data(), stripped.size()));
      it != slot_of_.end()) {
    it->second->Add(dur_ns);
    return;
  }
  RangeNameAcc& slot = Slot(names::FoldNvtxPath(stripped));
  if (slot_of_.size() < kMaxCached) slot_of_.emplace(std::string(stripped), &slot);
  slot.Add(dur_ns);
}

void RangeSummary::Merge(const RangeSummary& o) {
  for (const auto& [name, acc] : o.names_) Slot(name).Merge(acc);
}

}  // namespace qprof::aggregate
