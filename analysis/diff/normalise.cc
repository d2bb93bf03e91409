#include "analysis/diff/normalise.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace qprof::diff {
namespace {

uint64_t StepsOf(const proto::Profile& p) {
  return p.totals().steps() > 0 ? p.totals().steps() : static_cast<uint64_t>(p.steps_size());
}

std::string StepsSource(const proto::Profile& p) {
  if (p.totals().steps() > 0) return "run info or --steps";
  return "step ranges (\"step N\" or ProfilerStep#N)";
}

// Where a side's token count came from: the run info or --tokens, else the trace itself.
std::string TokensSource(const proto::Profile& p) {
  return p.totals().tokens_source().empty() ? "run info or --tokens" : p.totals().tokens_source();
}

// Span and idle per device, summed: what the timeline held besides kernels.
void SpanOf(const proto::Profile& p, proto::DiffSide* s) {
  s->set_span_ns(p.totals().busy_time_ns() + p.totals().idle_ns());
  s->set_idle_ns(p.totals().idle_ns());
}

// "385 us": three significant digits (analysis/ may not use reports/' formatters).
std::string Ns(double ns) {
  double a = std::fabs(ns);
  if (a < 1e3) return absl::StrFormat("%.3g ns", ns);
  if (a < 1e6) return absl::StrFormat("%.3g us", ns / 1e3);
  if (a < 1e9) return absl::StrFormat("%.3g ms", ns / 1e6);
  return absl::StrFormat("%.3g s", ns / 1e9);
}

std::string Label(const proto::DiffSide& s, const char* fallback) {
  return s.label().empty() ? fallback : s.label();
}

void Warn(proto::Diff* d, const std::string& code, const std::string& message) {
  proto::Warning* w = d->add_warnings();
  w->set_code(code);
  w->set_message(message);
}

// Per-unit figures of one row; `a_units`/`b_units` are the sides' units, or 0 for "call"
// (then the row's own calls are its units).
void PerUnit(proto::DiffRow* r, double a_units, double b_units) {
  const double au = a_units > 0 ? a_units : static_cast<double>(r->a_calls());
  const double bu = b_units > 0 ? b_units : static_cast<double>(r->b_calls());
  const double apu = au > 0 ? static_cast<double>(r->a_time_ns()) / au : 0;
  const double bpu = bu > 0 ? static_cast<double>(r->b_time_ns()) / bu : 0;
  r->set_a_per_unit_ns(apu);
  r->set_b_per_unit_ns(bpu);
  if (apu > 0 && bpu > 0) r->set_per_unit_ratio(bpu / apu);
  // Per call, a row present on one side only has no per-call change to speak of: its time
  // is work that appeared or disappeared.
  const bool comparable = a_units > 0 || (apu > 0 && bpu > 0);
  r->set_speed_delta_ns(comparable ? bu * (bpu - apu) : 0);
}

const proto::DiffRow* MovedRole(const proto::Diff& d) {
  const proto::DiffRow* best = nullptr;
  for (const auto& r : d.roles()) {
    if (r.speed_delta_ns() == 0) continue;
    if (!best || std::fabs(r.speed_delta_ns()) > std::fabs(best->speed_delta_ns())) best = &r;
  }
  return best;
}

// The role whose speed moved most the other way from `moved` (a speedup when `moved` got
// slower, a slowdown when it got faster), among the roles on both sides; nullptr if none.
const proto::DiffRow* OppositeRole(const proto::Diff& d, const proto::DiffRow& moved) {
  const proto::DiffRow* best = nullptr;
  const bool slower = moved.speed_delta_ns() > 0;
  for (const auto& r : d.roles()) {
    if (&r == &moved || !r.has_per_unit_ratio() || r.speed_delta_ns() == 0) continue;
    if ((r.speed_delta_ns() > 0) == slower) continue;
    if (!best || std::fabs(r.speed_delta_ns()) > std::fabs(best->speed_delta_ns())) best = &r;
  }
  return best;
}

// "attn.dense: simt -> tensor, time per step 1.2 ms -> 1.8 ms (+51%)".
std::string RoleChange(const proto::DiffRow& r, const std::string& per) {
  std::string s = r.key() + ": ";
  if (!r.a_class().empty() && !r.b_class().empty() && r.a_class() != r.b_class()) {
    s += r.a_class() + " -> " + r.b_class() + ", ";
  }
  absl::StrAppendFormat(&s, "time %s %s -> %s (%+.0f%%)", per, Ns(r.a_per_unit_ns()),
                        Ns(r.b_per_unit_ns()), 100 * (r.per_unit_ratio() - 1));
  return s;
}

// Leads with the role whose time per unit moved most (by the time its speed added or saved),
// then the largest change the other way: the largest slowdown and the largest speedup.
void Headline(const proto::Diff& d, const proto::DiffRow* moved, proto::Diff* out) {
  const std::string la = Label(d.a(), "A"), lb = Label(d.b(), "B");
  const std::string per = "per " + d.unit();
  if (moved == nullptr) {
    out->set_per_unit_headline(
        absl::StrFormat("no role's time %s changed between %s and %s", per, la, lb));
    return;
  }
  const bool slower = moved->speed_delta_ns() > 0;
  std::string s;
  if (moved->has_per_unit_ratio()) {
    s = RoleChange(*moved, per);
    absl::StrAppendFormat(&s, " from %s to %s", la, lb);
  } else {
    s = moved->key() + ": ";
    if (!moved->a_class().empty() && !moved->b_class().empty() &&
        moved->a_class() != moved->b_class()) {
      s += moved->a_class() + " -> " + moved->b_class() + ", ";
    }
    absl::StrAppendFormat(&s, "time %s %s in %s, %s in %s", per,
                          moved->a_per_unit_ns() > 0 ? Ns(moved->a_per_unit_ns()) : "none", la,
                          moved->b_per_unit_ns() > 0 ? Ns(moved->b_per_unit_ns()) : "none", lb);
  }
  absl::StrAppendFormat(&s, ", the largest %s (%s%s of %s's kernel time)",
                        slower ? "slowdown" : "speedup", slower ? "+" : "",
                        Ns(moved->speed_delta_ns()), lb);
  if (d.roles_size() > 1) {
    if (const proto::DiffRow* other = OppositeRole(d, *moved)) {
      absl::StrAppendFormat(&s, "; largest %s: %s", slower ? "speedup" : "slowdown",
                            RoleChange(*other, per));
      out->set_opposite_role(other->key());
    } else {
      absl::StrAppendFormat(&s, "; no role got %s %s", slower ? "faster" : "slower", per);
    }
  }
  out->set_per_unit_headline(s);
}

void WarnDifferences(proto::Diff* d) {
  const std::string la = Label(d->a(), "A"), lb = Label(d->b(), "B");
  // The amount of work in the diff's unit: tokens, steps, or (per call) all kernel calls.
  const double ua = d->a().units(), ub = d->b().units();
  const std::string what = d->unit() == "call" ? "kernel calls" : d->unit() + "s";
  if (ua > 0 && ub > 0 && std::fabs(ub / ua - 1) > kWorkTolerance) {
    Warn(d, "work_differs",
         absl::StrFormat("%s captured %.6g %s and %s %.6g (%+.1f%%): the two traces hold "
                         "different amounts of work, so their total times are not comparable; "
                         "compare the figures per %s",
                         la, ua, what, lb, ub, 100 * (ub / ua - 1), d->unit()));
  }
  if (!d->a().device().empty() && !d->b().device().empty() &&
      d->a().device() != d->b().device()) {
    Warn(d, "devices_differ",
         absl::StrFormat("%s ran on %s and %s on %s: differences include the device", la,
                         d->a().device(), lb, d->b().device()));
  }
  for (const auto& r : d->roles()) {
    if (r.key() != d->moved_role() || r.status() == "both") continue;
    Warn(d, "role_missing",
         absl::StrFormat("%s, the role that moved most, has no kernels in %s", r.key(),
                         r.status() == "only_a" ? lb : la));
  }
}

}  // namespace

