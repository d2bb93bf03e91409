#include "runtime/cuda/cuda_trace.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace qprof::runtime::cuda {
namespace {

void AddCudaExtras(const RunOptions& options, const CudaRunFacts& cuda, proto::TraceHeader* h) {
  auto& extra = *h->mutable_run()->mutable_extra();
  extra["cuda_graph"] = options.cuda_graph ? "true" : "false";
  extra["device_arch"] = options.target_arch;
  extra["device_bytes"] = absl::StrCat(cuda.device_bytes);
  if (options.tp > 1) {
    extra["tp_token_mismatch_steps"] = absl::StrCat(cuda.token_mismatch_steps);
    extra["tp_all_reduce"] = cuda.all_reduce_name;
    extra["tp_devices"] = absl::StrJoin(cuda.devices, ",");
  }
}

void AddCudaNotes(const RunOptions& options, const CudaRunFacts& cuda, int warmup,
                  proto::TraceHeader* h) {
  if (options.tp > 1) {
    h->add_notes(absl::StrCat(
        "tensor parallel over ", options.tp, " ranks (GPUs ", absl::StrJoin(cuda.devices, ","),
        ", one host thread per rank, all-reduce: ", cuda.all_reduce_name,
        "): heads and routed experts split across ranks, FP32 all-reduce of the hidden state "
        "after attention and after the MoE (range decode/step N/layer L/comm); tokens are "
        "rank 0's; sizes are summed over ranks"));
  }
  h->add_notes(absl::StrCat(
      "CUDA backend: kernel records from CUPTI activity tracing (measured on the GPU); "
      "tokens/s from the host wall time of ", options.steps - warmup, " steady-state steps, "
      "leaving out ", warmup, " warm-up step(s) (",
      options.cuda_graph ? "lazy module loading, graph capture and instantiation"
                         : "lazy module loading", ")",
      warmup == 0 ? "; too few steps to leave any out: the figure includes the warm-up" : ""));
  if (options.cuda_graph) {
    h->add_notes(absl::StrFormat(
        "CUDA graph: step 0 eager, step 1 captured (%.2f ms) and instantiated (%.2f ms, %d "
        "nodes), later steps replay it",
        cuda.graph.capture_ns * 1e-6, cuda.graph.instantiate_ns * 1e-6, cuda.graph.nodes));
  }
  h->add_notes(kSyntheticPromptNote);
}

}  // namespace

int CudaWarmupSteps(const RunOptions& o) {
  const int wanted = o.cuda_graph ? 2 : 1;
  return o.steps > wanted ? wanted : 0;
}

absl::Status FinishCudaTrace(const RunOptions& options, const ModelArch& arch,
                             const ModelWeights& weights, const DecodeLoop& loop,
                             const RunFacts& facts, const CudaRunFacts& cuda,
                             const proto::RunSetup& setup, const StepKernelsFn& launches,
                             proto::Trace* trace) {
  proto::TraceHeader* h = trace->mutable_header();
  h->set_schema_version(1);
  h->set_provenance(proto::PROVENANCE_MEASURED_GPU);  // also when CUPTI recorded nothing
  h->set_source_kind("qtrace");                        // as the host collector's traces
  proto::CollectorStats* c = h->mutable_collector();
  if (!c->metrics_requested() && c->metrics_unavailable_reason().empty()) {
    // Say why a report has no measured tensor-pipe figures: counters replay every kernel,
    // so they come from a separate pass, which `qprof run` does not make.
    c->set_metrics_unavailable_reason(
        "qprof run traces with CUPTI activity records only; per-kernel counters need a "
        "metrics pass (qprof record --metrics -- <program>)");
  }
  FillRunInfo(options, arch, weights, loop, facts, h->mutable_run());
  proto::RunSetup s = setup;
  s.set_graph_capture_ns(static_cast<uint64_t>(cuda.graph.capture_ns));
  s.set_graph_instantiate_ns(static_cast<uint64_t>(cuda.graph.instantiate_ns));
  s.set_graph_nodes(static_cast<uint32_t>(cuda.graph.nodes));
  *h->mutable_setup() = s;
  AddCudaExtras(options, cuda, h);
  AddCudaNotes(options, cuda, facts.warmup_steps, h);
  ASSIGN_OR_RETURN(const WorkJoinStats j, JoinStepWork(launches, trace));
  if (j.kernels > 0) {
    h->add_notes(absl::StrCat(
        "work models (bytes, FLOPs; evidence registry) joined onto ", j.joined, " of ",
        j.kernels, " kernel records of the decode steps by NVTX range and launch order, from "
        "the decode step's description (runtime/decode_step.h) with the registry's part of "
        "each call per CUDA kernel; unique experts and attended tokens are its expectations, "
        "not counts of this run",
        j.unmatched + j.missing > 0
            ? absl::StrCat("; ", j.unmatched, " records matched no expected kernel, ",
                           j.missing, " expected kernels had no record")
            : ""));
  }
  return absl::OkStatus();
}

}  // namespace qprof::runtime::cuda
