#include "analysis/diff/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_format.h"
#include "analysis/diff/comm_diff.h"
#include "analysis/diff/normalise.h"
#include "proto/vocabulary.h"

namespace qprof::diff {
namespace {

double ClassShare(const proto::Profile& p, std::string_view cls) {
  for (const auto& c : p.classes()) {
    if (c.class_() == cls) return c.share();
  }
  return 0;
}

double TokensPerS(const proto::Profile& p) {
  if (p.totals().tokens_per_s() > 0) return p.totals().tokens_per_s();
  return p.ceilings().measured_tokens_per_s();
}

proto::DiffSide Side(const proto::Profile& p) {
  proto::DiffSide s;
  s.set_label(p.label());
  *s.mutable_sources() = p.sources();
  if (!p.devices().empty()) s.set_device(p.devices(0).name());
  s.set_format(p.run().format());
  s.set_kernel_time_ns(p.totals().kernel_time_ns());
  s.set_busy_time_ns(p.totals().busy_time_ns());
  if (const double tps = TokensPerS(p); tps > 0) s.set_tokens_per_s(tps);
  s.set_tensor_share(ClassShare(p, pipe::kTensor));
  s.set_simt_share(ClassShare(p, pipe::kSimt));
  s.set_provenance(p.totals().provenance());
  for (const auto& c : p.classes()) (*s.mutable_class_share())[c.class_()] = c.share();
  uint64_t unattributed = 0;
  for (const auto& k : p.kernels()) {
    if (k.evidence() == evidence::kUnknown) unattributed += k.time_ns();
  }
  if (p.totals().kernel_time_ns() > 0) {
    s.set_unattributed_share(static_cast<double>(unattributed) /
                             static_cast<double>(p.totals().kernel_time_ns()));
  }
  *s.mutable_warnings() = p.warnings();
  return s;
}

void Fill(proto::DiffRow* r, uint64_t at, uint64_t bt, double as, double bs) {
  r->set_a_time_ns(at);
  r->set_b_time_ns(bt);
  r->set_a_share(as);
  r->set_b_share(bs);
  r->set_delta_ns(static_cast<int64_t>(bt) - static_cast<int64_t>(at));
  r->set_delta_share(bs - as);
  r->set_status(at > 0 && bt > 0 ? "both" : (at > 0 ? "only_a" : "only_b"));
  if (at > 0 && bt > 0) r->set_ratio(static_cast<double>(bt) / static_cast<double>(at));
}

// Achieved rates of one side, where it has work (RoleRow or KernelRow).
template <typename Row>
void RateSide(proto::DiffRow* r, const Row* x, bool a) {
  if (x == nullptr) return;
  if (x->has_achieved_tflops()) a ? r->set_a_achieved_tflops(x->achieved_tflops()) : r->set_b_achieved_tflops(x->achieved_tflops());
  if (x->has_achieved_gbps()) a ? r->set_a_achieved_gbps(x->achieved_gbps()) : r->set_b_achieved_gbps(x->achieved_gbps());
  if (x->has_peak_fraction()) a ? r->set_a_peak_fraction(x->peak_fraction()) : r->set_b_peak_fraction(x->peak_fraction());
}

void KernelSide(proto::DiffRow* r, const proto::KernelRow* k, bool a) {
  if (!k) return;
  RateSide(r, k, a);
  if (a) {
    r->set_a_name(k->name());
    r->set_a_raw_name(k->raw_name());
    r->set_a_class(k->class_());
    r->set_a_calls(k->calls());
  } else {
    r->set_b_name(k->name());
    r->set_b_raw_name(k->raw_name());
    r->set_b_class(k->class_());
    r->set_b_calls(k->calls());
  }
}

void MatchKernels(const proto::Profile& a, const proto::Profile& b, proto::Diff* d) {
  std::map<std::string, std::vector<const proto::KernelRow*>> ra, rb;  // role -> rows by time
  for (const auto& k : a.kernels()) ra[k.role()].push_back(&k);
  for (const auto& k : b.kernels()) rb[k.role()].push_back(&k);
  std::set<std::string> roles;
  for (auto& [r, v] : ra) roles.insert(r);
  for (auto& [r, v] : rb) roles.insert(r);
  std::vector<proto::DiffRow> rows;
  auto emit = [&](const std::string& role, const proto::KernelRow* ka, const proto::KernelRow* kb) {
    proto::DiffRow row;
    row.set_role(role);
    row.set_key(ka && kb ? (ka->name() == kb->name() ? ka->name() : role)
                         : (ka ? ka->name() : kb->name()));
    Fill(&row, ka ? ka->time_ns() : 0, kb ? kb->time_ns() : 0, ka ? ka->share() : 0,
         kb ? kb->share() : 0);
    if (ka && kb && ka->time_ns() == 0 && kb->time_ns() == 0) row.set_status("both");
    KernelSide(&row, ka, true);
    KernelSide(&row, kb, false);
    rows.push_back(std::move(row));
  };
  for (const std::string& role : roles) {
    std::vector<const proto::KernelRow*> va = ra[role], vb = rb[role];
    std::vector<bool> used_b(vb.size(), false), used_a(va.size(), false);
    // 1. Same normalised name within the role.
    for (size_t i = 0; i < va.size(); ++i) {
      for (size_t j = 0; j < vb.size(); ++j) {
        if (!used_b[j] && va[i]->name() == vb[j]->name()) {
          emit(role, va[i], vb[j]);
          used_a[i] = used_b[j] = true;
          break;
        }
      }
    }
    // 2. The rest of a known role pairs up by rank of time (rows are sorted by time).
    if (role != role::kOther) {
      size_t j = 0;
      for (size_t i = 0; i < va.size(); ++i) {
        if (used_a[i]) continue;
        while (j < vb.size() && used_b[j]) ++j;
        if (j == vb.size()) break;
        emit(role, va[i], vb[j]);
        used_a[i] = used_b[j] = true;
      }
    }
    for (size_t i = 0; i < va.size(); ++i) if (!used_a[i]) emit(role, va[i], nullptr);
    for (size_t j = 0; j < vb.size(); ++j) if (!used_b[j]) emit(role, nullptr, vb[j]);
  }
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    uint64_t mx = std::max(x.a_time_ns(), x.b_time_ns()), my = std::max(y.a_time_ns(), y.b_time_ns());
    return mx != my ? mx > my : x.key() < y.key();
  });
  for (auto& r : rows) *d->add_kernels() = std::move(r);
}