void NormaliseForWork(const proto::Profile& a, const proto::Profile& b, proto::Diff* d) {
  for (auto [p, s] : {std::pair{&a, d->mutable_a()}, std::pair{&b, d->mutable_b()}}) {
    s->set_kernel_count(p->totals().kernel_count());
    s->set_tokens(p->totals().tokens());
    s->set_steps(static_cast<uint32_t>(StepsOf(*p)));
    SpanOf(*p, s);
  }
  double ua = 0, ub = 0;
  if (a.totals().tokens() > 0 && b.totals().tokens() > 0) {
    d->set_unit("token");
    ua = static_cast<double>(a.totals().tokens());
    ub = static_cast<double>(b.totals().tokens());
    if (a.totals().tokens_source().empty() && b.totals().tokens_source().empty()) {
      d->set_unit_source("tokens generated (run info or --tokens) on both sides");
    } else {
      d->set_unit_source(absl::StrCat("tokens generated: A from ", TokensSource(a), "; B from ",
                                      TokensSource(b)));
    }
  } else if (StepsOf(a) > 0 && StepsOf(b) > 0) {
    d->set_unit("step");
    ua = static_cast<double>(StepsOf(a));
    ub = static_cast<double>(StepsOf(b));
    d->set_unit_source(absl::StrCat("steps: A from ", StepsSource(a), ", B from ", StepsSource(b)));
  } else {
    d->set_unit("call");
    d->set_unit_source(
        "kernel calls of each row (neither tokens nor steps are known on both sides; pass "
        "--tokens or --steps)");
  }
  d->mutable_a()->set_units(ua > 0 ? ua : static_cast<double>(a.totals().kernel_count()));
  d->mutable_b()->set_units(ub > 0 ? ub : static_cast<double>(b.totals().kernel_count()));
  for (auto* rows : {d->mutable_classes(), d->mutable_roles(), d->mutable_kernels()}) {
    for (auto& r : *rows) PerUnit(&r, ua, ub);
  }
  const proto::DiffRow* moved = MovedRole(*d);
  if (moved) d->set_moved_role(moved->key());
  Headline(*d, moved, d);
  WarnDifferences(d);
}

}  // namespace qprof::diff
