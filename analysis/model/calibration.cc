#include "analysis/model/calibration.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "fmt/core.h"
#include "proto/vocabulary.h"

namespace qprof::model {
namespace {

// Distinct "step N" components of NVTX paths ("decode/step 3/layer 1/moe").
int CountSteps(const proto::Trace& trace) {
  std::set<std::string> steps;
  for (const proto::Activity& a : trace.activities()) {
    const std::string& p = a.nvtx_path();
    size_t pos = p.find("step ");
    if (pos == std::string::npos || (pos > 0 && p[pos - 1] != '/')) continue;
    size_t end = p.find('/', pos);
    steps.insert(p.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
  }
  return static_cast<int>(steps.size());
}

struct Acc {
  double measured = 0;
  double modelled = 0;
  uint64_t launches = 0;
  bool in_measured = false;
  bool in_modelled = false;
};

std::vector<CalibrationRow> Rows(const std::map<std::string, Acc>& m, double steps) {
  std::vector<CalibrationRow> rows;
  for (const auto& [key, acc] : m) {
    CalibrationRow r;
    r.key = key;
    r.measured_ns = acc.measured / steps;
    r.modelled_ns = acc.modelled;
    r.error = r.measured_ns > 0 ? r.modelled_ns / r.measured_ns - 1 : 0;
    r.measured_launches = acc.launches;
    r.only_measured = acc.in_measured && !acc.in_modelled;
    r.only_modelled = acc.in_modelled && !acc.in_measured;
    rows.push_back(r);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::max(a.measured_ns, a.modelled_ns) > std::max(b.measured_ns, b.modelled_ns);
  });
  return rows;
}

const ModelParameter* ParameterForBound(const std::string& bound, const std::string& pipe,
                                        const ModelParameters& p) {
  if (bound == "memory") return &p.memory_bandwidth_efficiency;
  if (bound == "simt") return &p.simt_efficiency;
  if (bound == "tensor") {
    if (pipe == compute_pipe::kTensorFp4) return &p.tensor_fp4_efficiency;
    if (pipe == compute_pipe::kTensorFp8) return &p.tensor_fp8_efficiency;
    return &p.tensor_bf16_efficiency;
  }
  return nullptr;  // comm and launch mix latency and bandwidth: not fitted this way
}

// Warnings for what the plan and the measured run disagree on (model, format, MoE
// backend, batch): a calibration against another run's trace fits nothing real.
void CheckPlanIsTheRun(const proto::RunInfo& run, const proto::DecodePlan& plan,
                       std::vector<std::string>* warnings) {
  auto check = [&](const char* what, const std::string& a, const std::string& b) {
    if (!a.empty() && !b.empty() && a != b) {
      warnings->push_back(fmt::format("{} differs: trace {}, plan {}", what, a, b));
    }
  };
  check("model", run.model(), plan.model());
  check("format", run.format(), plan.format());
  check("moe backend", run.moe_backend(), plan.moe_backend());
  if (run.batch() != 0 && run.batch() != plan.batch()) {
    warnings->push_back(
        fmt::format("batch differs: trace {}, plan {}", run.batch(), plan.batch()));
  }
}

// The modelled body time of each path's dominant estimate, and that estimate.
using DominantEstimates = std::map<std::string, std::pair<double, const KernelEstimate*>>;

// Fits: per parameter, over paths whose dominant entry is bound by its term, the value
// that would make the modelled time of those paths equal the measured time.
std::vector<FittedEfficiency> FitEfficiencies(const std::vector<CalibrationRow>& by_path,
                                              const DominantEstimates& dominant,
                                              const ModelParameters& params) {
  std::map<std::string, FittedEfficiency> fits;
  std::map<std::string, std::pair<double, double>> sums;  // modelled, measured
  for (const CalibrationRow& r : by_path) {
    auto it = dominant.find(r.key);
    if (it == dominant.end() || r.measured_ns <= 0) continue;
    const KernelEstimate& e = *it->second.second;
    const ModelParameter* p = ParameterForBound(e.time.bound, e.compute_pipe, params);
    if (p == nullptr) continue;
    FittedEfficiency& f = fits[p->name];
    f.parameter = p->name;
    f.current = p->value;
    f.kernels += 1;
    sums[p->name].first += r.modelled_ns;
    sums[p->name].second += r.measured_ns;
  }
  std::vector<FittedEfficiency> out;
  for (auto& [name, f] : fits) {
    auto [model_ns, meas_ns] = sums[name];
    f.fitted = meas_ns > 0 ? f.current * model_ns / meas_ns : 0;
    f.plausible = f.fitted > 0 && f.fitted <= 1;
    out.push_back(f);
  }
  return out;
}

}  // namespace

absl::StatusOr<CalibrationReport> Calibrate(const proto::Trace& measured,
                                            const proto::DecodePlan& plan,
                                            const ModelResult& modelled,
                                            const ModelParameters& params,
                                            const std::string& target_key) {
  if (measured.header().provenance() == proto::PROVENANCE_MODELLED) {
    return absl::InvalidArgumentError(
        "the trace to calibrate against is itself modelled; give a measured trace");
  }
  CalibrationReport report;
  report.target = target_key;
  const proto::RunInfo& run = measured.header().run();
  report.measured_source = measured.header().source_path().empty()
                               ? absl::StrCat(run.model(), " ", run.format(), " ",
                                              run.moe_backend(), " batch ", run.batch())
                               : measured.header().source_path();
  int nvtx_steps = CountSteps(measured);
  report.steps = nvtx_steps > 0 ? nvtx_steps : (run.steps() > 0 ? run.steps() : 1);
  if (run.wall_time_ns() > 0) report.measured_wall_step_ns = run.wall_time_ns() / report.steps;

  CheckPlanIsTheRun(run, plan, &report.warnings);

  std::map<std::string, std::string> role_of_id;
  for (const proto::PlannedKernel& k : plan.kernels()) role_of_id[k.kernel_id()] = k.role();

  std::map<std::string, Acc> roles, paths;
  int kernels = 0;
  for (const proto::Activity& a : measured.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL || a.end_ns() <= a.start_ns()) continue;
    ++kernels;
    double d = static_cast<double>(a.end_ns() - a.start_ns());
    std::string path = a.kernel_id().empty() ? a.name() : a.kernel_id();
    std::string role = a.attribution().role();
    if (role.empty()) {
      auto it = role_of_id.find(a.kernel_id());
      role = it != role_of_id.end() ? it->second : std::string(role::kOther);
    }
    for (auto* acc : {&roles[role], &paths[path]}) {
      acc->measured += d;
      acc->launches += 1;
      acc->in_measured = true;
    }
    report.measured_step_ns += d;
  }
  if (kernels == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("measured trace ", report.measured_source, " has no kernel activities"));
  }
  report.measured_step_ns /= report.steps;

  // Modelled body time per path, and the dominant bound of each path.
  DominantEstimates dominant;
  for (const KernelEstimate& e : modelled.kernels) {
    double body = (e.time.total_ns - e.time.launch_ns) * e.launches;
    std::string role = e.role.empty() ? std::string(role::kOther) : e.role;
    for (auto* acc : {&roles[role], &paths[e.kernel_id]}) {
      acc->modelled += body;
      acc->in_modelled = true;
    }
    report.modelled_body_step_ns += body;
    auto& dom = dominant[e.kernel_id];
    if (dom.second == nullptr || body > dom.first) dom = {body, &e};
  }
  report.modelled_step_ns = modelled.step_ns;
  report.by_role = Rows(roles, report.steps);
  report.by_path = Rows(paths, report.steps);
  for (CalibrationRow& r : report.by_path) {
    auto it = dominant.find(r.key);
    if (it != dominant.end()) r.bound = it->second.second->time.bound;
  }
  for (const CalibrationRow& r : report.by_role) {
    if (r.only_measured || r.only_modelled) {
      report.warnings.push_back(fmt::format("role {} is only in the {}", r.key,
                                            r.only_measured ? "measurement" : "model"));
      continue;
    }
    report.worst_role_error = std::max(report.worst_role_error, std::fabs(r.error));
  }

  report.fits = FitEfficiencies(report.by_path, dominant, params);
  return report;
}

