#include "analysis/model/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/text.h"
#include "fmt/core.h"
#include "proto/vocabulary.h"

namespace qprof::model {
namespace {

// Six significant digits: stable across platforms for the values the model produces and
// small enough for a reviewer to read.
std::string Num(double v) {
  if (std::isinf(v)) return "\"inf\"";
  if (std::isnan(v)) return "\"nan\"";
  if (v == 0) return "0";
  return fmt::format("{:.6g}", v);
}

std::string Map(const std::map<std::string, double>& m, const std::string& indent) {
  if (m.empty()) return "{}";
  std::string out = "{\n";
  size_t i = 0;
  for (const auto& [k, v] : m) {
    out += fmt::format("{}  {}: {}{}\n", indent, JsonQuote(k), Num(v), ++i < m.size() ? "," : "");
  }
  return out + indent + "}";
}

}  // namespace

double AmdahlIfRemoved(double share) {
  if (share >= 1) return std::numeric_limits<double>::infinity();
  return 1.0 / (1.0 - share);
}

ModelSummary Summarize(const proto::DecodePlan& plan, const ModelResult& result,
                       const std::string& target_key) {
  ModelSummary s;
  s.model = plan.model();
  s.format = plan.format();
  s.moe_backend = plan.moe_backend();
  s.label = fmt::format("{} via {}", plan.format(), plan.moe_backend());
  s.target = target_key;
  s.batch = plan.batch();
  s.tp = std::max<uint32_t>(1, plan.tp());
  s.layers = plan.layers();
  s.step_ms = result.step_ns / 1e6;
  s.tokens_per_s = result.tokens_per_s;
  s.tokens_per_s_per_sequence = plan.batch() > 0 ? result.tokens_per_s / plan.batch() : 0;
  double launch_ns = 0;
  for (const KernelEstimate& e : result.kernels) {
    const proto::PlannedKernel& pk = plan.kernels(e.plan_index);
    double n = e.launches;
    // The trace's integer-nanosecond duration, so that shares sum to the step time.
    double t = static_cast<double>(std::max<int64_t>(1, std::llround(e.time.total_ns))) * n;
    s.bytes_per_step += pk.work().bytes() * n;
    s.weight_bytes_per_step += pk.work().weight_bytes() * n;
    s.kv_bytes_per_step += pk.work().kv_bytes() * n;
    s.flops_per_step += pk.work().flops() * n;
    s.launches_per_step += e.launches;
    const std::string role = e.role.empty() ? std::string(role::kOther) : e.role;
    s.role_share[role] += t;
    s.role_bytes[role] += pk.work().bytes() * n;
    s.pipe_share[e.pipe_class.empty() ? std::string(pipe::kOther) : e.pipe_class] += t;
    s.bound_share[e.time.bound] += t;
    launch_ns += e.time.launch_ns * n;
    s.tensor_pipe_active += e.tensor_peak_ns * n;
  }
  double step = result.step_ns > 0 ? result.step_ns : 1;
  for (auto* m : {&s.role_share, &s.pipe_share, &s.bound_share}) {
    for (auto& [k, v] : *m) v /= step;
  }
  s.launch_share = launch_ns / step;
  s.tensor_pipe_active /= step;
  for (const auto& [role, share] : s.role_share) s.amdahl_if_removed[role] = AmdahlIfRemoved(share);
  std::vector<std::pair<std::string, double>> roles(s.role_share.begin(), s.role_share.end());
  std::stable_sort(roles.begin(), roles.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < roles.size() && i < 2; ++i) {
    s.top_roles.push_back(roles[i].first);
    s.top_two_share += roles[i].second;
  }
  return s;
}

std::string SummaryJson(const std::vector<ModelSummary>& summaries,
                        const std::vector<std::string>& notes) {
  std::string out = fmt::format("{{\n  \"schema_version\": {},\n", kRunSummarySchemaVersion);
  out += "  \"provenance\": \"modelled\",\n  \"runs\": [";
  for (size_t i = 0; i < summaries.size(); ++i) {
    const ModelSummary& s = summaries[i];
    const std::string in = "      ";
    out += i == 0 ? "\n" : ",\n";
    out += "    {\n";
    out += fmt::format("{}\"label\": {},\n", in, JsonQuote(s.label));
    out += fmt::format("{}\"model\": {},\n", in, JsonQuote(s.model));
    out += fmt::format("{}\"format\": {},\n", in, JsonQuote(s.format));
    out += fmt::format("{}\"moe_backend\": {},\n", in, JsonQuote(s.moe_backend));
    out += fmt::format("{}\"target\": {},\n", in, JsonQuote(s.target));
    out += fmt::format("{}\"batch\": {},\n", in, s.batch);
    out += fmt::format("{}\"tp\": {},\n", in, s.tp);
    out += fmt::format("{}\"layers\": {},\n", in, s.layers);
    out += fmt::format("{}\"step_ms\": {},\n", in, Num(s.step_ms));
    out += fmt::format("{}\"tokens_per_s\": {},\n", in, Num(s.tokens_per_s));
    out += fmt::format("{}\"tokens_per_s_per_sequence\": {},\n", in,
                       Num(s.tokens_per_s_per_sequence));
    out += fmt::format("{}\"bytes_per_step_per_rank\": {},\n", in, Num(s.bytes_per_step));
    out += fmt::format("{}\"weight_bytes_per_step_per_rank\": {},\n", in,
                       Num(s.weight_bytes_per_step));
    out += fmt::format("{}\"kv_bytes_per_step_per_rank\": {},\n", in, Num(s.kv_bytes_per_step));
    out += fmt::format("{}\"flops_per_step_per_rank\": {},\n", in, Num(s.flops_per_step));
    out += fmt::format("{}\"launches_per_step\": {},\n", in, s.launches_per_step);
    out += fmt::format("{}\"launch_share\": {},\n", in, Num(s.launch_share));
    out += fmt::format("{}\"tensor_pipe_active\": {},\n", in, Num(s.tensor_pipe_active));
    out += fmt::format("{}\"role_share\": {},\n", in, Map(s.role_share, in));
    out += fmt::format("{}\"role_bytes_per_rank\": {},\n", in, Map(s.role_bytes, in));
    out += fmt::format("{}\"pipe_share\": {},\n", in, Map(s.pipe_share, in));
    out += fmt::format("{}\"bound_share\": {},\n", in, Map(s.bound_share, in));
    out += fmt::format("{}\"amdahl_if_removed\": {},\n", in, Map(s.amdahl_if_removed, in));
    std::string top;
    for (const std::string& r : s.top_roles) top += (top.empty() ? "" : ", ") + JsonQuote(r);
    out += fmt::format("{}\"top_roles\": [{}],\n", in, top);
    out += fmt::format("{}\"top_two_share\": {}\n", in, Num(s.top_two_share));
    out += "    }";
  }
  out += summaries.empty() ? "],\n" : "\n  ],\n";
  out += "  \"notes\": [";
  for (size_t i = 0; i < notes.size(); ++i) {
    out += fmt::format("{}\n    {}", i == 0 ? "" : ",", JsonQuote(notes[i]));
  }
  out += notes.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string SummaryTable(const std::vector<ModelSummary>& summaries) {
  std::string out = fmt::format("{:<26} {:>10} {:>9} {:>7} {:>7} {:>7} {:>7} {:>8}\n",
                                "modelled run", "tok/s", "step ms", "MoE", "sp.MLA",
                                "SIMT", "tensor", "Amdahl");
  auto get = [](const std::map<std::string, double>& m, std::string_view k) {
    auto it = m.find(std::string(k));
    return it == m.end() ? 0.0 : it->second;
  };
  for (const ModelSummary& s : summaries) {
    double moe = get(s.role_share, role::kMoeExperts);
    out += fmt::format("{:<26} {:>10.1f} {:>9.3f} {:>6.1f}% {:>6.1f}% {:>6.1f}% {:>6.1f}% {:>7.2f}x\n",
                       s.label, s.tokens_per_s, s.step_ms, 100 * moe,
                       100 * get(s.role_share, role::kAttnSparseMla),
                       100 * get(s.pipe_share, pipe::kSimt),
                       100 * get(s.pipe_share, pipe::kTensor), AmdahlIfRemoved(moe));
  }
  return out;
}

}  // namespace qprof::model
