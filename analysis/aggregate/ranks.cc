// The per-rank table: one row per input trace when several were analysed together.
//
// Like HTA's temporal and communication/computation breakdowns per rank: each rank's
// kernel, busy and idle time, its class shares, its communication share, and its compute
// time (kernel time outside communication kernels) against the median rank's. In a
// synchronous job the slowest rank has the most compute, while the others wait for it
// inside their collectives (their communication share grows): that rank is the straggler,
// and max / median compute is the imbalance.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "analysis/aggregate/interval_union.h"
#include "analysis/aggregate/tables.h"
#include "proto/vocabulary.h"

namespace qprof::aggregate {
namespace {

// distributedInfo.rank of a Kineto trace (kept in run.extra by the importer), else -1.
int64_t DeclaredRank(const proto::TraceHeader& h) {
  auto it = h.run().extra().find("distributed.rank");
  uint32_t r = 0;
  if (it == h.run().extra().end() || !absl::SimpleAtoi(it->second, &r)) return -1;
  return r;
}

proto::RankRow RankRowOf(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
                         uint32_t trace) {
  const TraceState& t = state.traces[trace];
  proto::RankRow row;
  int64_t declared = DeclaredRank(t.header);
  row.set_rank(declared >= 0 ? static_cast<uint32_t>(declared) : trace);
  row.set_source(t.header.source_path());
  for (size_t g = 0; g < state.groups.size(); ++g) {
    for (const TraceTime& tt : state.groups[g].per_trace) {
      if (tt.trace != trace) continue;
      row.set_kernel_time_ns(row.kernel_time_ns() + tt.time_ns);
      row.set_kernel_count(row.kernel_count() + tt.calls);
      (*row.mutable_class_time_ns())[verdicts[g].attribution.pipe_class()] += tt.time_ns;
    }
  }
  for (const auto& [id, u] : t.devices) {
    if (u.busy.count() == 0) continue;  // copies only
    uint64_t busy = u.busy.length();
    row.set_busy_time_ns(row.busy_time_ns() + busy);
    const uint64_t span = SpanNs(u.busy.first(), u.busy.last());
    row.set_idle_ns(row.idle_ns() + span - std::min(busy, span));
    row.set_busy_time_error_ns(row.busy_time_error_ns() + u.busy.late_bound_ns());
  }
  row.set_span_ns(SpanNs(t.first_ns, t.last_ns));
  auto comm = row.class_time_ns().find(std::string(pipe::kComm));
  row.set_comm_time_ns(comm == row.class_time_ns().end() ? 0 : comm->second);
  row.set_compute_time_ns(row.kernel_time_ns() - row.comm_time_ns());
  const double kt = static_cast<double>(row.kernel_time_ns());
  row.set_comm_share(kt > 0 ? static_cast<double>(row.comm_time_ns()) / kt : 0);
  for (const auto& [cls, ns] : row.class_time_ns()) {
    (*row.mutable_class_share())[cls] = kt > 0 ? static_cast<double>(ns) / kt : 0;
  }
  return row;
}

template <typename T>
double Median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? static_cast<double>(v[n / 2])
               : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2;
}

proto::RankSummary Summarise(proto::Profile* profile) {
  proto::RankSummary s;
  std::vector<uint64_t> compute;
  std::vector<double> comm;
  size_t slowest = 0;
  for (int i = 0; i < profile->ranks_size(); ++i) {
    const proto::RankRow& r = profile->ranks(i);
    compute.push_back(r.compute_time_ns());
    comm.push_back(r.comm_share());
    if (r.compute_time_ns() > profile->ranks(static_cast<int>(slowest)).compute_time_ns()) {
      slowest = static_cast<size_t>(i);
    }
  }
  const double median = Median(compute);
  proto::RankRow* worst = profile->mutable_ranks(static_cast<int>(slowest));
  worst->set_slowest(true);
  for (proto::RankRow& r : *profile->mutable_ranks()) {
    r.set_compute_vs_median(median > 0 ? static_cast<double>(r.compute_time_ns()) / median : 0);
  }
  s.set_ranks(static_cast<uint32_t>(profile->ranks_size()));
  s.set_slowest_rank(worst->rank());
  s.set_slowest_source(worst->source());
  s.set_median_compute_ns(static_cast<uint64_t>(median));
  s.set_max_compute_ns(worst->compute_time_ns());
  s.set_imbalance(median > 0 ? static_cast<double>(worst->compute_time_ns()) / median : 0);
  s.set_median_comm_share(Median(comm));
  const std::string& src = worst->source();
  const size_t slash = src.find_last_of('/');
  s.set_note(absl::StrFormat(
      "rank %d (%s) has the most compute (kernel time outside communication): %.3f ms, %.2fx "
      "the median of %d ranks (%.3f ms); its communication share is %.1f%% against a median "
      "of %.1f%%",
      worst->rank(), slash == std::string::npos ? src : src.substr(slash + 1),
      worst->compute_time_ns() / 1e6, s.imbalance(), s.ranks(), median / 1e6,
      100 * worst->comm_share(), 100 * s.median_comm_share()));
  return s;
}

}  // namespace

void EmitRanks(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
               proto::Profile* profile) {
  if (state.traces.size() < 2) return;
  // Nsight Compute CSVs are kernels profiled one at a time (a file per kernel or per
  // selection), not the ranks of a job: no rank comparison among them.
  bool all_ncu = true;
  for (const TraceState& t : state.traces) all_ncu &= t.header.source_kind() == "ncu-csv";
  if (all_ncu) return;
  for (uint32_t i = 0; i < state.traces.size(); ++i) {
    *profile->add_ranks() = RankRowOf(state, verdicts, i);
  }
  *profile->mutable_rank_summary() = Summarise(profile);
}

}  // namespace qprof::aggregate
