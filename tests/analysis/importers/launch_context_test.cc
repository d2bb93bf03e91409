// Launch contexts from hand-made Kineto and nsys traces: nested operators and Python frames,
// a missing launch record, a kernel without a correlation id, kernels launched from another
// thread, CUDA-graph launches (every node gets the graph launch's context), GPU-side
// annotations standing in for a missing CPU side, the plumbing frames left out, and NVTX
// stacks with torch emit_nvtx names.
#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/importers/common/launch_context.h"
#include "analysis/importers/import.h"
#include "analysis/importers/kineto/kineto_importer.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/sqlite_fixture.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

ImportOptions Quiet() {
  ImportOptions o;
  o.progress = false;
  return o;
}

// The frames of an activity's stack, from the trace header's tables.
std::vector<proto::LaunchFrame> Frames(const proto::Trace& t, const proto::Activity& a) {
  std::vector<proto::LaunchFrame> out;
  const auto& st = t.header().launch_context_stats();
  const uint32_t id = a.launch_context().stack();
  if (id == 0) return out;
  EXPECT_LT(id, static_cast<uint32_t>(st.stacks_size()));
  for (uint32_t f : st.stacks(static_cast<int>(id)).frames()) out.push_back(st.frames(static_cast<int>(f)));
  return out;
}

std::vector<std::string> Names(const proto::Trace& t, const proto::Activity& a) {
  std::vector<std::string> out;
  for (const auto& f : Frames(t, a)) out.push_back(f.name());
  return out;
}

const proto::Activity& ByName(const proto::Trace& t, const std::string& name) {
  for (const auto& a : t.activities()) {
    if (a.name() == name) return a;
  }
  static proto::Activity none;
  ADD_FAILURE() << "no activity " << name;
  return none;
}

