#include "runtime/plan.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/registry/dispatch.h"
#include "kernels/registry/registry.h"
#include "kernels/registry/work_models.h"
#include "runtime/tp_shape.h"

namespace qprof::runtime {
namespace {

// One planned kernel: a launch of the step description with its registry facts and work.
void AddPlanned(const StepLaunch& l, const std::string& step, proto::DecodePlan* plan) {
  const kernels::KernelInfo* info = kernels::KernelRegistry::Global().Find(l.kernel_id);
  proto::PlannedKernel* k = plan->add_kernels();
  k->set_kernel_id(l.kernel_id);
  k->set_layer(l.layer);
  k->set_nvtx_path(absl::StrCat(step, "/", l.range));
  k->set_launches(1);
  for (const auto& [key, v] : l.shape) (*k->mutable_shape())[key] = v;
  if (info == nullptr) return;  // registry test guarantees every planned id exists
  k->set_name(info->cuda_kernel_name.empty() ? info->id : info->cuda_kernel_name);
  k->set_role(info->role);
  k->set_pipe_class(info->gpu_pipe_class);
  k->set_format(info->format);
  if (info->work) *k->mutable_work() = info->work(l.shape);
}

}  // namespace

absl::StatusOr<KernelChoice> ChooseKernels(const RunOptions& o) {
  ASSIGN_OR_RETURN(const kernels::KernelInfo* moe,
                   kernels::ResolveMoeVariant(o.format, o.moe_backend, o.target_arch));
  ASSIGN_OR_RETURN(const kernels::KernelInfo* mla,
                   kernels::ResolveMlaVariant(o.mla_kernel, *moe));
  KernelChoice k;
  k.moe_backend = kernels::MoePathOf(*moe);
  k.moe_id = moe->id;
  k.mla_id = mla->id;
  k.moe_cpu_kernel = moe->cpu_stand_in.empty() ? moe->id : moe->cpu_stand_in;
  return k;
}

absl::Status ValidateRunOptions(const RunOptions& o, const ModelArch& c) {
  if (o.format != "mxfp4" && o.format != "nvfp4") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown format '", o.format, "' (formats: mxfp4, nvfp4)"));
  }
  RETURN_IF_ERROR(ChooseKernels(o).status());  // the registry's choices, on o.target_arch
  RETURN_IF_ERROR(ValidateModelArch(c, o.format));
  if (o.batch < 1) return absl::InvalidArgumentError(absl::StrCat("batch ", o.batch, " < 1"));
  if (o.steps < 1) return absl::InvalidArgumentError(absl::StrCat("steps ", o.steps, " < 1"));
  if (o.context < 1) {
    return absl::InvalidArgumentError(absl::StrCat("context ", o.context, " < 1"));
  }
  if (int64_t{o.context} + o.steps > c.max_seq_len) {
    return absl::InvalidArgumentError(
        absl::StrCat("context ", o.context, " + steps ", o.steps, " exceeds max_seq_len ",
                     c.max_seq_len, " of model ", c.name));
  }
  if (o.layers < 0 || o.layers > c.n_layers) {
    return absl::InvalidArgumentError(
        absl::StrCat("layers ", o.layers, " outside 0..", c.n_layers, " of model ", c.name));
  }
  // The runtime's split (runtime/tp_shape.h): heads and routed experts divide by tp; the
  // shared expert splits when it can and otherwise runs on rank 0; the LM head is whole.
  return ValidateTensorParallel(c, o.tp);
}

absl::StatusOr<StepDims> StepDimsFor(const RunOptions& o, const ModelArch& c,
                                     const KernelChoice& choice, int step, int rank) {
  StepDims d;
  d.batch = o.batch;
  d.layers = o.layers > 0 ? o.layers : c.n_layers;
  d.moe_id = choice.moe_id;
  d.mla_id = choice.mla_id;
  // This rank's share, exactly as the CUDA runtime slices it (runtime/tp_shape.h): its
  // heads, its routed experts (whole), its columns of the shared expert (all of them on
  // rank 0 when the split does not fit the kernel's granule). tp 1: the whole model.
  ASSIGN_OR_RETURN(d.slice, MakeTpSlice(c, o.format == "mxfp4" ? kernels::Fp4Format::kMxfp4
                                                               : kernels::Fp4Format::kNvfp4,
                                        o.tp, rank, MoeInterGranule(choice.moe_id)));
  d.lens = ContextLengths(o.context, o.batch);
  for (int& len : d.lens) len += step;
  return d;
}

