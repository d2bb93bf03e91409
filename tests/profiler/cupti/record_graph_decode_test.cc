// Issue 25, done when: a graph-captured run of our decoder under `qprof record --metrics`
// gives the same kernel names, roles and per-kernel metrics as the eager run, on the fake
// GPU. The decoder's own launch list (CudaDecoder::LaunchList, made without a GPU) is
// written as a script that the stand-in program plays exactly as CudaDecoder::Step does:
// step 0 eager; with a graph, step 1 captured (its NVTX ranges pushed while capturing)
// and every step from 1 replayed under "decode/step N/graph". The real qprof, injection
// library and collector record both runs, trace pass and metrics pass, and the analysis
// of the two must agree kernel for kernel. Without the collector's capture paths the
// replayed kernels lose their per-layer context; without graph-aware ranges they lose
// their metrics (or, shifted, take their neighbours').
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "gtest/gtest.h"
#include "proto/trace_io.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/model_arch.h"
#include "runtime/plan.h"

namespace qprof {
namespace {

namespace fs = std::filesystem;

constexpr int kSteps = 4;

// The decode loop of the tiny model as the CUDA decoder runs it, one operation a line
// (fake_cuda_app's "script" scenario).
std::string DecodeScript(bool graph) {
  runtime::RunOptions o;
  o.model = "tiny";
  o.format = "nvfp4";
  o.moe_backend = "slot_gemv";
  o.batch = 2;
  o.steps = kSteps;
  o.context = 40;
  const auto arch = runtime::LoadModelArch(o.model);
  const auto choice = runtime::ChooseKernels(o);
  EXPECT_TRUE(arch.ok() && choice.ok());
  runtime::cuda::CudaDecoderOptions d;
  d.context_lengths = runtime::ContextLengths(o.context, o.batch);
  d.max_steps = o.steps;
  d.choice = *choice;
  std::string script = "push decode\n";
  for (int s = 0; s < kSteps; ++s) {
    script += absl::StrCat("push step ", s, "\n");
    // A replay runs the kernels captured at step 1, whatever step it is.
    auto list = runtime::cuda::CudaDecoder::LaunchList(*arch, kernels::Fp4Format::kNvfp4,
                                                       arch->n_layers, d, graph && s > 1 ? 1 : s,
                                                       132);
    EXPECT_TRUE(list.ok()) << list.status();
    std::string body, open;
    for (const runtime::StepKernels& c : *list) {
      runtime::SwitchRange(open, c.launch.range,
                           [&](const std::string& n) { body += "push " + n + "\n"; },
                           [&] { body += "pop\n"; });
      open = c.launch.range;
      for (const kernels::CudaLaunch* k : c.kernels) body += "kernel " + k->name + "\n";
    }
    runtime::SwitchRange(open, "", [](const std::string&) {}, [&] { body += "pop\n"; });
    if (!graph || s == 0) {
      script += body;
    } else {
      if (s == 1) script += "capture 7\n" + body + "instantiate 7\n";
      script += "push graph\nreplay 7\npop\n";
    }
    script += "pop\n";
  }
  return script + "pop\n";
}

struct Recorded {
  int exit_code = -1;
  std::string output;
  proto::Trace trace;
};

Recorded RecordScript(const std::string& name, const std::string& script) {
  Recorded r;
  const std::string dir = ::testing::TempDir() + "/record_graph_decode_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir + "/decode.script") << script;
  const std::string cmd = "cd '" + dir + "' && env LD_LIBRARY_PATH=" QPROF_FAKE_CUDA_DIR
                          " QPROF_FLUSH_MS=100 QPROF_BUFFER_MB=1 QPROF_METRIC_KERNELS=20000 "
                          QPROF_BIN " record --metrics --out out -- " QPROF_FAKE_APP
                          " script '" + dir + "/launched.log' '" + dir + "/decode.script' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), p) != nullptr) r.output += buf.data();
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  for (const auto& e : fs::directory_iterator(dir + "/out")) {
    const std::string f = e.path().string();
    if (f.size() > 7 && f.compare(f.size() - 7, 7, ".qtrace") == 0) {
      auto t = ReadTrace(f);
      EXPECT_TRUE(t.ok()) << t.status();
      if (t.ok()) r.trace = *t;
    }
  }
  return r;
}

using Row = std::tuple<uint64_t, std::string, std::string, std::string, double, double, double>;

// name -> (calls, class, role, launch context, tensor %, FMA %, DRAM %) of the analysis.
std::map<std::string, Row> Rows(const proto::Trace& trace) {
  std::map<std::string, Row> out;
  auto profile = Analyze({trace}, AnalyzeOptions{});
  EXPECT_TRUE(profile.ok()) << profile.status();
  if (!profile.ok()) return out;
  for (const proto::KernelRow& k : profile->kernels()) {
    out[k.name()] = Row{k.calls(), k.class_(), k.role(), k.launch_context(),
                        k.has_tensor_pipe_pct() ? k.tensor_pipe_pct() : -1,
                        k.has_fma_pipe_pct() ? k.fma_pipe_pct() : -1,
                        k.has_dram_throughput_pct() ? k.dram_throughput_pct() : -1};
  }
  return out;
}

TEST(RecordGraphDecodeTest, GraphCapturedDecodeMatchesTheEagerRunKernelForKernel) {
  const Recorded eager = RecordScript("eager", DecodeScript(false));
  const Recorded graph = RecordScript("graph", DecodeScript(true));
  ASSERT_EQ(eager.exit_code, 0) << eager.output;
  ASSERT_EQ(graph.exit_code, 0) << graph.output;
  for (const Recorded* r : {&eager, &graph}) {
    const proto::CollectorStats& s = r->trace.header().collector();
    ASSERT_TRUE(s.metrics_available()) << s.DebugString() << r->output;
    EXPECT_EQ(s.metrics_kernels_unmatched(), 0u) << s.DebugString();
  }
  int replayed = 0, with_capture_path = 0;
  for (const proto::Activity& a : graph.trace.activities()) {
    if (a.graph_id() == 0) continue;
    ++replayed;
    with_capture_path += a.args().count("graph_launch_nvtx_path");
    EXPECT_TRUE(a.has_metrics()) << a.name();
  }
  EXPECT_GT(replayed, 0);
  EXPECT_EQ(with_capture_path, replayed);
  const std::map<std::string, Row> e = Rows(eager.trace), g = Rows(graph.trace);
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e.size(), g.size());
  for (const auto& [name, row] : e) {
    auto it = g.find(name);
    ASSERT_NE(it, g.end()) << name << " is not in the graph run";
    EXPECT_EQ(std::get<0>(row), std::get<0>(it->second)) << name << ": calls";
    EXPECT_EQ(std::get<1>(row), std::get<1>(it->second)) << name << ": class";
    EXPECT_EQ(std::get<2>(row), std::get<2>(it->second)) << name << ": role";
    EXPECT_EQ(std::get<3>(row), std::get<3>(it->second)) << name << ": launch context";
    EXPECT_GE(std::get<4>(row), 0) << name << ": tensor-pipe % measured";
    EXPECT_DOUBLE_EQ(std::get<4>(row), std::get<4>(it->second)) << name << ": tensor-pipe %";
    EXPECT_DOUBLE_EQ(std::get<5>(row), std::get<5>(it->second)) << name << ": FMA-pipe %";
    EXPECT_DOUBLE_EQ(std::get<6>(row), std::get<6>(it->second)) << name << ": DRAM %";
  }
}

}  // namespace
}  // namespace qprof
