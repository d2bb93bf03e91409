#include "analysis/ceilings/ceilings.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "simdjson.h"

namespace qprof::ceilings {
namespace {

constexpr const char* kFormats[] = {"mxfp4", "nvfp4", "fp8", "bf16"};

void AddAmdahl(proto::Ceilings* c, const std::string& scope, const std::string& name,
               uint64_t t, uint64_t total, const std::map<std::string, double>& roof,
               const std::string& time_basis = "") {
  if (total == 0 || (t == 0 && time_basis.empty())) return;
  proto::AmdahlRow* r = c->add_amdahl();
  r->set_scope(scope);
  r->set_name(name);
  r->set_time_basis(time_basis);
  double f = static_cast<double>(t) / static_cast<double>(total);
  r->set_share(f);
  // 1 / (1 - f); a part that is all of the time has no finite bound (left 0).
  r->set_speedup_if_vanished(f < 1.0 ? 1.0 / (1.0 - f) : 0.0);
  std::string formula = absl::StrFormat("1/(1-f) with f = %.4f", f);
  if (!time_basis.empty()) absl::StrAppend(&formula, "; t = ", time_basis);
  auto it = roof.find(name);
  if (it != roof.end() && time_basis.empty()) {
    double T = static_cast<double>(total), tr = it->second;
    r->set_roofline_time_ns(tr);
    r->set_speedup_at_roofline(T / (T - static_cast<double>(t) + tr));
    absl::StrAppendFormat(&formula, "; T/(T - t + t_roof) with T = %.0f ns, t = %d ns, t_roof = %.0f ns",
                          T, t, tr);
  }
  r->set_formula(formula);
}

}  // namespace

std::string PipeForFormat(const devices::DeviceSpec& d, const std::string& format) {
  if ((format == "mxfp4" || format == "nvfp4") && d.fp4_tensor_tflops.value > 0) return "tensor_fp4";
  if (format == "fp8" && d.fp8_tensor_tflops.value > 0) return "tensor_fp8";
  return "tensor_bf16";
}

absl::StatusOr<ModelConfig> ParseModelConfig(const std::string& json, const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  auto err = parser.parse(json).get(root);
  if (err) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not valid JSON (", simdjson::error_message(err), ")"));
  }
  simdjson::dom::object obj;
  if (root.get(obj)) return absl::InvalidArgumentError(absl::StrCat(path, ": expected a JSON object"));
  ModelConfig m;
  m.path = path;
  if (work::LooksLikeHfConfig(json)) {
    ASSIGN_OR_RETURN(work::ModelShape shape, work::ParseHfConfig(json, path));
    m.name = shape.name;
    m.format = shape.format;
    m.shape = std::move(shape);
  }
  for (auto field : obj) {
    std::string key(field.key);
    double num = 0;
    if ((key == "name" || key == "format") && m.shape) {
      continue;  // a Hugging Face config: the shape's name and format were read above
    }
    if (key == "name" || key == "format") {
      std::string_view s;
      if (field.value.get(s)) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": \"", key, "\" must be a string"));
      }
      (key == "name" ? m.name : m.format) = std::string(s);
      continue;
    }
    static const char* kNumeric[] = {"total_params", "active_params", "weights_per_step_params",
                                     "batch", "kv_bytes_per_step", "activation_bytes_per_step",
                                     "flops_per_token"};
    if (std::none_of(std::begin(kNumeric), std::end(kNumeric),
                     [&](const char* k) { return key == k; })) {
      continue;  // unknown keys are ignored so configs can carry notes
    }
    if (field.value.get(num)) {
      int64_t i = 0;
      uint64_t u = 0;
      if (!field.value.get(i)) num = static_cast<double>(i);
      else if (!field.value.get(u)) num = static_cast<double>(u);
      else return absl::InvalidArgumentError(absl::StrCat(path, ": \"", key, "\" must be a number"));
    }
    if (num < 0) return absl::InvalidArgumentError(absl::StrCat(path, ": \"", key, "\" is negative"));
    if (key == "total_params") m.total_params = num;
    else if (key == "active_params") m.active_params = num;
    else if (key == "weights_per_step_params") m.weights_per_step_params = num;
    else if (key == "batch") m.batch = static_cast<uint32_t>(num);
    else if (key == "kv_bytes_per_step") m.kv_bytes_per_step = num;
    else if (key == "activation_bytes_per_step") m.activation_bytes_per_step = num;
    else if (key == "flops_per_token") m.flops_per_token = num;
  }
  if (!m.HasStepWeights() && !m.shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": needs \"active_params\" or \"weights_per_step_params\" (or be a Hugging Face "
              "config.json)"));
  }
  return m;
}

absl::StatusOr<ModelConfig> LoadModelConfig(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseModelConfig(text, path);
}

StepWork StepWorkFromModel(const ModelConfig& m, uint32_t batch) {
  StepWork w;
  w.batch = batch > 0 ? batch : (m.batch > 0 ? m.batch : 1);
  w.weight_params = m.weights_per_step_params > 0 ? m.weights_per_step_params : m.active_params;
  w.other_bytes = m.kv_bytes_per_step + m.activation_bytes_per_step;
  double active = m.active_params > 0 ? m.active_params : w.weight_params;
  double per_token = m.flops_per_token > 0 ? m.flops_per_token : 2.0 * active;
  w.flops = per_token * w.batch;
  w.run_format = m.format;
  w.source = absl::StrCat("model config ", m.path, m.name.empty() ? "" : absl::StrCat(" (", m.name, ")"));
  return w;
}