// Thread 11 runs nested ops and launches k_nested, k_graph_a/b (one graph launch) and
// k_missing (its launch record is absent); thread 12 launches k_other inside its own op;
// k_nocorr has no correlation id; k_gpu_only has no CPU side but a GPU annotation.
constexpr char kTrace[] = R"J({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 11, "ts": 0, "dur": 1000},
  {"ph": "X", "cat": "python_function", "name": "model.py(10): forward", "pid": 1, "tid": 11, "ts": 5, "dur": 900},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: FusedMoE_0", "pid": 1, "tid": 11, "ts": 10, "dur": 300},
  {"ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1750): _call_impl", "pid": 1, "tid": 11, "ts": 11, "dur": 298},
  {"ph": "X", "cat": "cpu_op", "name": "vllm::moe_forward", "pid": 1, "tid": 11, "ts": 20, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::bmm", "pid": 1, "tid": 11, "ts": 30, "dur": 20},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 11, "ts": 35, "dur": 2, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 11, "ts": 130, "dur": 10},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 11, "ts": 400, "dur": 5, "args": {"correlation": 2}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 12, "ts": 50, "dur": 30},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 12, "ts": 60, "dur": 2, "args": {"correlation": 3}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "decode_step", "pid": 0, "tid": 7, "ts": 590, "dur": 100, "args": {"device": 0, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "k_nested", "pid": 0, "tid": 7, "ts": 40, "dur": 10, "args": {"correlation": 1, "device": 0, "stream": 7, "grid": [1, 1, 1], "block": [32, 1, 1]}},
  {"ph": "X", "cat": "kernel", "name": "k_other", "pid": 0, "tid": 8, "ts": 70, "dur": 10, "args": {"correlation": 3, "device": 0, "stream": 8}},
  {"ph": "X", "cat": "kernel", "name": "k_graph_a", "pid": 0, "tid": 7, "ts": 410, "dur": 10, "args": {"correlation": 2, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "k_graph_b", "pid": 0, "tid": 7, "ts": 425, "dur": 10, "args": {"correlation": 2, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "k_missing", "pid": 0, "tid": 7, "ts": 500, "dur": 10, "args": {"correlation": 99, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "k_nocorr", "pid": 0, "tid": 7, "ts": 520, "dur": 10, "args": {"device": 0, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "k_gpu_only", "pid": 0, "tid": 7, "ts": 600, "dur": 10, "args": {"correlation": 98, "device": 0, "stream": 7}}
]})J";

TEST(LaunchContextKineto, NestedOtherThreadGraphMissing) {
  auto t = ImportKinetoJsonBytes(kTrace, "ctx.json", Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  // Nested: outermost first; the module-call plumbing frame is left out.
  EXPECT_EQ(Names(*t, ByName(*t, "k_nested")),
            (std::vector<std::string>{"ProfilerStep#3", "model.py(10): forward",
                                      "nn.Module: FusedMoE_0", "vllm::moe_forward", "aten::bmm"}));
  const auto& nested = ByName(*t, "k_nested").launch_context();
  const auto nested_frames = Frames(*t, ByName(*t, "k_nested"));
  EXPECT_EQ(nested_frames[3].kind(), "cpu_op");
  EXPECT_EQ(nested_frames[2].kind(), "python_function");
  EXPECT_EQ(nested_frames[0].kind(), "user_annotation");
  EXPECT_EQ(nested.launch_api(), "cudaLaunchKernel");
  EXPECT_FALSE(nested.graph_launch());
  // Another thread: its own stack only.
  EXPECT_EQ(Names(*t, ByName(*t, "k_other")), std::vector<std::string>{"aten::mm"});
  // Both nodes of one graph launch: the graph launch's stack (it is outside aten::add).
  for (const char* n : {"k_graph_a", "k_graph_b"}) {
    const auto& c = ByName(*t, n).launch_context();
    EXPECT_TRUE(c.graph_launch()) << n;
    EXPECT_EQ(c.launch_api(), "cudaGraphLaunch");
    EXPECT_EQ(Names(*t, ByName(*t, n)),
              (std::vector<std::string>{"ProfilerStep#3", "model.py(10): forward"}));
  }
  // One graph launch, one stack stored once.
  EXPECT_EQ(ByName(*t, "k_graph_a").launch_context().stack(),
            ByName(*t, "k_graph_b").launch_context().stack());
  // No launch record, no correlation: no context.
  EXPECT_EQ(ByName(*t, "k_missing").launch_context().stack(), 0u);
  EXPECT_EQ(ByName(*t, "k_nocorr").launch_context().stack(), 0u);
  // No CPU side but inside a GPU annotation on its stream.
  const auto g = Frames(*t, ByName(*t, "k_gpu_only"));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].name(), "decode_step");
  EXPECT_EQ(g[0].kind(), "gpu_user_annotation");
  const auto& s = t->header().launch_context_stats();
  EXPECT_EQ(s.kernels(), 7u);
  EXPECT_EQ(s.no_launch_record(), 2u);  // k_missing, k_gpu_only
  EXPECT_EQ(s.no_correlation(), 1u);
  EXPECT_EQ(s.graph_launches(), 2u);
  EXPECT_EQ(s.with_context(), 5u);  // nested, other, graph a and b, gpu-only
  EXPECT_FALSE(s.method().empty());
}

// A serving engine's step annotation stays on the stack however deep the Python frames
// under it are (the attention work rules read the step's sequence lengths from it); other
// outer frames, ProfilerStep#N included, are dropped as before.
TEST(LaunchContextBuilder, KeepsTheStepAnnotationPastTheFrameLimit) {
  LaunchContextBuilder b;
  ThreadKey th{1, 2};
  b.AddFrame(th, 0, 2000, "ProfilerStep#7", "user_annotation");
  b.AddFrame(th, 1, 1999,
             "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)",
             "user_annotation");
  const int depth = LaunchContextBuilder::kMaxFrames + 5;
  for (int i = 0; i < depth; ++i) b.AddFrame(th, 10 + i, 1000 - i, absl::StrCat("f", i), "python_function");
  proto::Trace t;
  t.add_activities()->set_kind(proto::ACTIVITY_KIND_KERNEL);
  b.AddLaunch(th, 250, 0, "cuLaunchKernel");
  b.Resolve(&t, t.mutable_header()->mutable_launch_context_stats());
  const auto c = Frames(t, t.activities(0));
  ASSERT_EQ(c.size(), static_cast<size_t>(LaunchContextBuilder::kMaxFrames) + 1);
  EXPECT_EQ(c[0].name().rfind("execute_32_context_0", 0), 0u);
  EXPECT_EQ(c[0].kind(), "user_annotation");
  EXPECT_EQ(c[1].name(), "f5");
  const auto& st = t.header().launch_context_stats();
  // 7 outer frames past the limit (ProfilerStep#7, f0..f4 and the annotation), 1 kept.
  EXPECT_EQ(st.frames_dropped(), 6u);
}

// A graph capture's stacks copied into the replay's tables keep each op call's shapes:
// two aten::mm calls of different shapes stay two frames.
TEST(LaunchStackTable, CopiedStacksKeepEachCallsShapes) {
  proto::LaunchContextStats capture;
  LaunchStackTable from(&capture);
  const uint32_t qkv = from.Frame("aten::mm", "cpu_op", PackShapes("[[32,4096],[4096,6144]]", "", ""));
  const uint32_t down = from.Frame("aten::mm", "cpu_op", PackShapes("[[32,12288],[12288,4096]]", "", ""));
  const uint32_t s1 = from.Stack({qkv}, 0), s2 = from.Stack({down}, 0);
  ASSERT_NE(s1, s2);
  proto::LaunchContextStats replay;
  LaunchStackTable to(&replay);
  const uint32_t c1 = to.CopyStack(capture, s1), c2 = to.CopyStack(capture, s2);
  ASSERT_NE(c1, c2);
  auto dims = [&](uint32_t stack) {
    return replay.frames(static_cast<int>(replay.stacks(static_cast<int>(stack)).frames(0))).input_dims();
  };
  EXPECT_EQ(dims(c1), "[[32,4096],[4096,6144]]");
  EXPECT_EQ(dims(c2), "[[32,12288],[12288,4096]]");
  EXPECT_EQ(to.CopyStack(capture, s1), c1);  // copied once
}

TEST(LaunchContextBuilder, KeepsTheInnermostFramesAndCountsTheRest) {
  LaunchContextBuilder b;
  ThreadKey th{1, 2};
  const int depth = LaunchContextBuilder::kMaxFrames + 5;
  for (int i = 0; i < depth; ++i) b.AddFrame(th, i, 1000 - i, absl::StrCat("f", i), "cpu_op");
  b.AddFrame(th, 200, 300, "<built-in method matmul of type object at 0x1>", "python_function");
  proto::Trace t;
  t.add_activities()->set_kind(proto::ACTIVITY_KIND_KERNEL);
  b.AddLaunch(th, 250, 0, "cuLaunchKernel");
  b.Resolve(&t, t.mutable_header()->mutable_launch_context_stats());
  const auto c = Frames(t, t.activities(0));
  ASSERT_EQ(c.size(), static_cast<size_t>(LaunchContextBuilder::kMaxFrames));
  EXPECT_EQ(c[0].name(), "f5");
  EXPECT_EQ(c.back().name(), absl::StrCat("f", depth - 1));
  const auto& st = t.header().launch_context_stats();
  EXPECT_EQ(st.stacks(static_cast<int>(t.activities(0).launch_context().stack())).frames_dropped(), 5u);
  EXPECT_EQ(st.frames_dropped(), 5u);
  // A launch exactly at a frame's end is outside it; at its start, inside.
  LaunchContextBuilder e;
  e.AddFrame(th, 10, 20, "op", "cpu_op");
  proto::Trace t2;
  t2.add_activities()->set_kind(proto::ACTIVITY_KIND_KERNEL);
  t2.add_activities()->set_kind(proto::ACTIVITY_KIND_KERNEL);
  e.AddLaunch(th, 20, 0, "x");
  e.AddLaunch(th, 10, 1, "x");
  e.Resolve(&t2, t2.mutable_header()->mutable_launch_context_stats());
  EXPECT_EQ(t2.activities(0).launch_context().stack(), 0u);
  EXPECT_EQ(Frames(t2, t2.activities(1)).size(), 1u);
}

// Launches answered one at a time, in any order, from the checkpointed frame lists: the
// stack is every frame with start <= t < end, outermost first (by start, longer first), also
// for frames that cross and for threads with more frames than a checkpoint spans. Checked
// against the definition on random frames.
TEST(LaunchContextBuilder, AnyOrderQueriesMatchTheDefinition) {
  uint64_t seed = 12345;
  auto next = [&seed](int64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((seed >> 33) % static_cast<uint64_t>(n));
  };
  struct F { int64_t start, end; std::string name; };
  std::vector<F> frames;
  LaunchContextBuilder b;
  const ThreadKey th{1, 7};
  for (int i = 0; i < 500; ++i) {
    const int64_t start = next(10000);
    const int64_t end = next(10) == 0 ? LaunchContextBuilder::kOpenEnd : start + next(400);
    frames.push_back({start, end, absl::StrCat("f", i)});
    b.AddFrame(th, start, end, frames.back().name, "cpu_op");
  }
  b.Build();
  proto::LaunchContextStats stats;
  LaunchStackTable table(&stats);
  for (int q = 0; q < 2000; ++q) {
    const int64_t t = next(10500);
    std::vector<F> open;
    for (const F& f : frames) {
      if (f.start <= t && t < f.end) open.push_back(f);
    }
    std::stable_sort(open.begin(), open.end(), [](const F& x, const F& y) {
      return x.start != y.start ? x.start < y.start : x.end > y.end;
    });
    const size_t dropped =
        open.size() > static_cast<size_t>(LaunchContextBuilder::kMaxFrames)
            ? open.size() - LaunchContextBuilder::kMaxFrames : 0;
    proto::LaunchContext ctx;
    b.ContextAt(th, t, "cudaLaunchKernel", true, &table, &ctx);
    std::vector<std::string> got;
    if (ctx.stack() != 0) {
      const proto::LaunchStack& st = stats.stacks(static_cast<int>(ctx.stack()));
      EXPECT_EQ(st.frames_dropped(), dropped) << "t=" << t;
      for (uint32_t f : st.frames()) got.push_back(stats.frames(static_cast<int>(f)).name());
    }
    std::vector<std::string> want;
    for (size_t i = dropped; i < open.size(); ++i) want.push_back(open[i].name);
    ASSERT_EQ(got, want) << "t=" << t;
  }
}

using testing::MakeDb;

TEST(LaunchContextNsys, NvtxStackOnTheLaunchingThreadAndGraphs) {
  const std::string a = std::to_string((int64_t{100} << 24) | 101);
  const std::string b = std::to_string((int64_t{100} << 24) | 102);
  const std::string pid = std::to_string(int64_t{100} << 24);
  std::string sql = R"(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
    INSERT INTO StringIds VALUES (1, 'bmm_E2m1E2m1E4m3_kernel'), (2, 'cudaLaunchKernel_v7000'),
      (3, 'cudaGraphLaunch_v10000'), (4, 'node_kernel');
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
      gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER,
      registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER,
      graphId INTEGER, graphNodeId INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
      (1000, 1100, 0, 7, 5, )" + pid + R"(, 1, 64, 1, 1, 128, 1, 1, 96, 0, 16384, 0, 0),
      (3000, 3100, 0, 7, 9, )" + pid + R"(, 4, 1, 1, 1, 32, 1, 1, 16, 0, 0, 3, 1),
      (3200, 3300, 0, 7, 9, )" + pid + R"(, 4, 1, 1, 1, 32, 1, 1, 16, 0, 0, 3, 2);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
      correlationId INTEGER, nameId INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (950, 960, )" + b + R"(, 5, 2),
      (2900, 2950, )" + a + R"(, 9, 3);
    CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,
      textId INTEGER, globalTid INTEGER);
    INSERT INTO NVTX_EVENTS VALUES
      (900, 2000, 59, 'vllm::moe_forward, seq = 12', NULL, )" + b + R"(),
      (940, 970, 59, 'aten::bmm, op_id = 7, sizes = [[8, 16, 32]]', NULL, )" + b + R"(),
      (900, 2000, 59, 'on another thread', NULL, )" + a + R"(),
      (2800, 4000, 59, 'decode step', NULL, )" + a + R"();
  )";
  auto t = ImportFile(MakeDb("ctx.sqlite", sql), Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->activities_size(), 3);
  const auto& k = t->activities(0);
  // emit_nvtx's per-call "seq = N" and "op_id = N" are dropped so one op's calls share a
  // frame; the sizes stay (work from shapes reads them).
  EXPECT_EQ(Names(*t, k), (std::vector<std::string>{"vllm::moe_forward",
                                                    "aten::bmm, sizes = [[8, 16, 32]]"}));
  EXPECT_EQ(Frames(*t, k)[0].kind(), "nvtx");
  EXPECT_EQ(k.launch_context().launch_api(), "cudaLaunchKernel");  // version suffix dropped
  for (int i : {1, 2}) {
    const auto& g = t->activities(i).launch_context();
    EXPECT_TRUE(g.graph_launch());
    EXPECT_EQ(g.launch_api(), "cudaGraphLaunch");
    EXPECT_EQ(Names(*t, t->activities(i)), std::vector<std::string>{"decode step"});
  }
  EXPECT_EQ(t->header().launch_context_stats().with_context(), 3u);
  EXPECT_EQ(t->header().launch_context_stats().graph_launches(), 2u);
  // Occupancy needs device limits: this database has no TARGET_INFO_GPU.
  EXPECT_FALSE(k.occupancy().error().empty());
}

}  // namespace
}  // namespace qprof::importers
