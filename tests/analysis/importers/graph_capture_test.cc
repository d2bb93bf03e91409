// Graph replays joined to their capture trace (analyze --graph-capture), on synthetic
// capture + replay pairs shaped like PyTorch profiler traces on both vendors:
//  - ROCm: hipLaunchKernel / hipExtModuleLaunchKernel records name their kernel in args
//    "kernel" (as in SGLang's and vLLM's MI300X capture traces), so replays pair by name;
//  - CUDA: cudaLaunchKernel records do not, so replays pair by launch order and count.
// Each file holds two captures of different sizes (two batch sizes); the replays include one
// with a kernel its capture lacks, one on two streams (CUDA: paired per stream in launch
// order), and (CUDA) one no capture fits.
// The test writes the events from a plan (which kernel each captured launch is and under
// which framework op; which captured launch each replay kernel is), and computes what it
// expects from that plan alone: each kernel's role is the one its capture-time op names
// (a small table here), or "other" for kernels no capture launch pairs with.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/aggregate/partial.h"
#include "analysis/analyze.h"
#include "analysis/importers/common/graph_capture.h"
#include "analysis/importers/import.h"
#include "analysis/ingest.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof {
namespace {

using importers::testing::WriteTemp;

// The framework op a captured launch ran under, and the role it gives (context_rules.h:
// moe_forward and fused_moe name the experts, topk_softmax the router, unified_attention
// attention; aten::mm is a plain GEMM).
struct Op {
  const char* name;
  const char* role;
};
constexpr Op kMm{"aten::mm", "gemm.dense"};
constexpr Op kMoe{"vllm::moe_forward", "moe.experts"};
constexpr Op kRouter{"_moe_C::topk_softmax", "moe.router"};
constexpr Op kAttn{"vllm::unified_attention_with_output", "attn.dense"};

struct CapturedKernel {
  std::string name;  // neutral names: no name rule gives them a role
  Op op;
};
struct Capture {
  int batch;
  std::vector<CapturedKernel> kernels;
};
struct ReplayKernel {
  std::string name;
  uint64_t stream;
  int capture_pos;  // the captured launch it is (-1: none)
};
struct Replay {
  int capture;  // the capture it replays (-1: none)
  std::vector<ReplayKernel> kernels;
};

struct Json {
  std::vector<std::string> events;
  void Add(const std::string& cat, const std::string& name, int pid, int tid, double ts, double dur,
           const std::string& args = "") {
    events.push_back(absl::StrCat("{\"ph\": \"X\", \"cat\": \"", cat, "\", \"name\": \"", name,
                                  "\", \"pid\": ", pid, ", \"tid\": ", tid, ", \"ts\": ", ts,
                                  ", \"dur\": ", dur, args.empty() ? "" : ", \"args\": {" + args + "}",
                                  "}"));
  }
  std::string Doc(bool rocm) const {
    const std::string props =
        rocm ? R"([{"id": 0, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992, "computeMajor": 9, "computeMinor": 4, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 64, "sharedMemPerBlock": 65536, "numSms": 304, "maxSharedMemoryPerMultiProcessor": 65536}])"
             : R"([{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045477376, "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132, "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472}])";
    return absl::StrCat("{\"schemaVersion\": 1, \"deviceProperties\": ", props,
                        ", \"traceEvents\": [\n", absl::StrJoin(events, ",\n"), "\n]}");
  }
};

// The capture trace: per capture, an annotation "capture_<bs>_DECODE" around
// Stream{Begin,End}Capture; each launch inside its framework op; capture-info queries in
// between (not launches); a kernel launched and run before the first capture.
std::string CaptureTrace(const std::vector<Capture>& captures, bool rocm) {
  const std::string api = rocm ? "hip" : "cuda";
  Json j;
  int corr = 100;
  double t = 10;
  j.Add("cpu_op", "aten::fill_", 7, 7, t, 6);
  j.Add("cuda_runtime", rocm ? "hipLaunchKernel" : "cudaLaunchKernel", 7, 7, t + 1, 2,
        absl::StrCat(rocm ? "\"kernel\": \"warmup_fill\", " : "", "\"correlation\": ", ++corr));
  j.Add("kernel", "warmup_fill", 0, 1, t + 4, 2,
        absl::StrCat("\"device\": 0, \"stream\": 1, \"correlation\": ", corr));
  t = 100;
  for (const Capture& c : captures) {
    const double len = 20.0 * static_cast<double>(c.kernels.size()) + 20;
    j.Add("user_annotation", absl::StrCat("capture_", c.batch, "_DECODE"), 7, 7, t, len);
    j.Add("cuda_runtime", api + "StreamBeginCapture", 7, 7, t + 1, 2,
          absl::StrCat("\"correlation\": ", ++corr));
    double at = t + 10;
    for (size_t i = 0; i < c.kernels.size(); ++i) {
      j.Add("cpu_op", c.kernels[i].op.name, 7, 7, at, 12);
      j.Add("cuda_runtime", api + "StreamGetCaptureInfo", 7, 7, at + 1, 0.5,
            absl::StrCat("\"correlation\": ", ++corr));
      // Every other ROCm launch through the module API, as Triton and aiter kernels go.
      const std::string launch =
          rocm ? (i % 2 ? "hipExtModuleLaunchKernel" : "hipLaunchKernel") : "cudaLaunchKernel";
      j.Add("cuda_runtime", launch, 7, 7, at + 3, 4,
            absl::StrCat(rocm ? "\"kernel\": \"" + c.kernels[i].name + "\", " : "",
                         "\"correlation\": ", ++corr, ", \"grid\": [64, 1, 1], \"block\": [256, 1, 1]"));
      at += 20;
    }
    j.Add("cuda_runtime", api + "StreamEndCapture", 7, 7, t + len - 5, 2,
          absl::StrCat("\"correlation\": ", ++corr));
    j.Add("cuda_runtime", rocm ? "hipGraphInstantiateWithFlags" : "cudaGraphInstantiateWithFlags",
          7, 7, t + len - 2, 1, absl::StrCat("\"correlation\": ", ++corr));
    t += len + 50;
  }
  return j.Doc(rocm);
}

// The replay trace: one ProfilerStep per replay, a graph launch inside the replay loop's
// Python frame, its kernels on their streams with the launch's correlation id.
std::string ReplayTrace(const std::vector<Replay>& replays, bool rocm) {
  Json j;
  double t = 1000;
  int corr = 5000;
  for (size_t r = 0; r < replays.size(); ++r) {
    const double len = 20.0 * static_cast<double>(replays[r].kernels.size()) + 40;
    j.Add("user_annotation", absl::StrCat("ProfilerStep#", r + 1), 7, 7, t, len);
    j.Add("python_function", "sglang/srt/model_executor/cuda_graph_runner.py(812): replay", 7, 7,
          t + 1, 30);
    j.Add("cuda_runtime", rocm ? "hipGraphLaunch" : "cudaGraphLaunch", 7, 7, t + 2, 20,
          absl::StrCat("\"correlation\": ", ++corr));
    std::map<uint64_t, double> stream_t;
    double at = t + 10;
    for (const ReplayKernel& k : replays[r].kernels) {
      double& st = stream_t.try_emplace(k.stream, at).first->second;
      st = std::max(st, at);
      j.Add("kernel", k.name, 0, static_cast<int>(k.stream), st, 8,
            absl::StrCat("\"device\": 0, \"stream\": ", k.stream, ", \"correlation\": ", corr,
                         rocm ? ", \"kind\": \"Dispatch Kernel\"" : ", \"registers per thread\": 64",
                         ", \"grid\": [64, 1, 1], \"block\": [256, 1, 1]"));
      st += 10;
      at += 5;
    }
    t += len + 100;
  }
  return j.Doc(rocm);
}

// What the plan says: per (kernel name, role) the launches, and the pairing counts.
struct Expected {
  std::map<std::pair<std::string, std::string>, uint64_t> calls;
  uint64_t matched = 0, unmatched = 0;
  std::map<int, std::pair<uint64_t, uint64_t>> per_capture;  // replays, matched kernels
};

Expected FromPlan(const std::vector<Capture>& captures, const std::vector<Replay>& replays) {
  Expected e;
  for (const Replay& r : replays) {
    uint64_t m = 0;
    for (const ReplayKernel& k : r.kernels) {
      const bool paired = r.capture >= 0 && k.capture_pos >= 0;
      const std::string role =
          paired ? captures[static_cast<size_t>(r.capture)].kernels[static_cast<size_t>(k.capture_pos)].op.role
                 : "other";
      ++e.calls[{k.name, role}];
      m += paired;
    }
    e.matched += m;
    e.unmatched += r.kernels.size() - m;
    if (r.capture >= 0) {
      ++e.per_capture[r.capture].first;
      e.per_capture[r.capture].second += m;
    }
  }
  return e;
}

std::map<std::pair<std::string, std::string>, uint64_t> Rows(const proto::Profile& p) {
  std::map<std::pair<std::string, std::string>, uint64_t> out;
  for (const auto& k : p.kernels()) out[{k.name(), k.role()}] += k.calls();
  return out;
}

importers::ImportOptions Quiet() {
  importers::ImportOptions o;
  o.progress = false;
  o.threads = 1;
  return o;
}

struct Analysed {
  proto::Profile profile;
  proto::GraphCaptureJoin join;
};

// The replay analysed with the captures, streamed (as `qprof analyze` does); also checks
// that a partial of the state merges into the same profile.
Analysed Analyze(const std::string& replay, const std::vector<std::string>& captures) {
  Analysed out;
  importers::ImportOptions o = Quiet();
  if (!captures.empty()) {
    auto set = importers::ReadGraphCaptures(captures, o);
    EXPECT_TRUE(set.ok()) << set.status();
    if (!set.ok()) return out;
    o.graph_captures = *set;
  }
  auto state = IngestFile(replay, o);
  EXPECT_TRUE(state.ok()) << state.status();
  if (!state.ok()) return out;
  auto profile = AnalyzeState(*state, AnalyzeOptions{});
  EXPECT_TRUE(profile.ok()) << profile.status();
  auto back = aggregate::FromPartial(aggregate::ToPartial(*state), "partial");
  EXPECT_TRUE(back.ok());
  auto merged = AnalyzeState(*back, AnalyzeOptions{});
  EXPECT_TRUE(merged.ok());
  if (profile.ok() && merged.ok()) {
    EXPECT_EQ(profile->SerializeAsString(), merged->SerializeAsString())
        << "a partial of the state must analyse the same";
  }
  out.profile = *profile;
  out.join = state->traces[0].header.launch_context_stats().graph_capture();
  return out;
}

bool HasWarning(const proto::Profile& p, const std::string& code) {
  for (const auto& w : p.warnings()) {
    if (w.code() == code) return true;
  }
  return false;
}

TEST(GraphCapture, RocmPairsByKernelNameAndChoosesTheCaptureOfEachBatchSize) {
  const std::vector<Capture> captures = {
      {1, {{"kern_0", kMm}, {"kern_1", kMoe}, {"kern_2", kAttn}}},
      {8, {{"kern_0", kMm}, {"kern_3", kRouter}, {"kern_1", kMoe}, {"kern_2", kAttn}}},
  };
  const std::vector<Replay> replays = {
      {0, {{"kern_0", 3, 0}, {"kern_1", 3, 1}, {"kern_2", 3, 2}}},
      {1, {{"kern_0", 3, 0}, {"kern_3", 3, 1}, {"kern_1", 3, 2}, {"kern_2", 3, 3}}},
      {0, {{"kern_0", 3, 0}, {"kern_1", 3, 1}, {"kern_2", 3, 2}}},
      // kern_9 is a kernel the capture lacks: it keeps the graph launch's context.
      {1, {{"kern_0", 3, 0}, {"kern_3", 3, 1}, {"kern_9", 3, -1}, {"kern_1", 3, 2}, {"kern_2", 3, 3}}},
      // The router on a second stream, overlapping the GEMM.
      {1, {{"kern_0", 3, 0}, {"kern_3", 4, 1}, {"kern_1", 3, 2}, {"kern_2", 3, 3}}},
  };
  const std::string cap = WriteTemp("rocm_capture.json", CaptureTrace(captures, true));
  const std::string rep = WriteTemp("rocm_replay.json", ReplayTrace(replays, true));
  const Expected want = FromPlan(captures, replays);

  const Analysed with = Analyze(rep, {cap});
  EXPECT_EQ(Rows(with.profile), want.calls);
  EXPECT_EQ(with.join.replays(), replays.size());
  EXPECT_EQ(with.join.matched(), want.matched);
  EXPECT_EQ(with.join.unmatched(), want.unmatched);
  EXPECT_EQ(with.join.captures(), captures.size());
  ASSERT_EQ(with.join.uses_size(), 2);
  for (int c = 0; c < 2; ++c) {
    const auto& u = with.join.uses(c);
    EXPECT_EQ(u.capture(), absl::StrCat("rocm_capture.json #", c + 1, " (capture_",
                                        captures[c].batch, "_DECODE)"));
    EXPECT_EQ(u.method(), "kernel names");
    EXPECT_EQ(u.replays(), want.per_capture.at(c).first);
    EXPECT_EQ(u.matched(), want.per_capture.at(c).second);
  }
  EXPECT_EQ(with.profile.launch_summary().graph_capture_matched(), want.matched);
  EXPECT_EQ(with.profile.launch_summary().graph_capture_unmatched(), want.unmatched);
  ASSERT_EQ(with.profile.launch_summary().graph_capture_size(), 1);
  EXPECT_NE(with.profile.launch_summary().graph_capture(0).find(
                absl::StrCat(want.matched, " of ", want.matched + want.unmatched)),
            std::string::npos);
  EXPECT_TRUE(HasWarning(with.profile, "graph_capture_unmatched"));

  // Without the capture every kernel has the replay loop's context: no role at all.
  const Analysed without = Analyze(rep, {});
  std::map<std::pair<std::string, std::string>, uint64_t> all_other;
  for (const auto& [key, n] : want.calls) all_other[{key.first, "other"}] += n;
  EXPECT_EQ(Rows(without.profile), all_other);
  EXPECT_TRUE(HasWarning(without.profile, "graph_replays"));
}

TEST(GraphCapture, CudaPairsByOrderAndCountOnOneStream) {
  const std::vector<Capture> captures = {
      {1, {{"kern_0", kMm}, {"kern_1", kMoe}, {"kern_2", kAttn}}},
      {8, {{"kern_0", kMm}, {"kern_3", kRouter}, {"kern_1", kMoe}, {"kern_2", kAttn}}},
  };
  const std::vector<Replay> replays = {
      {1, {{"kern_0", 7, 0}, {"kern_3", 7, 1}, {"kern_1", 7, 2}, {"kern_2", 7, 3}}},
      {0, {{"kern_0", 7, 0}, {"kern_1", 7, 1}, {"kern_2", 7, 2}}},
      // Five kernels: no capture has five launches, and without names nothing tells which
      // kernel is the extra one: the whole replay keeps the graph launch's context.
      {-1, {{"kern_0", 7, -1}, {"kern_3", 7, -1}, {"kern_9", 7, -1}, {"kern_1", 7, -1}, {"kern_2", 7, -1}}},
      // Two streams and no names: each stream pairs in launch order, its share of the
      // captured launches read from the kernels' start times.
      {1, {{"kern_0", 7, 0}, {"kern_3", 8, 1}, {"kern_1", 7, 2}, {"kern_2", 7, 3}}},
  };
  const std::string cap = WriteTemp("cuda_capture.json", CaptureTrace(captures, false));
  const std::string rep = WriteTemp("cuda_replay.json", ReplayTrace(replays, false));
  const Expected want = FromPlan(captures, replays);

  const Analysed with = Analyze(rep, {cap});
  EXPECT_EQ(Rows(with.profile), want.calls);
  EXPECT_EQ(with.join.matched(), want.matched);
  EXPECT_EQ(with.join.unmatched(), want.unmatched);
  EXPECT_EQ(with.join.replays_without_capture(), 1u);
  ASSERT_EQ(with.join.uses_size(), 2);
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(with.join.uses(c).method(), "launch order and count");
    EXPECT_EQ(with.join.uses(c).replays(), want.per_capture.at(c).first);
    EXPECT_EQ(with.join.uses(c).matched(), want.per_capture.at(c).second);
  }
  // The warning says why, in words.
  std::string notes = absl::StrJoin(with.join.notes(), "\n");
  EXPECT_NE(notes.find("no capture without kernel names has the replay's 5 kernels"), std::string::npos)
      << notes;
}

