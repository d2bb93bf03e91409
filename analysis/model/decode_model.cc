#include "analysis/model/decode_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/model/calibration_data.h"
#include "analysis/model/kernel_facts.h"
#include "analysis/model/model_notes.h"
#include "analysis/occupancy/annotate.h"
#include "analysis/occupancy/device_limits.h"
#include "base/status_macros.h"
#include "fmt/core.h"
#include "proto/vocabulary.h"

namespace qprof::model {
namespace {

int64_t ShapeOr(const proto::PlannedKernel& k, const char* key, int64_t fallback) {
  auto it = k.shape().find(key);
  return it == k.shape().end() ? fallback : it->second;
}

bool IsTensorPipe(const std::string& pipe) { return pipe.rfind("tensor_", 0) == 0; }

// Tokens that share one weight tile of a tensor kernel, or 0 when the shape does not say.
// Grouped MoE: the tokens routed to a touched expert, on average B*k / U(E, k, B).
double RowsPerWeightTile(const proto::PlannedKernel& k) {
  int64_t tokens = ShapeOr(k, "tokens", ShapeOr(k, "m", 0));
  if (tokens <= 0) return 0;
  int64_t experts = ShapeOr(k, "experts", 0);
  int64_t topk = ShapeOr(k, "topk", 0);
  if (k.role() == role::kMoeExperts && experts > 0 && topk > 0) {
    // The plan's own count when it gives one (so bytes and tiles agree), else U(E, k, B).
    int64_t planned = ShapeOr(k, "unique_experts", 0);
    double unique = planned > 0 ? static_cast<double>(planned)
                                : ExpectedUniqueExperts(experts, topk, tokens);
    return unique > 0 ? static_cast<double>(tokens) * topk / unique : 0;
  }
  return static_cast<double>(tokens);
}

// Blocks, occupancy and bytes in flight of a planned launch on the target (LaunchShape).
void ApplyLaunchShape(const proto::LaunchShape& l, const devices::DeviceSpec& target,
                      KernelEstimate& e) {
  auto limits = occupancy::DeviceLimitsForSpec(target);
  if (!limits.ok() || l.threads_per_block() == 0 || l.blocks() == 0) return;
  const int sms = limits->sm_count;
  uint64_t blocks = l.blocks();
  if (l.split_blocks_per_sm() > 0 && l.max_splits() > 0) {
    // The launcher splits work (flash-decoding) to reach split_blocks_per_sm per SM.
    uint64_t want = (uint64_t{l.split_blocks_per_sm()} * sms + blocks - 1) / blocks;
    blocks *= std::max<uint64_t>(1, std::min<uint64_t>(want, l.max_splits()));
  }
  occupancy::LaunchConfig c;
  c.threads_per_block = l.threads_per_block();
  c.blocks = static_cast<int64_t>(blocks);
  c.dynamic_smem = l.dynamic_shared_bytes();
  const KernelFacts* f = FindKernelFacts(l.cuda_kernel(), target.arch);
  if (f != nullptr) {
    c.registers_per_thread = f->registers;
    c.static_smem = f->static_shared_bytes;
    e.registers = f->registers;
    e.issue_slots_per_fma = IssueSlotsPerFma(*f);
  }
  auto o = occupancy::ComputeOccupancy(*limits, c);
  if (!o.ok()) return;
  e.blocks = blocks;
  e.threads_per_block = l.threads_per_block();
  e.active_blocks_per_sm = o->active_blocks_per_sm;
  const double resident = std::min<double>(static_cast<double>(blocks),
                                           static_cast<double>(sms) * o->active_blocks_per_sm);
  e.bytes_in_flight = resident * l.threads_per_block() * l.bytes_in_flight_per_thread();
  e.mlp_gbps = LatencyBoundBandwidthGbps(e.bytes_in_flight, target.memory_latency_ns.value);
  if (!std::isfinite(e.mlp_gbps)) e.mlp_gbps = 0;
  e.launch_note = fmt::format(
      "{}: {} blocks x {} threads, {} per SM ({}), {:.0f} B in flight per thread{}", l.cuda_kernel(),
      blocks, l.threads_per_block(), o->active_blocks_per_sm,
      f ? fmt::format("{} registers", f->registers) : "registers unknown: no build facts",
      l.bytes_in_flight_per_thread(),
      e.issue_slots_per_fma > 0 ? fmt::format(", {:.2f} issue slots per FMA", e.issue_slots_per_fma)
                                : "");
}

}  // namespace

ModelParameters ParametersForTarget(const devices::DeviceSpec& target) {
  ModelParameters p = DefaultModelParameters();
  if (target.launch_overhead_us.value > 0) {
    p.launch_overhead_ns.value = target.launch_overhead_us.value * 1000.0;
    p.launch_overhead_ns.source =
        absl::StrCat("device spec table (", target.name, "): ", target.launch_overhead_us.source);
  }
  ApplyFittedParameters(p, FittedParametersFor(target.key));
  return p;
}

void ApplyFittedParameters(ModelParameters& params, const std::vector<FittedParameter>& fits) {
  for (const FittedParameter& f : fits) {
    // A stored fit was validated when it was written; ignore one that no longer applies.
    (void)SetParameter(params, f.parameter, f.value,
                       absl::StrCat("fitted on ", f.device, " on ", f.date, " from ", f.source));
  }
}

absl::StatusOr<KernelEstimate> EstimateKernel(const proto::PlannedKernel& kernel, int tp,
                                              const devices::DeviceSpec& target,
                                              const ModelParameters& params) {
  KernelEstimate e;
  e.kernel_id = kernel.kernel_id();
  e.name = kernel.name().empty() ? kernel.kernel_id() : kernel.name();
  e.role = kernel.role();
  e.pipe_class = kernel.pipe_class();
  e.compute_pipe = kernel.work().compute_pipe();
  e.launches = std::max<uint32_t>(1, kernel.launches());
  const proto::WorkModel& w = kernel.work();

  double bw_gbps = target.EffectiveBandwidthGbps() * params.memory_bandwidth_efficiency.value;
  if (!(bw_gbps > 0)) {
    return absl::FailedPreconditionError(
        absl::StrCat("target ", target.name, " has no memory bandwidth in the spec table"));
  }
  // Latency: with the launch shape, bandwidth is also capped by the bytes in flight.
  if (kernel.has_launch()) ApplyLaunchShape(kernel.launch(), target, e);
  const bool latency_bound = e.mlp_gbps > 0 && e.mlp_gbps < bw_gbps;
  double memory_ns = w.bytes() / (latency_bound ? e.mlp_gbps : bw_gbps);  // GB/s == bytes/ns

  // SIMT issue: FLOPs of a SIMT kernel plus the FP4 decode work of its path. decode_ops
  // counts elements decoded; the native FP4 MMA decodes inside the tensor core, so its
  // decode_ops (the registry counts them for every path) cost no SIMT issue.
  double decode_cost = e.compute_pipe == compute_pipe::kSimtFp32
                           ? params.simt_decode_flops_per_element.value
                       : e.compute_pipe == compute_pipe::kTensorBf16
                           ? params.mma_decode_flops_per_element.value
                           : 0.0;
  double simt_flops = (e.compute_pipe == compute_pipe::kSimtFp32 ? w.flops() : 0.0) +
                      w.decode_ops() * decode_cost;
  double simt_rate = target.PipeTflops(compute_pipe::kSimtFp32) * 1e3 *
                     params.simt_efficiency.value;  // FLOP/ns
  double simt_ns = 0;
  const bool issue_term = e.compute_pipe == compute_pipe::kSimtFp32 && e.issue_slots_per_fma > 0 &&
                          e.blocks > 0 && target.boost_clock_mhz.value > 0;
  if (issue_term) {
    // Our SIMT kernels: every FMA of the work model costs the main loop's issue slots per
    // FMA (decode, conversion, shared loads included), on the SMs that hold a block.
    const double sms = std::min<double>(static_cast<double>(e.blocks), target.sm_count.value);
    simt_ns = IssueTimeNs(w.flops() / 2 * e.issue_slots_per_fma, sms, target.boost_clock_mhz.value);
    simt_flops = w.flops() / 2 * e.issue_slots_per_fma * 2;  // as FLOP-equivalents
  } else if (simt_flops > 0) {
    if (!(simt_rate > 0)) {
      return absl::FailedPreconditionError(
          absl::StrCat("target ", target.name, " has no FP32 SIMT rate in the spec table"));
    }
    simt_ns = simt_flops / simt_rate;
  }
  e.simt_work_flops = simt_flops;

  double tensor_ns = 0;
  if (IsTensorPipe(e.compute_pipe) && w.flops() > 0) {
    double peak = target.PipeTflops(e.compute_pipe);
    if (!(peak > 0)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "target ", target.name, " (", target.arch, ") has no ", e.compute_pipe,
          " pipe, which kernel ", e.kernel_id, " needs; choose another --moe-backend"));
    }
    double eff = e.compute_pipe == compute_pipe::kTensorFp4   ? params.tensor_fp4_efficiency.value
                 : e.compute_pipe == compute_pipe::kTensorFp8 ? params.tensor_fp8_efficiency.value
                                                              : params.tensor_bf16_efficiency.value;
    double rows = RowsPerWeightTile(kernel);
    if (rows > 0) e.tensor_padding = PaddedRows(rows, params.tensor_token_tile.value) / rows;
    e.tensor_work_flops = w.flops() * e.tensor_padding;
    e.tensor_peak_ns = e.tensor_work_flops / (peak * 1e3);
    tensor_ns = e.tensor_work_flops / (peak * 1e3 * eff);
  }

  double comm_ns = 0;
  if (e.role == role::kComm && w.comm_bytes() > 0 && tp > 1) {
    AllReduceInputs in;
    in.message_bytes = w.comm_bytes();
    in.ranks = tp;
    in.link_gbps = target.interconnect_gbps.value;
    in.bus_efficiency = params.link_bus_efficiency.value;
    in.base_latency_ns = params.allreduce_base_latency_ns.value;
    in.hop_latency_ns = params.allreduce_hop_latency_ns.value;
    comm_ns = AllReduceTimeNs(in);
    if (!std::isfinite(comm_ns)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "target ", target.name, " has no interconnect bandwidth in the spec table; "
          "cannot model tensor parallelism ", tp));
    }
    memory_ns = 0;  // the collective's own memory traffic is inside its measured busbw
  }
  e.time = CombineKernelTime(memory_ns, simt_ns, tensor_ns, comm_ns,
                             params.launch_overhead_ns.value);
  if (latency_bound && e.time.bound == "memory") e.time.bound = "latency";
  return e;
}