// Ranks match by number when both sides have several traces.
void MatchRanks(const proto::Profile& a, const proto::Profile& b, proto::Diff* d) {
  if (a.ranks_size() < 2 || b.ranks_size() < 2) return;
  std::map<uint32_t, std::pair<const proto::RankRow*, const proto::RankRow*>> ranks;
  for (const auto& r : a.ranks()) ranks[r.rank()].first = &r;
  for (const auto& r : b.ranks()) ranks[r.rank()].second = &r;
  for (const auto& [n, pr] : ranks) {
    const auto *ra = pr.first, *rb = pr.second;
    proto::RankDiffRow* r = d->add_ranks();
    r->set_rank(n);
    r->set_status(ra && rb ? "both" : ra ? "only_a" : "only_b");
    if (ra) {
      r->set_a_compute_ns(ra->compute_time_ns());
      r->set_a_kernel_time_ns(ra->kernel_time_ns());
      r->set_a_comm_share(ra->comm_share());
      r->set_a_compute_vs_median(ra->compute_vs_median());
    }
    if (rb) {
      r->set_b_compute_ns(rb->compute_time_ns());
      r->set_b_kernel_time_ns(rb->kernel_time_ns());
      r->set_b_comm_share(rb->comm_share());
      r->set_b_compute_vs_median(rb->compute_vs_median());
    }
    if (r->a_compute_ns() > 0 && r->b_compute_ns() > 0) {
      r->set_compute_ratio(static_cast<double>(r->b_compute_ns()) /
                           static_cast<double>(r->a_compute_ns()));
    }
  }
  const std::string la = a.label().empty() ? "A" : a.label();
  const std::string lb = b.label().empty() ? "B" : b.label();
  d->set_rank_headline(absl::StrFormat(
      "slowest rank: %d in %s (%.2fx the median compute of %d ranks), %d in %s (%.2fx of %d)",
      a.rank_summary().slowest_rank(), la, a.rank_summary().imbalance(), a.ranks_size(),
      b.rank_summary().slowest_rank(), lb, b.rank_summary().imbalance(), b.ranks_size()));
}

}  // namespace

