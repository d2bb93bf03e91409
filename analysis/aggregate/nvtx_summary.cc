// Profile.nvtx_summary: the NVTX ranges by grouped name (range_summary.h), by total time.
#include <algorithm>
#include <vector>

#include "analysis/aggregate/tables.h"

namespace qprof::aggregate {

void EmitNvtxSummary(const ProfileState& state, proto::Profile* profile) {
  const auto& names = state.range_summary.names();
  uint64_t total = 0;
  for (const auto& [name, r] : names) total += r.total_ns;
  std::vector<std::pair<const std::string*, const RangeNameAcc*>> rows;
  for (const auto& [name, r] : names) {
    if (r.count > 0) rows.push_back({&name, &r});
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second->total_ns != b.second->total_ns ? a.second->total_ns > b.second->total_ns
                                                    : *a.first < *b.first;
  });
  for (const auto& [name, r] : rows) {
    proto::NvtxSumRow* row = profile->add_nvtx_summary();
    row->set_name(*name);
    row->set_count(r->count);
    row->set_total_ns(r->total_ns);
    row->set_share(total ? static_cast<double>(r->total_ns) / static_cast<double>(total) : 0);
    row->set_mean_ns(r->total_ns / r->count);
    row->set_min_ns(r->min_ns);
    row->set_max_ns(r->max_ns);
  }
}

}  // namespace qprof::aggregate
