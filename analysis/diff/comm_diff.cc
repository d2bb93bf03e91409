#include "analysis/diff/comm_diff.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace qprof::diff {
namespace {

struct Figures {
  uint64_t calls = 0, time_ns = 0, bytes = 0;
  bool has_rate = false;
  double gbps = 0;
};

std::string CollectiveKey(const proto::CollectiveRow& r) {
  std::string k = r.name();
  if (r.library() != "NCCL") absl::StrAppend(&k, " (", r.library(), ")");
  if (!r.process_group().empty()) absl::StrAppend(&k, " ", r.process_group());
  return k;
}

std::string CopyKey(const proto::CopyRow& r) {
  return r.memory().empty() ? r.kind() : absl::StrCat(r.kind(), " ", r.memory());
}

void SetSide(const proto::Profile& p, proto::DiffSide* s) {
  s->set_comm_ns(p.comm().total_ns());
  s->set_comm_exposed_ns(p.comm().exposed_ns());
  s->set_copy_ns(p.comm().copy_total_ns());
  s->set_copy_exposed_ns(p.comm().copy_exposed_ns());
}

// Per unit: the sides' units, or for unit "call" the row's own calls.
double PerUnit(double value, double units, uint64_t calls, bool per_call) {
  const double u = per_call ? static_cast<double>(calls) : units;
  return u > 0 ? value / u : 0;
}

void AddRows(const std::map<std::string, std::pair<Figures, Figures>>& rows, const char* kind,
             const char* rate, const proto::Diff& d, std::vector<proto::CommDiffRow>* out) {
  const bool per_call = d.unit() == "call";
  for (const auto& [key, pr] : rows) {
    const Figures& a = pr.first;
    const Figures& b = pr.second;
    proto::CommDiffRow r;
    r.set_key(key);
    r.set_kind(kind);
    r.set_status(a.calls > 0 && b.calls > 0 ? "both" : a.calls > 0 ? "only_a" : "only_b");
    r.set_a_calls(a.calls);
    r.set_b_calls(b.calls);
    r.set_a_time_ns(a.time_ns);
    r.set_b_time_ns(b.time_ns);
    r.set_a_bytes(a.bytes);
    r.set_b_bytes(b.bytes);
    r.set_a_per_unit_ns(PerUnit(static_cast<double>(a.time_ns), d.a().units(), a.calls, per_call));
    r.set_b_per_unit_ns(PerUnit(static_cast<double>(b.time_ns), d.b().units(), b.calls, per_call));
    if (r.a_per_unit_ns() > 0 && r.b_per_unit_ns() > 0) {
      r.set_per_unit_ratio(r.b_per_unit_ns() / r.a_per_unit_ns());
    }
    r.set_a_bytes_per_unit(PerUnit(static_cast<double>(a.bytes), d.a().units(), a.calls, per_call));
    r.set_b_bytes_per_unit(PerUnit(static_cast<double>(b.bytes), d.b().units(), b.calls, per_call));
    if (a.has_rate) r.set_a_gbps(a.gbps);
    if (b.has_rate) r.set_b_gbps(b.gbps);
    if (a.has_rate && b.has_rate && a.gbps > 0) r.set_gbps_ratio(b.gbps / a.gbps);
    r.set_rate(rate);
    out->push_back(std::move(r));
  }
}

}  // namespace

void DiffComm(const proto::Profile& a, const proto::Profile& b, proto::Diff* d) {
  SetSide(a, d->mutable_a());
  SetSide(b, d->mutable_b());
  // Rates: busbw where both sides have it for the row, else algbw.
  std::map<std::string, std::pair<Figures, Figures>> coll;
  bool all_busbw = true;
  for (const auto* p : {&a, &b}) {
    for (const auto& r : p->comm().collectives()) {
      Figures& f = p == &a ? coll[CollectiveKey(r)].first : coll[CollectiveKey(r)].second;
      f.calls += r.calls();
      f.time_ns += r.time_ns();
      f.bytes += r.bytes();
      all_busbw &= r.has_busbw_gbps() || !r.has_algbw_gbps();
    }
  }
  for (const auto* p : {&a, &b}) {
    for (const auto& r : p->comm().collectives()) {
      Figures& f = p == &a ? coll[CollectiveKey(r)].first : coll[CollectiveKey(r)].second;
      if (all_busbw && r.has_busbw_gbps()) {
        f.has_rate = true;
        f.gbps = r.busbw_gbps();
      } else if (!all_busbw && r.has_algbw_gbps()) {
        f.has_rate = true;
        f.gbps = r.algbw_gbps();
      }
    }
  }
  std::map<std::string, std::pair<Figures, Figures>> copies;
  for (const auto* p : {&a, &b}) {
    for (const auto& r : p->copies()) {
      Figures& f = p == &a ? copies[CopyKey(r)].first : copies[CopyKey(r)].second;
      f.calls += r.calls();
      f.time_ns += r.time_ns();
      f.bytes += r.bytes();
    }
  }
  for (auto& [key, pr] : copies) {
    for (Figures* f : {&pr.first, &pr.second}) {
      if (f->time_ns > 0 && f->bytes > 0) {
        f->has_rate = true;
        f->gbps = static_cast<double>(f->bytes) / static_cast<double>(f->time_ns);  // B/ns = GB/s
      }
    }
  }
  std::vector<proto::CommDiffRow> rows;
  AddRows(coll, "collective", all_busbw ? "busbw" : "algbw", *d, &rows);
  const size_t n_coll = rows.size();
  AddRows(copies, "copy", "bytes/time", *d, &rows);
  auto by_time = [](const proto::CommDiffRow& x, const proto::CommDiffRow& y) {
    return std::max(x.a_time_ns(), x.b_time_ns()) > std::max(y.a_time_ns(), y.b_time_ns());
  };
  std::stable_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n_coll), by_time);
  std::stable_sort(rows.begin() + static_cast<std::ptrdiff_t>(n_coll), rows.end(), by_time);
  for (auto& r : rows) *d->add_comm() = std::move(r);
}

}  // namespace qprof::diff