proto::Diff DiffProfiles(const proto::Profile& a, const proto::Profile& b) {
  proto::Diff d;
  d.set_schema_version(kProfileSchemaVersion);
  *d.mutable_a() = Side(a);
  *d.mutable_b() = Side(b);
  // Classes.
  std::vector<std::string> classes(pipe::kAll.begin(), pipe::kAll.end());
  for (const auto* p : {&a, &b}) {
    for (const auto& c : p->classes()) {
      if (std::find(classes.begin(), classes.end(), c.class_()) == classes.end()) classes.push_back(c.class_());
    }
  }
  auto class_row = [](const proto::Profile& p, const std::string& c) -> const proto::ClassRow* {
    for (const auto& r : p.classes()) if (r.class_() == c) return &r;
    return nullptr;
  };
  for (const std::string& c : classes) {
    const proto::ClassRow *ca = class_row(a, c), *cb = class_row(b, c);
    proto::DiffRow* r = d.add_classes();
    r->set_key(c);
    Fill(r, ca ? ca->time_ns() : 0, cb ? cb->time_ns() : 0, ca ? ca->share() : 0, cb ? cb->share() : 0);
    if (r->a_time_ns() == 0 && r->b_time_ns() == 0) r->set_status("both");
    r->set_a_calls(ca ? ca->calls() : 0);
    r->set_b_calls(cb ? cb->calls() : 0);
  }
  // Roles.
  std::map<std::string, std::pair<const proto::RoleRow*, const proto::RoleRow*>> roles;
  for (const auto& r : a.roles()) roles[r.role()].first = &r;
  for (const auto& r : b.roles()) roles[r.role()].second = &r;
  std::vector<proto::DiffRow> role_rows;
  for (auto& [name, pr] : roles) {
    proto::DiffRow r;
    r.set_key(name);
    r.set_role(name);
    const auto *ra = pr.first, *rb = pr.second;
    Fill(&r, ra ? ra->time_ns() : 0, rb ? rb->time_ns() : 0, ra ? ra->share() : 0, rb ? rb->share() : 0);
    r.set_a_class(ra ? ra->class_() : "");
    r.set_b_class(rb ? rb->class_() : "");
    r.set_a_calls(ra ? ra->calls() : 0);
    r.set_b_calls(rb ? rb->calls() : 0);
    RateSide(&r, ra, true);
    RateSide(&r, rb, false);
    role_rows.push_back(std::move(r));
  }
  std::sort(role_rows.begin(), role_rows.end(), [](const auto& x, const auto& y) {
    uint64_t mx = std::max(x.a_time_ns(), x.b_time_ns()), my = std::max(y.a_time_ns(), y.b_time_ns());
    return mx != my ? mx > my : x.key() < y.key();
  });
  for (auto& r : role_rows) *d.add_roles() = std::move(r);
  MatchKernels(a, b, &d);
  MatchRanks(a, b, &d);
  d.set_tensor_share_delta(d.b().tensor_share() - d.a().tensor_share());
  if (d.a().tokens_per_s() > 0 && d.b().tokens_per_s() > 0) {
    d.set_tokens_per_s_ratio(d.b().tokens_per_s() / d.a().tokens_per_s());
    d.set_tokens_per_s_delta(d.b().tokens_per_s() - d.a().tokens_per_s());
  }
  // Headline: total change, then the role with the largest absolute time change.
  std::string la = a.label().empty() ? "A" : a.label(), lb = b.label().empty() ? "B" : b.label();
  double ta = static_cast<double>(a.totals().kernel_time_ns()), tb = static_cast<double>(b.totals().kernel_time_ns());
  std::string head;
  if (d.has_tokens_per_s_ratio()) {
    head = absl::StrFormat("%s runs at %.3g tok/s vs %.3g for %s (%.2fx)", lb, d.b().tokens_per_s(),
                           d.a().tokens_per_s(), la, d.tokens_per_s_ratio());
  } else if (ta > 0 && tb > 0) {
    head = absl::StrFormat("%s spends %.2fx the kernel time of %s (%.3g ms vs %.3g ms)", lb, tb / ta, la,
                           tb / 1e6, ta / 1e6);
  } else {
    head = absl::StrFormat("%s vs %s", lb, la);
  }
  const proto::DiffRow* top = nullptr;
  for (const auto& r : d.roles()) {
    if (!top || std::llabs(r.delta_ns()) > std::llabs(top->delta_ns())) top = &r;
  }
  if (top && top->delta_ns() != 0) {
    std::string moved;
    if (!top->a_class().empty() && !top->b_class().empty() && top->a_class() != top->b_class()) {
      moved = absl::StrFormat(" and moved from %s to %s", top->a_class(), top->b_class());
    }
    absl::StrAppendFormat(&head, "; %s changed most (%+.3g ms%s)", top->key(),
                          static_cast<double>(top->delta_ns()) / 1e6, moved);
  }
  absl::StrAppendFormat(&head, "; tensor share %.1f%% -> %.1f%%.", 100 * d.a().tensor_share(),
                        100 * d.b().tensor_share());
  d.set_totals_headline(head);
  NormaliseForWork(a, b, &d);
  DiffComm(a, b, &d);
  // The headline is what the reports lead with: the change per unit of work when the diff
  // has it (total times of traces that captured different work would mislead).
  d.set_headline(d.per_unit_headline().empty() ? head : d.per_unit_headline());
  return d;
}

}  // namespace qprof::diff