TEST(GraphCapture, CapturesFromSeveralFilesAndErrors) {
  // One capture per file (SGLang writes bs_<N>_rank0.json.gz per batch size).
  const std::string a = WriteTemp("bs_1.json", CaptureTrace({{1, {{"kern_0", kMm}, {"kern_1", kMoe}}}}, true));
  const std::string b = WriteTemp(
      "bs_2.json", CaptureTrace({{2, {{"kern_0", kMm}, {"kern_3", kRouter}, {"kern_1", kMoe}}}}, true));
  auto set = importers::ReadGraphCaptures({a, b}, Quiet());
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ((*set)->captures.size(), 2u);
  EXPECT_EQ((*set)->captures[0].label, "bs_1.json #1 (capture_1_DECODE)");
  EXPECT_EQ((*set)->captures[1].label, "bs_2.json #1 (capture_2_DECODE)");
  EXPECT_TRUE((*set)->captures[1].named);
  EXPECT_EQ((*set)->captures[1].kernels.size(), 3u);  // the warm-up launch is outside

  // A trace with no capture in it is refused, naming the file.
  const std::string plain = WriteTemp("plain.json", ReplayTrace({{-1, {{"kern_0", 1, -1}}}}, true));
  auto none = importers::ReadGraphCaptures({plain}, Quiet());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(std::string(none.status().message()).find("plain.json"), std::string::npos);
  // Captures join Kineto replays only; an nsys export has its own graph-node join.
  importers::ImportOptions o = Quiet();
  o.graph_captures = *set;
  const std::string not_kineto = WriteTemp("not_a_trace.qtrace", "QPROFTR1");
  auto refused = IngestFile(not_kineto, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message()).find("not_a_trace.qtrace"), std::string::npos);
}

}  // namespace
}  // namespace qprof
