// Per-layer paths for CUDA-graph replays (runtime/cuda/host/graph_paths.h): records of a
// replay, out of order in the file, are matched to the captured chain by start time and
// get the capture-time range; a replay with a missing record or another kernel order is
// left under ".../graph" with the reason; other devices and eager steps are untouched.
#include "runtime/cuda/host/graph_paths.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace qprof::runtime::cuda {
namespace {

using Kind = CapturedNode::Kind;

std::vector<CapturedNode> Chain() {
  return {{Kind::kKernel, "qprof_embedding", "embed"},
          {Kind::kKernel, "qprof_norm_rmsnorm", "layer 0/attn"},
          {Kind::kOther, "", "layer 0/attn"},  // an empty node: records nothing
          {Kind::kMemset, "", "layer 0/moe"},
          {Kind::kKernel, "qprof_moe_slot_gemv_mxfp4_w13", "layer 0/moe"},
          {Kind::kKernel, "", "layer 0/comm"},  // name unknown (NCCL): kind only
          {Kind::kKernel, "qprof_sampling_argmax", "head"}};
}

proto::Activity* Add(proto::Trace* t, proto::ActivityKind kind, const std::string& name,
                     const std::string& path, int64_t start, uint32_t device = 0) {
  proto::Activity* a = t->add_activities();
  a->set_kind(kind);
  a->set_name(name);
  a->set_nvtx_path(path);
  a->set_start_ns(start);
  a->set_end_ns(start + 5);
  a->set_device_id(device);
  return a;
}

void AddReplay(proto::Trace* t, const std::string& path, int64_t t0, uint32_t device = 0) {
  // Written in reverse start order: the match must sort by time, not trust file order.
  Add(t, proto::ACTIVITY_KIND_KERNEL, "qprof_sampling_argmax", path, t0 + 50, device);
  Add(t, proto::ACTIVITY_KIND_KERNEL, "ncclDevKernel_AllReduce_Sum_f32", path, t0 + 40, device);
  Add(t, proto::ACTIVITY_KIND_KERNEL, "qprof_moe_slot_gemv_mxfp4_w13", path, t0 + 30, device);
  Add(t, proto::ACTIVITY_KIND_MEMSET, "Memset", path, t0 + 20, device);
  Add(t, proto::ACTIVITY_KIND_KERNEL, "qprof_norm_rmsnorm", path, t0 + 10, device);
  Add(t, proto::ACTIVITY_KIND_KERNEL, "qprof_embedding", path, t0, device);
}

TEST(GraphPathsTest, ReplaysGetTheCaptureTimeRanges) {
  proto::Trace t;
  Add(&t, proto::ACTIVITY_KIND_KERNEL, "qprof_embedding", "decode/step 0/embed", 1);
  AddReplay(&t, "decode/step 2/graph", 1000);
  AddReplay(&t, "decode/step 3/graph", 2000);
  AddReplay(&t, "decode/step 2/graph", 1000, /*device=*/1);  // another rank's graph
  GraphAttribution g = AttributeGraphReplays(Chain(), 0, &t);
  EXPECT_EQ(g.replays, 2);
  EXPECT_EQ(g.attributed, 2);
  EXPECT_TRUE(g.unmatched.empty());
  auto path_of = [&](const std::string& name, int64_t start) {
    for (const auto& a : t.activities()) {
      if (a.name() == name && a.start_ns() == start) return a.nvtx_path();
    }
    return std::string("?");
  };
  EXPECT_EQ(path_of("qprof_embedding", 1), "decode/step 0/embed");  // eager: untouched
  EXPECT_EQ(path_of("qprof_embedding", 1000), "decode/step 2/embed");
  EXPECT_EQ(path_of("qprof_norm_rmsnorm", 2010), "decode/step 3/layer 0/attn");
  EXPECT_EQ(path_of("Memset", 1020), "decode/step 2/layer 0/moe");
  EXPECT_EQ(path_of("ncclDevKernel_AllReduce_Sum_f32", 2040), "decode/step 3/layer 0/comm");
  EXPECT_EQ(path_of("qprof_sampling_argmax", 1050), "decode/step 2/head");
  for (const auto& a : t.activities()) {
    if (a.device_id() == 1) {
      EXPECT_EQ(a.nvtx_path(), "decode/step 2/graph");  // not this device's chain
    } else if (a.start_ns() >= 1000) {
      EXPECT_EQ(a.args().at("graph_replay"), "1");
      EXPECT_EQ(a.args().at("nvtx_path_source"), "graph capture order");
    }
  }
}

TEST(GraphPathsTest, MismatchedReplaysAreLeftAsTheyWereWithTheReason) {
  proto::Trace t;
  AddReplay(&t, "decode/step 2/graph", 1000);
  t.mutable_activities()->RemoveLast();  // a dropped record
  AddReplay(&t, "decode/step 3/graph", 2000);
  // Step 3: the MoE kernel ran before the norm (another order than captured).
  for (auto& a : *t.mutable_activities()) {
    if (a.start_ns() == 2030) a.set_start_ns(2005);
  }
  GraphAttribution g = AttributeGraphReplays(Chain(), 0, &t);
  EXPECT_EQ(g.replays, 2);
  EXPECT_EQ(g.attributed, 0);
  ASSERT_EQ(g.unmatched.size(), 2u);
  EXPECT_NE(g.unmatched[0].find("5 records, 6 captured nodes"), std::string::npos) << g.unmatched[0];
  EXPECT_NE(g.unmatched[1].find("record 1 is qprof_moe_slot_gemv_mxfp4_w13, the captured node qprof_norm_rmsnorm"), std::string::npos)
      << g.unmatched[1];
  for (const auto& a : t.activities()) {
    EXPECT_EQ(a.nvtx_path().substr(a.nvtx_path().size() - 6), "/graph");
    EXPECT_EQ(a.args().count("graph_replay"), 0u);
  }
}

// Issue 25: the CUPTI collector may have given replayed kernels their capture-time path
// already (".../graph/layer 0/moe", with the launch path in args). They are put back
// under their launch path and matched to the chain like the others, so the trace reads
// as before; a collector path the chain contradicts is counted and the chain's kept.
TEST(GraphPathsTest, PathsTheCollectorGaveAreCheckedAgainstTheChain) {
  proto::Trace t;
  AddReplay(&t, "decode/step 2/graph", 1000);
  for (proto::Activity& a : *t.mutable_activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    std::string below = a.name() == "qprof_embedding"      ? "embed"
                        : a.name() == "qprof_norm_rmsnorm" ? "layer 0/attn"
                        : a.name() == "qprof_sampling_argmax" ? "layer 9/moe"  // wrong
                                                              : "";
    if (below.empty()) continue;
    (*a.mutable_args())["graph_launch_nvtx_path"] = a.nvtx_path();
    a.set_nvtx_path(a.nvtx_path() + "/" + below);
  }
  GraphAttribution g = AttributeGraphReplays(Chain(), 0, &t);
  EXPECT_EQ(g.attributed, 1);
  EXPECT_TRUE(g.unmatched.empty());
  EXPECT_EQ(g.path_disagreements, 1);  // the argmax
  for (const proto::Activity& a : t.activities()) {
    if (a.name() == "qprof_sampling_argmax") EXPECT_EQ(a.nvtx_path(), "decode/step 2/head");
    if (a.name() == "qprof_norm_rmsnorm") {
      EXPECT_EQ(a.nvtx_path(), "decode/step 2/layer 0/attn");
      EXPECT_EQ(a.args().at("cupti_capture_path"), "layer 0/attn");
    }
  }
}

}  // namespace
}  // namespace qprof::runtime::cuda
