#include "analysis/diff/verdict.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace qprof::diff {
namespace {

absl::StatusOr<double> ParsePct(absl::string_view text, absl::string_view item) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  absl::ConsumeSuffix(&t, "%");
  double v = 0;
  if (t.empty() || !absl::SimpleAtod(t, &v) || !std::isfinite(v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-regression: '", std::string(item), "' is not a percentage"));
  }
  if (v < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-regression: '", std::string(item), "' is negative"));
  }
  return v;
}

// "385 us": three significant digits (analysis/ may not use reports/' formatters).
std::string Ns(double ns) {
  const double a = std::fabs(ns);
  if (a < 1e3) return absl::StrFormat("%.3g ns", ns);
  if (a < 1e6) return absl::StrFormat("%.3g us", ns / 1e3);
  if (a < 1e9) return absl::StrFormat("%.3g ms", ns / 1e6);
  return absl::StrFormat("%.3g s", ns / 1e9);
}

// p90 - p10 of the per-step kernel times (nearest rank).
double StepSpread(const proto::Profile& p) {
  std::vector<double> t;
  for (const auto& s : p.steps()) t.push_back(static_cast<double>(s.kernel_time_ns()));
  if (t.empty()) return 0;
  std::sort(t.begin(), t.end());
  auto rank = [&](double q) {
    size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(t.size())));
    return t[std::min(t.size() - 1, i == 0 ? 0 : i - 1)];
  };
  return rank(0.9) - rank(0.1);
}

double StepsOf(const proto::Profile& p) {
  return p.totals().steps() > 0 ? p.totals().steps() : static_cast<double>(p.steps_size());
}

}  // namespace

absl::StatusOr<RegressionLimits> ParseRegressionLimits(std::string_view spec) {
  RegressionLimits out;
  const absl::string_view s(spec.data(), spec.size());
  if (absl::StripAsciiWhitespace(s).empty()) {
    return absl::InvalidArgumentError("--max-regression: no limit given (e.g. 10% or comm=50%)");
  }
  for (absl::string_view item : absl::StrSplit(s, ',')) {
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      if (out.default_pct) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--max-regression: two limits for every role ('", std::string(item), "')"));
      }
      auto v = ParsePct(item, item);
      if (!v.ok()) return v.status();
      out.default_pct = *v;
      continue;
    }
    const std::string role(absl::StripAsciiWhitespace(item.substr(0, eq)));
    if (role.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--max-regression: '", std::string(item), "' names no role"));
    }
    auto v = ParsePct(item.substr(eq + 1), item);
    if (!v.ok()) return v.status();
    if (!out.per_role.emplace(role, *v).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--max-regression: role '", role, "' is given twice"));
    }
  }
  return out;
}

absl::Status CheckLimitRoles(const proto::Diff& d, const RegressionLimits& limits) {
  std::set<std::string> roles;
  for (const proto::DiffRow& r : d.roles()) roles.insert(r.key());
  for (const auto& [role, pct] : limits.per_role) {
    if (role == "total" || roles.count(role) > 0) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "--max-regression: no role '", role, "' in either profile (roles: ",
        roles.empty() ? "none" : absl::StrJoin(roles, ", "), "; 'total' names all kernels)"));
  }
  return absl::OkStatus();
}

