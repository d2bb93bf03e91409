#include "analysis/model/model_notes.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/model/decode_model.h"
#include "fmt/core.h"
#include "proto/vocabulary.h"

namespace qprof::model {

std::vector<std::string> StructuralAssumptions() {
  return {
      "kernel time = max(bytes / achievable bandwidth, SIMT time, padded tensor FLOPs / "
      "(pipe rate * pipe efficiency), all-reduce time) + launch_overhead_ns",
      "achievable bandwidth = min(memory bandwidth * memory_bandwidth_efficiency, bytes in "
      "flight / memory latency) (Little's law); bytes in flight = resident blocks (grid "
      "capped at SMs x blocks per SM by the occupancy rules, with the kernel's registers and "
      "shared memory from its build) x threads x loads in flight per thread (the registry's "
      "launch shape); the memory latency is the spec table's, a lead",
      "SIMT time of our SIMT kernels = FMAs (FLOPs / 2) x issue slots per FMA of the "
      "kernel's main loop (static SASS of the build) / (SMs with a block x 4 schedulers x "
      "32 lanes x boost clock); kernels without SASS facts for the target keep FLOPs / "
      "(FP32 SIMT rate * simt_efficiency) + decoded elements * simt_decode_flops_per_element",
      "bytes, FLOPs, compute pipe and decode work per kernel come from the decode plan's "
      "work models (the kernel registry), not from measurement",
      "SIMT work = FLOPs on the SIMT pipe + FP4 elements decoded * the path's decode cost "
      "(simt_decode_flops_per_element for SIMT kernels, mma_decode_flops_per_element for "
      "W4A16 MMA, whose in-register dequantisation overlaps the MMA; none for native FP4 "
      "MMA, which decodes in the tensor core)",
      "MoE weight reads: slot_gemv reads each routed expert once per (token, expert) slot, "
      "B*k times (no reuse across the batch); grouped paths (w4a16_mma, fp4_mma) read each "
      "touched expert once, U = E*(1-(1-k/E)^B) experts expected under uniform routing",
      "tensor FLOPs are paid per tile: tokens sharing a weight tile are rounded up to "
      "tensor_token_tile (for grouped MoE the expected B*k/U tokens per expert)",
      "all-reduce (ring): base + 2(n-1)*hop + 2(n-1)/n * message / (link bandwidth * "
      "link_bus_efficiency), bus-bandwidth factor from nccl-tests doc/PERFORMANCE.md",
      "kernels run back to back on one stream of rank 0: no overlap between kernels, no "
      "overlap of communication with compute; every rank runs the same schedule",
      "tokens/s = batch / step time of one decode step (all ranks together)",
      "not modelled: L2 cache hits (an upper bound on DRAM traffic, large on sm_120's "
      "128 MB L2), skewed routing, clock throttling, the tail of the last wave, "
      "host-side scheduling, sampling and batching overhead of a serving framework",
  };
}

std::vector<std::string> TargetNotes(const devices::DeviceSpec& target, int tp) {
  std::vector<std::string> out;
  auto figure = [&](std::string_view what, const devices::Figure& f, std::string_view unit) {
    out.push_back(fmt::format("target {}: {} = {:g} {} ({})", target.name, what, f.value,
                              unit, f.source.empty() ? "no source" : f.source));
  };
  out.push_back(fmt::format("target {}: memory bandwidth used = {:g} GB/s ({})", target.name,
                            target.EffectiveBandwidthGbps(),
                            target.EffectiveBandwidthSource()));
  figure("FP32 SIMT", target.fp32_simt_tflops, "TFLOPS");
  figure("BF16 tensor (dense)", target.bf16_tensor_tflops, "TFLOPS");
  figure("FP8 tensor (dense)", target.fp8_tensor_tflops, "TFLOPS");
  figure("FP4 tensor (dense)", target.fp4_tensor_tflops, "TFLOPS");
  figure("boost clock", target.boost_clock_mhz, "MHz");
  figure("memory latency", target.memory_latency_ns, "ns");
  if (tp > 1) {
    figure(absl::StrCat("interconnect (", target.interconnect, ", per GPU per direction)"),
           target.interconnect_gbps, "GB/s");
  }
  return out;
}

void FillModelledHeader(const proto::DecodePlan& plan, const devices::DeviceSpec& target,
                        const ModelParameters& params, ModelResult& result) {
  proto::TraceHeader* h = result.trace.mutable_header();
  h->set_schema_version(kTraceSchemaVersion);
  h->set_provenance(proto::PROVENANCE_MODELLED);
  h->set_source_kind("model");
  proto::RunInfo* run = h->mutable_run();
  run->set_model(plan.model());
  run->set_format(plan.format());
  run->set_moe_backend(plan.moe_backend());
  run->set_backend("model");
  run->set_batch(plan.batch());
  run->set_steps(1);
  run->set_tokens_generated(plan.batch());
  run->set_wall_time_ns(static_cast<uint64_t>(std::llround(result.step_ns)));
  run->set_tp(std::max<uint32_t>(1, plan.tp()));
  for (uint32_t c : plan.context_lengths()) run->add_context_lengths(c);
  run->set_layers(plan.layers());
  (*run->mutable_extra())["model.target"] = target.key;
  (*run->mutable_extra())["model.target_name"] = target.name;
  (*run->mutable_extra())["model.tokens_per_s"] = fmt::format("{:.1f}", result.tokens_per_s);

  proto::DeviceInfo* d = h->add_devices();
  d->set_id(0);
  d->set_name(absl::StrCat(target.name, " (modelled)"));
  d->set_arch(target.arch);
  d->set_kind("modelled");
  d->set_sm_count(static_cast<uint32_t>(target.sm_count.value));
  d->set_memory_bytes(static_cast<uint64_t>(target.memory_gb.value * 1e9));
  d->set_memory_bandwidth_gbps(target.EffectiveBandwidthGbps());

  proto::CollectorStats* c = h->mutable_collector();
  c->set_collector("model");
  c->set_records_total(result.trace.activities_size());

  auto note = [h](std::string s) { h->add_notes(std::move(s)); };
  note(fmt::format(
      "MODELLED projection, not a measurement: one decode step of {} ({}, MoE path {}) on "
      "{} x TP {}, batch {}: {:.3f} ms per step, {:.1f} tokens/s",
      plan.model(), plan.format(), plan.moe_backend(), target.name,
      std::max<uint32_t>(1, plan.tp()), plan.batch(), result.step_ns / 1e6,
      result.tokens_per_s));
  for (std::string& s : StructuralAssumptions()) note("assumption: " + s);
  for (std::string& s : TargetNotes(target, std::max<int>(1, plan.tp()))) note(s);
  for (std::string& s : ParameterNotes(params)) note("parameter: " + s);
  for (const std::string& s : plan.notes()) note("plan: " + s);
}

void AddNvtxRanges(proto::Trace& trace) {
  struct Span {
    int64_t start = 0;
    int64_t end = 0;
    uint32_t depth = 0;
    size_t first = 0;  // order of first appearance, for a stable output
  };
  std::map<std::string, Span> spans;
  size_t order = 0;
  for (const proto::Activity& a : trace.activities()) {
    const std::string& path = a.nvtx_path();
    if (path.empty()) continue;
    uint32_t depth = 0;
    for (size_t pos = 0;; ++depth) {
      size_t slash = path.find('/', pos);
      std::string prefix = path.substr(0, slash);
      auto [it, inserted] = spans.try_emplace(prefix);
      if (inserted) {
        it->second = {a.start_ns(), a.end_ns(), depth, order++};
      } else {
        it->second.start = std::min(it->second.start, a.start_ns());
        it->second.end = std::max(it->second.end, a.end_ns());
      }
      if (slash == std::string::npos) break;
      pos = slash + 1;
    }
  }
  std::vector<std::pair<std::string, Span>> sorted(spans.begin(), spans.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& x, const auto& y) { return x.second.first < y.second.first; });
  for (const auto& [path, s] : sorted) {
    proto::NvtxRange* r = trace.add_ranges();
    r->set_path(path);
    size_t slash = path.rfind('/');
    r->set_name(slash == std::string::npos ? path : path.substr(slash + 1));
    r->set_start_ns(s.start);
    r->set_end_ns(s.end);
    r->set_depth(s.depth);
  }
}

}  // namespace qprof::model