std::string CalibrationTable(const CalibrationReport& r) {
  std::string out = fmt::format(
      "calibration of the model ({}) against {} ({:g} steps)\n"
      "kernel time per step: measured {:.3f} ms, modelled {:.3f} ms (without launch "
      "overhead; {:.3f} ms with it)\n",
      r.target, r.measured_source, r.steps, r.measured_step_ns / 1e6,
      r.modelled_body_step_ns / 1e6, r.modelled_step_ns / 1e6);
  if (r.measured_wall_step_ns > 0) {
    out += fmt::format("measured wall time per step: {:.3f} ms\n", r.measured_wall_step_ns / 1e6);
  }
  auto table = [&out](const char* title, const std::vector<CalibrationRow>& rows) {
    out += fmt::format("\n{:<40} {:>12} {:>12} {:>9}  {}\n", title, "measured us",
                       "modelled us", "error", "model bound");
    for (const CalibrationRow& row : rows) {
      std::string err = row.only_measured   ? "not modelled"
                        : row.only_modelled ? "not measured"
                                            : fmt::format("{:+.1f}%", 100 * row.error);
      out += fmt::format("{:<40} {:>12.2f} {:>12.2f} {:>9}  {}\n", row.key,
                         row.measured_ns / 1e3, row.modelled_ns / 1e3, err, row.bound);
    }
  };
  table("role", r.by_role);
  table("kernel path", r.by_path);
  out += fmt::format("\nworst error over roles: {:.1f}% (target: within 15%)\n",
                     100 * r.worst_role_error);
  if (!r.fits.empty()) {
    out += fmt::format("\n{:<32} {:>8} {:>8} {:>8}\n", "fitted parameter", "now", "fitted",
                       "kernels");
    for (const FittedEfficiency& f : r.fits) {
      out += fmt::format("{:<32} {:>8.3f} {:>8.3f} {:>8}{}\n", f.parameter, f.current,
                         f.fitted, f.kernels,
                         f.plausible ? "" : "  (implausible: not stored)");
    }
  }
  for (const std::string& w : r.warnings) out += fmt::format("warning: {}\n", w);
  return out;
}

std::vector<std::string> FitDataLines(const CalibrationReport& r, const std::string& date) {
  std::vector<std::string> out;
  for (const FittedEfficiency& f : r.fits) {
    if (!f.plausible) continue;
    out.push_back(fmt::format("{{\"{}\", \"{}\", {:.3f}, \"{}\", \"qprof calibrate on {}\"}},",
                              r.target, f.parameter, f.fitted, date, r.measured_source));
  }
  return out;
}

}  // namespace qprof::model