absl::StatusOr<ModelResult> ModelDecodeStep(const proto::DecodePlan& plan,
                                            const devices::DeviceSpec& target,
                                            const ModelParameters& params) {
  if (plan.kernels().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("decode plan of ", plan.model(), " has no kernels"));
  }
  if (plan.batch() == 0) {
    return absl::InvalidArgumentError("decode plan has batch 0");
  }
  int tp = std::max<int>(1, plan.tp());
  ModelResult result;
  proto::Trace& trace = result.trace;
  int64_t t = 0;
  uint64_t correlation = 1;
  for (int i = 0; i < plan.kernels_size(); ++i) {
    const proto::PlannedKernel& pk = plan.kernels(i);
    ASSIGN_OR_RETURN(KernelEstimate e, EstimateKernel(pk, tp, target, params));
    e.plan_index = i;
    int64_t dur = std::max<int64_t>(1, std::llround(e.time.total_ns));
    for (uint32_t l = 0; l < e.launches; ++l) {
      proto::Activity* a = trace.add_activities();
      a->set_kind(proto::ACTIVITY_KIND_KERNEL);
      a->set_device_id(0);
      a->set_stream_id(1);
      a->set_start_ns(t);
      a->set_end_ns(t + dur);
      a->set_correlation_id(correlation++);
      a->set_name(e.name);
      a->set_nvtx_path(pk.nvtx_path());
      a->set_kernel_id(pk.kernel_id());
      *a->mutable_work() = pk.work();
      proto::Attribution* at = a->mutable_attribution();
      at->set_role(pk.role().empty() ? std::string(role::kOther) : pk.role());
      at->set_pipe_class(pk.pipe_class().empty() ? std::string(pipe::kOther) : pk.pipe_class());
      at->set_format(pk.format().empty() ? std::string(format::kUnknown) : pk.format());
      at->set_evidence(std::string(evidence::kModelled));
      at->set_evidence_detail(absl::StrCat("decode plan kernel ", pk.kernel_id(), "; ",
                                           e.time.bound, "-bound in the model"));
      auto& args = *a->mutable_args();
      args["model.bound"] = e.time.bound;
      args["model.memory_ns"] = fmt::format("{:.1f}", e.time.memory_ns);
      args["model.simt_ns"] = fmt::format("{:.1f}", e.time.simt_ns);
      args["model.tensor_ns"] = fmt::format("{:.1f}", e.time.tensor_ns);
      args["model.comm_ns"] = fmt::format("{:.1f}", e.time.comm_ns);
      args["model.launch_ns"] = fmt::format("{:.1f}", e.time.launch_ns);
      if (e.tensor_padding != 1) {
        args["model.tensor_padding"] = fmt::format("{:.3f}", e.tensor_padding);
      }
      if (e.blocks > 0) {
        // The launch the model assumed, so reports compute occupancy and waves for it.
        a->mutable_grid()->set_x(static_cast<uint32_t>(e.blocks));
        a->mutable_grid()->set_y(1);
        a->mutable_grid()->set_z(1);
        a->mutable_block()->set_x(e.threads_per_block);
        a->mutable_block()->set_y(1);
        a->mutable_block()->set_z(1);
        a->set_registers_per_thread(static_cast<uint32_t>(e.registers));
        a->set_dynamic_shared_bytes(pk.launch().dynamic_shared_bytes());
        args["model.launch"] = e.launch_note;
        args["model.bytes_in_flight"] = fmt::format("{:.0f}", e.bytes_in_flight);
        if (e.mlp_gbps > 0) args["model.mlp_gbps"] = fmt::format("{:.1f}", e.mlp_gbps);
      }
      t += dur;
    }
    result.kernels.push_back(std::move(e));
  }
  result.step_ns = static_cast<double>(t);
  result.tokens_per_s = plan.batch() * 1e9 / result.step_ns;
  FillModelledHeader(plan, target, params, result);
  AddNvtxRanges(trace);
  occupancy::AnnotateOccupancy(&trace);  // reports show the modelled launches' occupancy
  return result;
}

}  // namespace qprof::model
