// The work of a kernel row's launches, for its achieved rates and roofline: registry work
// models (our kernels) and the work the op calls' shapes give (analysis/work), MoE calls
// resolved with the model's shape when one is given (--model-shape). Computed from the
// group's per-distinct-work entries when the tables are emitted; nothing per launch.
//
// Achieved rates are over the launches that carry work only: flops / time and bytes / time
// of exactly those launches (a launch without work is never extrapolated from the others).
// Bytes are unknown for the whole row when any launch with work lacks them (a dtype the
// trace did not record), so achieved_gbps always divides the bytes of every launch counted.
#ifndef QPROF_ANALYSIS_AGGREGATE_GROUP_WORK_H_
#define QPROF_ANALYSIS_AGGREGATE_GROUP_WORK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/aggregate/accumulator.h"
#include "analysis/work/model_shape.h"
#include "proto/profile.pb.h"

namespace qprof::aggregate {

struct GroupWork {
  // One distinct work: per-launch figures, its launches with end >= start and their time.
  struct Entry {
    double flops = 0, bytes = 0, weight_bytes = 0, weight_params = 0;
    std::string pipe;           // registry: its compute pipe; shapes: "" (RoofPipe decides)
    std::string precision;      // shapes: the compute precision
    uint64_t launches = 0;
    double time_ns = 0;
  };
  std::vector<Entry> entries;
  double flops = 0, bytes = 0, time_ns = 0;
  double weight_bytes = 0, weight_params = 0;  // weights (params = bytes * 8 / bits)
  uint64_t launches = 0;
  bool bytes_known = true;
  std::string source;           // KernelRow.work_source
  std::string precision;        // of the shape entry with the most time
  std::string registry_pipe;    // of the registry work model, when any
  std::vector<std::string> formats;  // weight formats seen ("bf16", "mxfp4", ...)
  bool from_registry = false, from_shapes = false, from_model = false;
  bool from_capture = false;    // shapes of graph-replayed kernels' op calls at capture
  bool from_layers = false;     // modelled from --model-shape and the layer order
  uint64_t from_capture_launches = 0;  // of `launches`: graph-replayed, op calls at capture
  uint64_t needs_model = 0;     // timed launches of MoE calls left without work
  std::string model_note;       // why (no --model-shape, or it does not fit)
  uint64_t invalid = 0;         // launches whose shapes did not add up
  std::string invalid_example;
};

GroupWork WorkOfGroup(const KernelGroup& g, const work::ModelShape* model);

// Sets the row's work figures (flops, bytes, work_launches, work_time_ns, achieved_*,
// work_source, roof_pipe from the row's class, work_note).
void FillRowWork(const GroupWork& w, uint64_t calls, proto::KernelRow* row);

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_GROUP_WORK_H_
