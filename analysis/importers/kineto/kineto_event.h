// Decoding one Kineto trace event (a JSON object) into a flat struct, with simdjson
// On-Demand. Fields are read in document order; `args` is only looked into for the
// categories that need it (kernels, copies, launches, counter ranges), so the bulk of a
// trace (cpu_op, python_function) costs little more than finding its "cat".
#ifndef QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_EVENT_H_
#define QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_EVENT_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/importers/kineto/kineto_numbers.h"
#include "simdjson.h"

namespace qprof::importers {

enum class KinetoEventKind {
  kIgnored,
  kKernel,
  kMemcpy,
  kMemset,
  kRuntime,            // cuda_runtime / cuda_driver / Runtime: a launch call on a CPU thread
  kUserAnnotation,     // CPU range (record_function)
  kCpuOp,              // cpu_op: a framework operator on a CPU thread (launch context)
  kPythonFunction,     // python_function: a Python frame (with_stack; launch context)
  kGpuUserAnnotation,  // GPU range on a stream
  kProfilerRange,      // cuda_profiler_range: counters of one kernel
};

// Category string -> kind, without case ("Kernel" and "kernel" alike); kIgnored otherwise.
KinetoEventKind KindOfCategory(std::string_view cat);

struct KinetoEvent {
  KinetoEventKind kind = KinetoEventKind::kIgnored;
  std::string name;
  // PrehashedStrings::Hash(name) for the kinds kept: hashed where the event is decoded (on
  // a worker), so the thread that interns names does not hash them again.
  size_t name_hash = 0;
  bool has_ts = false, has_dur = false;
  int64_t ts_ns = 0, dur_ns = 0;
  uint32_t pid_num = 0;
  uint64_t tid_num = 0;
  bool has_correlation = false;
  uint64_t correlation = 0;
  // The args of GPU events (kernels; copies and memsets: device, stream, bytes; GPU
  // annotations: device, stream), apart so other events can tell they carry none.
  struct GpuArgs {
    bool has_device = false, has_stream = false;
    uint64_t device = 0, stream = 0;
    uint32_t grid[3] = {0, 0, 0};
    uint32_t block[3] = {0, 0, 0};
    uint32_t registers = 0;
    uint32_t shared_memory = 0;
    uint64_t bytes = 0;
    bool has_reported_occupancy = false;
    double reported_occupancy_pct = 0;  // kernels: "est. achieved occupancy %"
    bool operator==(const GpuArgs&) const = default;
  };
  GpuArgs gpu;
  std::vector<std::pair<std::string, std::string>> extra_args;  // kernels: unknown scalar args
  // Launch calls: the kernel the call launched, where the runtime records it (ROCm's
  // hipLaunchKernel and friends write args "kernel"; CUDA's runtime records do not).
  std::string launch_kernel;
  std::vector<std::pair<std::string, double>> metrics;          // profiler ranges
  // cpu_op: PackShapes of its "Input Dims", "Input type" and "Concrete Inputs" as compact
  // JSON arrays (concrete values filtered by KeepConcreteValue), "" when recorded without
  // shapes; and its PrehashedStrings::Hash.
  std::string shapes;
  size_t shapes_hash = 0;
  // pid/tid given as text with no trailing number (or as numbers that do not fit): the text,
  // in document order, for IdNumbering to turn into numbers.
  enum class IdField : uint8_t { kPid, kTid };
  std::vector<std::pair<IdField, std::string>> text_ids;
};

// Numbers for pids/tids given as text ("Spans"): 2^31 + order of first appearance, stable
// within a file. Kept apart from decoding so events decoded on several threads are
// numbered in document order, as one thread would.
class IdNumbering {
 public:
  void Resolve(KinetoEvent* e);

 private:
  std::unordered_map<std::string, uint64_t> ids_;
};

class KinetoEventDecoder {
 public:
  // Fills *out from one event object. Errors are simdjson's (type or syntax errors). Call
  // IdNumbering::Resolve on the event before using its pid/tid.
  simdjson::error_code Decode(simdjson::ondemand::object& obj, KinetoEvent* out);

 private:
  simdjson::error_code DecodeArgs(simdjson::ondemand::object& args, KinetoEvent* out);
  simdjson::error_code DecodeOpShapes(simdjson::ondemand::object& args, KinetoEvent* out);
  // pid/tid: a number, or text ending in one ("stream 7"); else the text goes to
  // KinetoEvent::text_ids (IdNumbering).
  simdjson::error_code ReadId(simdjson::ondemand::value v, KinetoEvent::IdField field,
                              KinetoEvent* e, uint64_t* out);

  // The arrays DecodeOpShapes read from the event being decoded, for its KinetoEvent::shapes.
  std::string input_dims_, input_types_, concrete_inputs_;
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_EVENT_H_
