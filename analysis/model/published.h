// Published end-to-end figures a modelled run can be put beside, and the notes that compare
// them with the model. Each figure's `source` is printed with it, so it names where a reader
// can find the figure: a public benchmark, post or paper, or, for the figures the user story
// reports from its own runs (no public source), "reported in the user story (...)". Never an
// internal file name: reports go to users who do not have the project's notes.
//
// These figures are for comparison only: the model is never tuned to reproduce them
// (parameters.h). A comparison note says how far apart the two are and what the gap
// implies, e.g. the bandwidth the published kernel must have reached for its reported
// share of the step, so the reader sees where the model's assumptions fail.
#ifndef QPROF_ANALYSIS_MODEL_PUBLISHED_H_
#define QPROF_ANALYSIS_MODEL_PUBLISHED_H_

#include <string>
#include <vector>

#include "analysis/model/summary.h"

namespace qprof::model {

struct PublishedFigure {
  std::string id;             // "story-mxfp4"
  std::string model;          // preset it corresponds to: "v4-flash"
  std::string target;         // spec-table key: "rtx-pro-6000"
  int gpus = 0;
  std::string format;         // "mxfp4", "fp8"
  std::string moe_backend;    // "slot_gemv", "" when not ours
  int concurrency = 0;        // 0 = not stated
  double tokens_per_s = 0;
  std::string scope;          // "aggregate", "per sequence", "unstated"
  double moe_share = 0;       // reported share of decode in MoE experts (0 = none)
  double sparse_mla_share = 0;
  std::string source;
};

const std::vector<PublishedFigure>& PublishedFigures();

// Notes comparing a modelled run with every published figure of the same model, target
// and format (none when nothing matches).
std::vector<std::string> ComparisonNotes(const ModelSummary& summary);

}  // namespace qprof::model

#endif  // QPROF_ANALYSIS_MODEL_PUBLISHED_H_
