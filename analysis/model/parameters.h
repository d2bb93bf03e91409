// The named parameters of the decode model: efficiencies, launch overhead and
// collective latencies, each with a default and the source of that default.
//
// Design note: the model multiplies datasheet (or measured) peaks by these efficiencies.
// They are deliberately few and global (one per pipe, not one per kernel), so that a
// prediction can be explained in a sentence and so that calibration against measured
// traces of our own runtime (calibration.h) has few knobs to fit. They are never tuned to
// reproduce a published end-to-end figure; a fitted value replaces a default only when it
// comes from a measured trace of the bundled runtime (calibration_data.cc), and then its
// source string says which device, date and trace.
#ifndef QPROF_ANALYSIS_MODEL_PARAMETERS_H_
#define QPROF_ANALYSIS_MODEL_PARAMETERS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace qprof::model {

// One named number with where it came from. `source` is a full sentence a reader can
// check ("FACTS.md: H200 4.3 TB/s measured copy of 4.8 TB/s datasheet").
struct ModelParameter {
  std::string name;
  double value = 0;
  std::string unit;    // "fraction", "ns", "flop/op", "tokens"
  std::string source;
};

struct ModelParameters {
  // Fraction of peak DRAM bandwidth a streaming decode kernel sustains.
  ModelParameter memory_bandwidth_efficiency;
  // Fraction of the SIMT FP32 peak (FMA = 2 FLOPs) a SIMT decode kernel sustains.
  ModelParameter simt_efficiency;
  // Fraction of the dense BF16 tensor peak a mma.sync W4A16 kernel sustains.
  ModelParameter tensor_bf16_efficiency;
  // Fraction of the dense FP8 tensor peak.
  ModelParameter tensor_fp8_efficiency;
  // Fraction of the dense FP4 tensor peak a block-scaled FP4 MMA kernel sustains.
  ModelParameter tensor_fp4_efficiency;
  // FLOP-equivalents of SIMT issue per FP4 element decoded (WorkModel.decode_ops counts
  // elements) by a SIMT kernel (slot-GEMV: arithmetic E2M1 decode per slot) ...
  ModelParameter simt_decode_flops_per_element;
  // ... and by a W4A16 MMA kernel (Marlin-style LOP3 dequantisation once per tile). The
  // native FP4 MMA decodes in the tensor core: no SIMT decode work.
  ModelParameter mma_decode_flops_per_element;
  // Rows of the MMA tile that activations (tokens) occupy: tensor FLOPs are paid for
  // ceil(tokens / tile) * tile tokens, not for the tokens present.
  ModelParameter tensor_token_tile;
  // Time added to every launch (launch gap plus ramp-up and tail of a short kernel).
  ModelParameter launch_overhead_ns;
  // All-reduce: fraction of the link's peak that NCCL's bus bandwidth reaches.
  ModelParameter link_bus_efficiency;
  // All-reduce latency = base + 2(n-1) * hop (ring: 2(n-1) sequential steps).
  ModelParameter allreduce_base_latency_ns;
  ModelParameter allreduce_hop_latency_ns;

  // Every parameter, in declaration order (for notes, JSON and lookup by name).
  std::vector<const ModelParameter*> All() const;
  std::vector<ModelParameter*> MutableAll();
};

// The defaults, each with its source.
ModelParameters DefaultModelParameters();

// Sets the parameter called `name` ("simt_efficiency"); InvalidArgument naming it when
// unknown or when the value is out of range (efficiencies in (0, 1], times >= 0).
absl::Status SetParameter(ModelParameters& params, const std::string& name, double value,
                          const std::string& source);

// Parses "name=value[,name=value...]" (the CLI's --model-param) into `params`; the
// source of each becomes "set on the command line".
absl::Status ApplyParameterOverrides(ModelParameters& params, const std::string& spec);

// "simt_efficiency = 0.5 (fraction): <source>", one line per parameter.
std::vector<std::string> ParameterNotes(const ModelParameters& params);

}  // namespace qprof::model

#endif  // QPROF_ANALYSIS_MODEL_PARAMETERS_H_