proto::FormatCeiling FormatCeilingFor(const devices::DeviceSpec& d, const std::string& format,
                                      const StepWork& w) {
  proto::FormatCeiling c;
  c.set_device(d.name);
  c.set_format(format);
  double bpw = BitsPerWeight(format);
  c.set_bits_per_weight(bpw);
  std::string pipe = PipeForFormat(d, format);
  c.set_pipe(pipe);
  c.set_batch(w.batch);
  double bytes = w.weight_params * bpw / 8.0 + w.other_bytes;
  c.set_bytes_per_step(bytes);
  c.set_flops_per_step(w.flops);
  double bw = d.EffectiveBandwidthGbps();          // GB/s = bytes/ns
  double rate = d.PipeTflops(pipe) * 1e3;           // TFLOPS -> FLOP/ns
  double mem_ns = bw > 0 ? bytes / bw : 0;
  double cmp_ns = rate > 0 ? w.flops / rate : 0;
  c.set_memory_time_ns(mem_ns);
  c.set_compute_time_ns(cmp_ns);
  double step = std::max(mem_ns, cmp_ns);
  c.set_step_time_ns(step);
  c.set_bound(mem_ns >= cmp_ns ? "memory" : "compute");
  if (step > 0) c.set_tokens_per_s(static_cast<double>(w.batch) / step * 1e9);
  c.set_formula(
      "tokens/s = B / max(bytes/BW, flops/rate); bytes = P*bpw/8 + other_bytes");
  c.set_inputs(absl::StrFormat(
      "B=%d; P=%.4g params (%s); bpw=%.4g; other_bytes=%.4g; flops=%.4g; BW=%.0f GB/s (%s); "
      "rate=%.4g TFLOPS %s (%s)",
      w.batch, w.weight_params, w.source, bpw, w.other_bytes, w.flops, bw,
      d.EffectiveBandwidthSource(), d.PipeTflops(pipe), pipe, d.PipeFigure(pipe).source));
  c.set_provenance(absl::StrCat("modelled from ", d.EffectiveBandwidthSource()));
  c.set_is_run_format(!w.run_format.empty() && w.run_format == format);
  return c;
}

proto::Ceilings ComputeCeilings(const proto::Profile& p, const CeilingInputs& in) {
  proto::Ceilings c;
  const uint64_t T = in.total_kernel_time_ns;
  // Communication costs wall time only where no compute hides it: its rows use the exposed
  // time (Profile.comm), not the comm kernels' time.
  const proto::CommSummary& comm = p.comm();
  const std::string exposed_basis = absl::StrFormat(
      "exposed comm time %d ns (comm kernels no compute kernel overlaps; %d ns more are hidden "
      "under compute and would save no wall time by vanishing)",
      comm.exposed_ns(), comm.hidden_ns());
  auto time_of = [&comm](const std::string& name, uint64_t t) {
    return name == "comm" && comm.total_ns() > 0 ? comm.exposed_ns() : t;
  };
  auto basis_of = [&comm, &exposed_basis](const std::string& name) {
    return name == "comm" && comm.total_ns() > 0 ? exposed_basis : std::string();
  };
  for (const auto& row : p.classes()) {
    if (row.time_ns() == 0) continue;
    AddAmdahl(&c, "class", row.class_(), time_of(row.class_(), row.time_ns()), T,
              in.class_roofline_ns, basis_of(row.class_()));
  }
  for (const auto& row : p.roles()) {
    if (row.time_ns() == 0) continue;
    AddAmdahl(&c, "role", row.role(), time_of(row.role(), row.time_ns()), T, in.role_roofline_ns,
              basis_of(row.role()));
  }
  // Against the GPUs' span as well: idle time stays when a kernel vanishes.
  if (const uint64_t span = p.idle().span_ns(); span > 0) {
    for (proto::AmdahlRow& r : *c.mutable_amdahl()) {
      double fs = std::min(1.0, r.share() * static_cast<double>(T) / static_cast<double>(span));
      r.set_span_share(fs);
      r.set_speedup_if_vanished_span(fs < 1.0 ? 1.0 / (1.0 - fs) : 0.0);
    }
  }
  if (in.measured_tokens_per_s > 0) c.set_measured_tokens_per_s(in.measured_tokens_per_s);
  if (!in.step_work) {
    c.set_notes(
        "whole-step format ceilings need the weights read per step: our runtime's traces carry "
        "work models; for other traces pass --model-shape CONFIG (README: \"Analyse a trace you "
        "already have\"); roles whose measured work has weights get their own format ceilings "
        "above");
    return c;
  }
  const StepWork& w = *in.step_work;
  std::vector<const devices::DeviceSpec*> devs;
  if (in.profiled_device) devs.push_back(in.profiled_device);
  // The other devices of the table: NVIDIA only, because a format's ceiling follows the
  // kernel path it routes to on NVIDIA GPUs (FormatCeilingFor); an AMD device is in the
  // table for traces taken on it, and gets a ceiling only as the profiled device.
  for (const auto& d : devices::AllDevices()) {
    if (&d != in.profiled_device && d.IsNvidia()) devs.push_back(&d);
  }
  for (const devices::DeviceSpec* d : devs) {
    for (const char* f : kFormats) {
      proto::FormatCeiling fc = FormatCeilingFor(*d, f, w);
      fc.set_is_profiled_device(d == in.profiled_device);
      *c.add_formats() = std::move(fc);
    }
  }
  c.set_notes(absl::StrCat("weights per step from ", w.source,
                           "; dense datasheet rates unless a measured rate is listed"));
  return c;
}

}  // namespace qprof::ceilings
