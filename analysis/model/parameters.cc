#include "analysis/model/parameters.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "fmt/core.h"

namespace qprof::model {

std::vector<const ModelParameter*> ModelParameters::All() const {
  return {&memory_bandwidth_efficiency, &simt_efficiency,       &tensor_bf16_efficiency,
          &tensor_fp8_efficiency,       &tensor_fp4_efficiency, &simt_decode_flops_per_element,
          &mma_decode_flops_per_element, &tensor_token_tile,           &launch_overhead_ns,    &link_bus_efficiency,
          &allreduce_base_latency_ns,   &allreduce_hop_latency_ns};
}

std::vector<ModelParameter*> ModelParameters::MutableAll() {
  std::vector<ModelParameter*> out;
  for (const ModelParameter* p : All()) out.push_back(const_cast<ModelParameter*>(p));
  return out;
}

ModelParameters DefaultModelParameters() {
  ModelParameters p;
  p.memory_bandwidth_efficiency = {
      "memory_bandwidth_efficiency", 0.85, "fraction",
      "assumed; FlashMLA's README reports dense decode at up to 3000 GB/s on H800 SXM5, "
      "0.90 of its 3.35 TB/s; set below that because decode kernels gather and write "
      "partial sums"};
  p.simt_efficiency = {
      "simt_efficiency", 0.5, "fraction",
      "assumed; a SIMT GEMV issues a load, a decode and an FMA per weight, so it cannot "
      "keep the FMA pipe as busy as a tiled SGEMM (70-90% of peak); not yet calibrated"};
  p.tensor_bf16_efficiency = {
      "tensor_bf16_efficiency", 0.7, "fraction",
      "assumed, not calibrated (no public sustained figure cited): below what large dense "
      "BF16 GEMMs reach, because mma.sync tiles are fed by in-register dequantisation"};
  p.tensor_fp8_efficiency = {
      "tensor_fp8_efficiency", 0.7, "fraction",
      "assumed equal to tensor_bf16_efficiency (no FP8 kernel in the bundled runtime)"};
  p.tensor_fp4_efficiency = {
      "tensor_fp4_efficiency", 0.5, "fraction",
      "assumed; block-scaled FP4 MMA also loads and applies scale factors per 16 "
      "elements; no published sustained rate for sm_120 mma.sync kind::mxf4nvf4"};
  p.simt_decode_flops_per_element = {
      "simt_decode_flops_per_element", 12, "flop/element",
      "assumed; an arithmetic E2M1 decode (as in SGLang's MXFP4 slot-GEMV) spends about 3 "
      "integer/logic instructions per element (nibble extract, shift, convert/select; the "
      "scale multiply folds into the FMA), and the CUDA C++ Programming Guide throughput "
      "table gives 64 integer results/clock/SM vs 128 FP32 FMAs (cc 8.6-12.x): 3 x 2 issue "
      "slots x 2 FLOPs = 12"};
  p.mma_decode_flops_per_element = {
      "mma_decode_flops_per_element", 4, "flop/element",
      "assumed; Marlin-style dequantisation (the Marlin W4A16 kernel, IST-DASLab/marlin) turns packed nibbles into "
      "BF16 pairs with one LOP3 and one packed subtract/FMA per 2 elements, about one "
      "instruction per element at the integer rate: 1 x 2 issue slots x 2 FLOPs = 4"};
  p.tensor_token_tile = {
      "tensor_token_tile", 16, "tokens",
      "PTX ISA: mma.sync m16n8k16 (BF16) and m16n8k64 (FP4) with activations as the "
      "16-row A operand (Marlin's layout): fewer tokens per expert still pay a full tile"};
  p.launch_overhead_ns = {
      "launch_overhead_ns", 3000, "ns",
      "assumed; eager launches of short kernels are spaced 2-5 us apart (NVIDIA "
      "Technical Blog, 'Getting Started with CUDA Graphs'); CUDA graphs lower it"};
  p.link_bus_efficiency = {
      "link_bus_efficiency", 0.75, "fraction",
      "assumed; nccl-tests doc/PERFORMANCE.md defines busbw = algbw * 2(n-1)/n, which "
      "reaches roughly 70-85% of the link's peak for large messages"};
  p.allreduce_base_latency_ns = {
      "allreduce_base_latency_ns", 5000, "ns",
      "assumed; nccl-tests all_reduce_perf reports ~6 us for 8-byte all-reduces between "
      "two PCIe GPUs, a floor that the per-hop term grows with ranks"};
  p.allreduce_hop_latency_ns = {
      "allreduce_hop_latency_ns", 1000, "ns",
      "assumed; one ring step (2(n-1) per all-reduce) costs about a microsecond of "
      "PCIe/NVLink round trip and kernel synchronisation"};
  return p;
}

absl::Status SetParameter(ModelParameters& params, const std::string& name, double value,
                          const std::string& source) {
  for (ModelParameter* p : params.MutableAll()) {
    if (p->name != name) continue;
    if (p->unit == "fraction" && !(value > 0 && value <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("model parameter ", name, " must be in (0, 1], got ", value));
    }
    if (!(value >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("model parameter ", name, " must be >= 0, got ", value));
    }
    if (p->unit == "tokens" && value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("model parameter ", name, " must be >= 1, got ", value));
    }
    p->value = value;
    p->source = source;
    return absl::OkStatus();
  }
  std::string known;
  for (const ModelParameter* p : params.All()) absl::StrAppend(&known, known.empty() ? "" : ", ", p->name);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown model parameter '", name, "' (known: ", known, ")"));
}

absl::Status ApplyParameterOverrides(ModelParameters& params, const std::string& spec) {
  for (absl::string_view item : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    std::vector<std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    double value = 0;
    if (kv.size() != 2 || !absl::SimpleAtod(kv[1], &value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model parameter override '", std::string(item), "' is not name=number"));
    }
    std::string name(absl::StripAsciiWhitespace(kv[0]));
    RETURN_IF_ERROR(SetParameter(params, name, value, "set on the command line"));
  }
  return absl::OkStatus();
}

std::vector<std::string> ParameterNotes(const ModelParameters& params) {
  std::vector<std::string> out;
  for (const ModelParameter* p : params.All()) {
    out.push_back(fmt::format("{} = {:g} ({}): {}", p->name, p->value, p->unit, p->source));
  }
  return out;
}

}  // namespace qprof::model
