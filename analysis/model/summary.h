// What the story asks of a modelled run, in numbers: tokens/s, the share of each role and
// pipe class in the step, what bounds the time, and the Amdahl bound of removing the MoE
// experts (or any role) entirely: 1 / (1 - f) for a share f.
//
// The JSON form (SummaryJson) is stable: fixed key order, fixed precision, so that golden
// files diff cleanly. It is the `model-summary.json` qprof run writes next to modelled
// traces and the golden of tests/analysis/model/story_golden_test.cc.
#ifndef QPROF_ANALYSIS_MODEL_SUMMARY_H_
#define QPROF_ANALYSIS_MODEL_SUMMARY_H_

#include <map>
#include <string>
#include <vector>

#include "analysis/model/decode_model.h"

namespace qprof::model {

struct ModelSummary {
  std::string label;            // "mxfp4 via slot_gemv"
  std::string model;
  std::string format;
  std::string moe_backend;
  std::string target;           // spec-table key
  uint32_t batch = 0;
  uint32_t tp = 1;
  uint32_t layers = 0;
  double step_ms = 0;
  double tokens_per_s = 0;      // aggregate over the batch
  double tokens_per_s_per_sequence = 0;
  double bytes_per_step = 0;    // per rank
  double weight_bytes_per_step = 0;
  double kv_bytes_per_step = 0;
  double flops_per_step = 0;    // useful FLOPs per rank
  uint64_t launches_per_step = 0;
  std::map<std::string, double> role_share;    // fraction of step time
  std::map<std::string, double> role_bytes;    // bytes per step per rank, by role
  std::map<std::string, double> pipe_share;    // "simt", "tensor", "comm", ...
  std::map<std::string, double> bound_share;   // "memory", "simt", "tensor", "comm", "launch"
  double launch_share = 0;                     // launch overhead / step
  // Fraction of the step the tensor pipe would be busy at its datasheet peak doing the
  // step's (padded) tensor FLOPs: the model's counterpart of a measured tensor-pipe
  // utilisation such as the story's "under 1%" (not the time share of tensor kernels).
  double tensor_pipe_active = 0;
  // Amdahl: speedup if the role vanished, 1 / (1 - share).
  std::map<std::string, double> amdahl_if_removed;
  // Top two roles together (the story's "77% in two kernels").
  std::vector<std::string> top_roles;
  double top_two_share = 0;
};

ModelSummary Summarize(const proto::DecodePlan& plan, const ModelResult& result,
                       const std::string& target_key);

// 1 / (1 - share); +inf (printed "inf") for share >= 1.
double AmdahlIfRemoved(double share);

// Stable JSON for a list of summaries plus free-form notes (comparisons, assumptions).
// The run summary's `schema_version`: changes when a field's meaning changes (fields may be
// added without a change). Its JSON Schema is schemas/run-summary.schema.json.
inline constexpr int kRunSummarySchemaVersion = 1;

std::string SummaryJson(const std::vector<ModelSummary>& summaries,
                        const std::vector<std::string>& notes);

// A short terminal table: one line per summary with tok/s, step ms, MoE and sparse-MLA
// shares, SIMT/tensor split and the Amdahl bound of the MoE experts.
std::string SummaryTable(const std::vector<ModelSummary>& summaries);

}  // namespace qprof::model

#endif  // QPROF_ANALYSIS_MODEL_SUMMARY_H_
