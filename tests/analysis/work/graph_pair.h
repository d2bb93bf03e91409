// Synthetic CUDA-graph capture/replay pairs for the work tests, shaped like PyTorch profiler
// traces: a capture trace where each op call (cpu_op with "Input Dims", "Input type",
// "Concrete Inputs") launches its kernels inside cudaStreamBeginCapture ...
// cudaStreamEndCapture under a "capture_<bs>_DECODE" annotation, and a replay trace where
// each step (a "step[DECODE bs=<bs>]" range, optional) launches the graph with
// cudaGraphLaunch and its kernels run on their streams with the launch's correlation id.
// CUDA's launch records name no kernel (the pairing goes by launch order and count); with
// `rocm` they do, as hipLaunchKernel's args "kernel" does, and carry the launch geometry.
// The tests compute what they expect from the same plan.
#ifndef QPROF_TESTS_ANALYSIS_WORK_GRAPH_PAIR_H_
#define QPROF_TESTS_ANALYSIS_WORK_GRAPH_PAIR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/profile.pb.h"
#include "proto/trace.pb.h"

namespace qprof::testing {

struct PlanKernel {
  std::string name;
  uint64_t stream = 7;
  uint32_t grid = 64;       // grid.x of the launch (block is 256): the launch geometry
};

// One op call at capture: its shapes, as Kineto writes them, and the kernels it launches.
struct PlanOp {
  std::string op;           // "aten::mm"
  std::string dims;         // "[[32,4096],[4096,6144]]"
  std::string types;        // "[\"c10::BFloat16\",\"c10::BFloat16\"]"
  std::string concrete;     // "[\"\",\"\"]" or "" (none)
  std::vector<PlanKernel> kernels;
};

struct PlanCapture {
  uint32_t batch = 32;
  std::vector<PlanOp> ops;
  bool names_batch = true;  // annotated "capture_<bs>_DECODE"; else "graph_capture"
};

// The capture trace of `captures`, in order, one thread.
std::string CaptureTraceJson(const std::vector<PlanCapture>& captures, bool rocm = false);

// One replay: the capture it replays (its kernels run in call order, each on its stream,
// one after the other on that stream, with start times that keep the call order across
// streams) and whether a step range names its batch.
struct PlanReplay {
  size_t capture = 0;
  bool step_range = true;
};

// The replay trace: `replays` in order, each a step with one graph launch.
std::string ReplayTraceJson(const std::vector<PlanCapture>& captures,
                            const std::vector<PlanReplay>& replays, bool rocm = false);

// A replay analysed as `qprof analyze` does: with the capture trace when `capture_json` is not
// empty, with the Hugging Face config `config_json` as --model-shape when not empty (its
// layer model too, when the config describes its layers: graph replays without a capture
// get modelled op calls; `batch` and `tp` as --batch and --tp). Also checks that
// a partial of the state analyses the same. `tag` names the temporary files.
struct Analysed {
  proto::Profile profile;
  proto::GraphCaptureJoin join;
};
Analysed AnalyseReplay(const std::string& tag, const std::string& replay_json,
                       const std::string& capture_json, const std::string& config_json,
                       uint32_t batch = 0, uint32_t tp = 0);

}  // namespace qprof::testing

#endif  // QPROF_TESTS_ANALYSIS_WORK_GRAPH_PAIR_H_