namespace {

// The plan's assumptions, in words (reports show them).
void AddPlanNotes(const RunOptions& o, const ModelArch& c, const KernelChoice& choice,
                  const StepDims& dims, const std::vector<StepLaunch>& launches,
                  proto::DecodePlan* plan) {
  const int B = o.batch, tp = o.tp, E = c.n_routed_experts, k = c.n_activated_experts;
  const TpSlice& rank0 = dims.slice;
  int64_t unique = 0, local_slots = int64_t{B} * k, avg_sel = 0;
  for (const StepLaunch& l : launches) {
    if (l.op == StepOp::kRoutedExperts) {
      unique = l.shape.at("unique_experts");
      if (l.shape.count("slots")) local_slots = l.shape.at("slots");
    }
    if (l.op == StepOp::kIndexer) avg_sel = l.shape.at("selected");
  }
  plan->add_notes(absl::StrFormat(
      "moe backend %s (requested %s, target arch '%s'); sparse MLA %s", choice.moe_backend,
      o.moe_backend, o.target_arch, choice.mla_id));
  plan->add_notes(absl::StrFormat(
      "unique routed experts per layer assumed %d of %d: E*(1-(1-k/E)^B) for uniform routing "
      "(k=%d, B=%d)%s; slot paths read expert weights once per (token, slot)",
      unique, rank0.experts(), k, B, tp > 1 ? absl::StrFormat(", divided by tp %d", tp) : ""));
  plan->add_notes(absl::StrFormat(
      "attended tokens per sequence: min(len+1, index_topk %d + window %d), averaged: %d; "
      "an upper bound (the window may overlap the top-k)",
      c.index_topk, c.window, avg_sel));
  if (tp > 1) {
    plan->add_notes(absl::StrFormat(
        "tp %d, rank 0's share as the CUDA runtime slices it: %d of %d heads, routed experts "
        "%d..%d of %d (whole; expected %d slots routed to them), shared expert columns %d of "
        "%d%s; LM head, norms, indexer and latent KV replicated; FP32 all-reduce of the "
        "hidden state after attention and after the MoE (range .../comm)",
        tp, rank0.heads(), c.n_heads, rank0.expert_begin, rank0.expert_end - 1, E, local_slots,
        rank0.shared_inter(), c.moe_inter_dim * std::max(1, c.n_shared_experts),
        rank0.shared_split ? "" : " (not split: the kernel's granule does not divide it)"));
  }
  if (dims.layers != c.n_layers) {
    plan->add_notes(absl::StrFormat("layer subset: %d of %d layers", dims.layers, c.n_layers));
  }
}

}  // namespace

absl::StatusOr<proto::DecodePlan> PlanDecodeStep(const RunOptions& o, const ModelArch& c,
                                                 int step) {
  RETURN_IF_ERROR(ValidateRunOptions(o, c));
  ASSIGN_OR_RETURN(const KernelChoice choice, ChooseKernels(o));
  ASSIGN_OR_RETURN(const StepDims dims, StepDimsFor(o, c, choice, step, /*rank=*/0));
  proto::DecodePlan plan;
  plan.set_model(c.name);
  plan.set_format(o.format);
  plan.set_moe_backend(choice.moe_backend);
  plan.set_batch(o.batch);
  for (int len : ContextLengths(o.context, o.batch)) plan.add_context_lengths(len);
  plan.set_tp(o.tp);
  plan.set_layers(dims.layers);
  const std::string step_path = absl::StrCat("decode/step ", step);
  const std::vector<StepLaunch> launches = DescribeDecodeStep(c, dims);
  for (const StepLaunch& l : launches) AddPlanned(l, step_path, &plan);
  double expert_bytes = 0, dense_bytes = 0, kv_bytes = 0;
  for (const proto::PlannedKernel& pk : plan.kernels()) {
    if (pk.role() == "moe.experts") {
      expert_bytes += pk.work().weight_bytes();
    } else {
      dense_bytes += pk.work().weight_bytes();
    }
    kv_bytes += pk.work().kv_bytes();
  }
  plan.set_active_expert_weight_bytes(expert_bytes);
  plan.set_dense_weight_bytes(dense_bytes);
  plan.set_kv_bytes(kv_bytes);
  AddPlanNotes(o, c, choice, dims, launches, &plan);
  return plan;
}

absl::StatusOr<proto::DecodePlan> PlanDecodeForConfig(const RunOptions& o, const ModelArch& c) {
  return PlanDecodeStep(o, c, /*step=*/0);
}

absl::StatusOr<proto::DecodePlan> PlanDecode(const RunOptions& options) {
  ASSIGN_OR_RETURN(ModelArch c, LoadModelArch(options.model));
  return PlanDecodeForConfig(options, c);
}

}  // namespace qprof::runtime