namespace {

// The verdict's limits as given, the default first.
void SetLimits(const RegressionLimits& limits, proto::DiffVerdict* v) {
  if (limits.default_pct) {
    proto::RegressionLimit* l = v->add_limits();
    l->set_max_pct(*limits.default_pct);
  }
  for (const auto& [role, pct] : limits.per_role) {
    proto::RegressionLimit* l = v->add_limits();
    l->set_role(role);
    l->set_max_pct(pct);
  }
}

// The noise band per step (0 when either side has too few steps), with the note that says
// how it was found or why there is none.
double SetNoise(const proto::Diff& d, const proto::Profile& a, const proto::Profile& b,
                proto::DiffVerdict* v) {
  if (a.steps_size() >= kNoiseMinSteps && b.steps_size() >= kNoiseMinSteps && StepsOf(a) > 0) {
    const double noise = std::max(StepSpread(a), StepSpread(b));
    v->set_noise_per_step_ns(noise);
    v->set_noise_note(absl::StrFormat(
        "a change per %s inside the steps' own spread (p90 - p10 of kernel time per step: %s, "
        "the larger of %d and %d steps) is within noise and does not fail",
        d.unit(), Ns(noise), a.steps_size(), b.steps_size()));
    return noise;
  }
  v->set_noise_note(absl::StrFormat(
      "no noise estimate: it needs at least %d steps on each side (%d and %d here); every "
      "change counts",
      kNoiseMinSteps, a.steps_size(), b.steps_size()));
  return 0;
}

// The checks of the total and of every role held to a limit, each against the noise band
// `noise` (per step) converted to the diff's unit.
void AddChecks(const proto::Diff& d, double steps_a, double noise,
               const RegressionLimits& limits, proto::DiffVerdict* v) {
  // The band in the diff's unit; `calls_a` is the row's calls on side A (unit "call").
  auto noise_per_unit = [&](double calls_a) -> double {
    if (noise <= 0) return 0;
    if (d.unit() == "step") return noise;
    if (d.unit() == "token") {
      const double tokens_per_step = d.a().tokens() / steps_a;
      return tokens_per_step > 0 ? noise / tokens_per_step : 0;
    }
    const double calls_per_step = calls_a / steps_a;
    return calls_per_step > 0 ? noise / calls_per_step : 0;
  };
  auto check = [&](const std::string& key, double apu, double bpu, double limit, double calls_a) {
    proto::RegressionCheck* c = v->add_checks();
    c->set_key(key);
    c->set_a_per_unit_ns(apu);
    c->set_b_per_unit_ns(bpu);
    c->set_change_pct(100.0 * (bpu / apu - 1.0));
    c->set_limit_pct(limit);
    c->set_noise_per_unit_ns(noise_per_unit(calls_a));
    c->set_within_noise(c->noise_per_unit_ns() > 0 &&
                        std::fabs(bpu - apu) <= c->noise_per_unit_ns());
    c->set_exceeded(c->change_pct() > limit && !c->within_noise());
  };

  // The total: all kernel time per unit.
  const double ua = d.a().units(), ub = d.b().units();
  std::optional<double> total_limit = limits.default_pct;
  if (auto it = limits.per_role.find("total"); it != limits.per_role.end()) {
    total_limit = it->second;
  }
  if (total_limit && ua > 0 && ub > 0 && d.a().kernel_time_ns() > 0) {
    check("total", static_cast<double>(d.a().kernel_time_ns()) / ua,
          static_cast<double>(d.b().kernel_time_ns()) / ub, *total_limit,
          static_cast<double>(d.a().kernel_count()));
  }
  for (const proto::DiffRow& r : d.roles()) {
    std::optional<double> limit;
    if (auto it = limits.per_role.find(r.key()); it != limits.per_role.end()) {
      limit = it->second;
    } else if (limits.default_pct && std::max(r.a_share(), r.b_share()) >= kMinShare) {
      limit = limits.default_pct;
    }
    if (!limit || r.a_per_unit_ns() <= 0 || r.b_per_unit_ns() <= 0) continue;
    check(r.key(), r.a_per_unit_ns(), r.b_per_unit_ns(), *limit,
          static_cast<double>(r.a_calls()));
  }
}

// failed, worst and the summary line, from the checks made.
void Summarise(const proto::Diff& d, const RegressionLimits& limits, proto::DiffVerdict* v) {
  const proto::RegressionCheck* worst = nullptr;
  const proto::RegressionCheck* largest = nullptr;
  int exceeded = 0, noisy = 0;
  for (const proto::RegressionCheck& c : v->checks()) {
    if (!largest || c.change_pct() > largest->change_pct()) largest = &c;
    noisy += c.change_pct() > c.limit_pct() && c.within_noise();
    if (!c.exceeded()) continue;
    ++exceeded;
    if (!worst || c.change_pct() - c.limit_pct() > worst->change_pct() - worst->limit_pct()) {
      worst = &c;
    }
  }
  const std::string per = "per " + d.unit();
  std::string named_missing;
  for (const auto& [role, pct] : limits.per_role) {
    bool found = false;
    for (const auto& c : v->checks()) found |= c.key() == role;
    if (!found) absl::StrAppend(&named_missing, named_missing.empty() ? "" : ", ", role);
  }
  if (worst != nullptr) {
    v->set_failed(true);
    v->set_worst(worst->key());
    v->set_worst_change_pct(worst->change_pct());
    v->set_summary(absl::StrFormat(
        "%s: time %s %s -> %s (%+.1f%%) exceeds its %.4g%% limit (%d of %d checks exceeded)",
        worst->key(), per, Ns(worst->a_per_unit_ns()), Ns(worst->b_per_unit_ns()),
        worst->change_pct(), worst->limit_pct(), exceeded, v->checks_size()));
  } else if (largest != nullptr) {
    v->set_summary(absl::StrFormat(
        "no regression past the limits: %d checks %s, largest change %s %+.1f%% (limit "
        "%.4g%%)%s",
        v->checks_size(), per, largest->key(), largest->change_pct(), largest->limit_pct(),
        noisy > 0 ? absl::StrFormat("; %d past its limit but within noise", noisy) : ""));
  } else {
    v->set_summary(absl::StrFormat("nothing to check %s: no role present on both sides is "
                                   "held to a limit",
                                   per));
  }
  if (!named_missing.empty()) {
    absl::StrAppend(v->mutable_summary(), "; not on both sides, so not checked: ", named_missing);
  }
}

}  // namespace

proto::DiffVerdict JudgeRegression(const proto::Diff& d, const proto::Profile& a,
                                   const proto::Profile& b, const RegressionLimits& limits) {
  proto::DiffVerdict v;
  v.set_unit(d.unit());
  v.set_min_share(kMinShare);
  SetLimits(limits, &v);
  // Noise band per step, when both sides have steps enough to show their spread.
  const double noise = SetNoise(d, a, b, &v);
  AddChecks(d, StepsOf(a), noise, limits, &v);
  Summarise(d, limits, &v);
  return v;
}

}  // namespace qprof::diff
