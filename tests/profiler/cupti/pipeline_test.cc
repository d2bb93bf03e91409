// End to end on a CPU: CUPTI records -> decoder -> metrics join -> .qtrace -> the
// device-check table/checks tool. Only the GPU and libcupti are left out.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>

#include <cupti_runtime_cbid.h>

#include "gtest/gtest.h"
#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/metrics_join.h"
#include "proto/trace_io.h"
#include "tests/profiler/cupti/decode_to_trace.h"
#include "tests/profiler/cupti/fake_records.h"

namespace qprof::profiler::cupti {
namespace {

constexpr uint32_t kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;

proto::Trace TracePass() {
  testing::FakeBuffer buf;
  buf.Append(testing::Marker(true, 1, "matmul", 10, 5));
  for (uint32_t i = 0; i < 3; ++i) {
    buf.Append(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, 20 + i, 21 + i, 5, 100 + i));
  }
  buf.Append(testing::Marker(false, 1, nullptr, 30, 5));
  buf.Append(testing::Marker(true, 2, "elementwise", 40, 5));
  buf.Append(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, 45, 46, 5, 200));
  buf.Append(testing::Marker(false, 2, nullptr, 50, 5));
  for (uint32_t i = 0; i < 3; ++i) {
    buf.Append(testing::Kernel("nvjet_hsh_128x256_64x4_2x1_v_bz_TNT", 1000 + i * 1000,
                               1900 + i * 1000, 100 + i));
  }
  buf.Append(testing::Kernel("_Z14vectorized_addPfPKfS1_i", 5000, 5200, 200));
  ActivityDecoder decoder;
  for (const CUpti_Activity* r : buf.Records()) decoder.Add(r);
  return testing::DecodeToTrace(&decoder);
}

proto::Trace MetricsPass() {
  proto::Trace m;
  m.mutable_header()->mutable_collector()->set_metrics_available(true);
  for (double pct : {62.0, 64.0, 66.0}) {
    proto::Activity* a = m.add_activities();
    a->set_kind(proto::ACTIVITY_KIND_KERNEL);
    a->set_name("nvjet_hsh_128x256_64x4_2x1_v_bz_TNT");
    a->mutable_metrics()->set_tensor_pipe_pct(pct);
    a->mutable_metrics()->set_dram_throughput_pct(20);
  }
  proto::Activity* e = m.add_activities();
  e->set_kind(proto::ACTIVITY_KIND_KERNEL);
  e->set_name("vectorized_add(float*, float const*, float const*, int)");
  e->set_mangled_name("_Z14vectorized_addPfPKfS1_i");
  e->mutable_metrics()->set_tensor_pipe_pct(0);
  e->mutable_metrics()->set_fma_pipe_pct(12);
  return m;
}

int RunCheck(const std::string& args, std::string* out) {
  FILE* p = popen((std::string(QPROF_BINARY_DIR) + "/bench/qprof_cupti_trace_check " + args +
                   " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  std::array<char, 1024> buf;
  while (fgets(buf.data(), buf.size(), p) != nullptr) *out += buf.data();
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CuptiPipelineTest, RecordsToTraceFileToChecks) {
  proto::Trace trace = TracePass();
  JoinStats join = JoinKernelMetrics(MetricsPass(), &trace);
  EXPECT_EQ(join.matched_by_occurrence, 4u);
  const std::string path = ::testing::TempDir() + "/pipeline.qtrace";
  ASSERT_TRUE(WriteTrace(trace, path).ok());
  absl::StatusOr<proto::Trace> back = ReadTrace(path);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->activities_size(), 4);
  EXPECT_EQ(back->activities(0).nvtx_path(), "matmul");
  EXPECT_EQ(back->activities(3).nvtx_path(), "elementwise");
  EXPECT_DOUBLE_EQ(back->activities(1).metrics().tensor_pipe_pct(), 64.0);
  EXPECT_EQ(back->ranges_size(), 2);

  const std::string tool = std::string(QPROF_BINARY_DIR) + "/bench/qprof_cupti_trace_check";
  if (!std::filesystem::exists(tool)) GTEST_SKIP() << "checker not built: " << tool;
  std::string out;
  EXPECT_EQ(RunCheck(path + " --expect-tensor nvjet=50 --expect-simt vectorized_add=1", &out), 0)
      << out;
  EXPECT_NE(out.find("tensor 93.1%"), std::string::npos) << out;  // 2700 of 2900 ns
  std::string fail;
  EXPECT_EQ(RunCheck(path + " --expect-tensor vectorized_add=50", &fail), 1) << fail;
  EXPECT_NE(fail.find("FAIL"), std::string::npos);
}

}  // namespace
}  // namespace qprof::profiler::cupti
