// `nsys stats --format csv` kernel summaries read as a profile without a timeline: files
// written here the way nsys's report scripts write them (cuda_gpu_kern_sum, its grid/block
// variant, cuda_kern_exec_sum, an older header, --timeunit), every figure checked against
// the rows of the file; other stats reports refused with the report to export instead.
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/importers/import.h"
#include "analysis/importers/nsys_stats/nsys_stats_csv.h"
#include "analysis/ingest.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

ImportOptions Quiet() {
  ImportOptions o;
  o.progress = false;
  return o;
}

struct Row {
  double pct;
  uint64_t total, instances;
  double avg, med;
  uint64_t min, max;
  double stddev;
  std::string name;
};

// As CudaGpuKernSum prints it with --format csv: a names the columns, numbers bare, the
// name quoted when it holds a comma.
const std::vector<Row> kRows = {
    {34.4, 61602133, 16448, 3745.3, 3744.0, 2080, 5728, 417.2,
     "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, "
     "__nv_bfloat16, __nv_bfloat16, float, (bool)0, (bool)1, (bool)1, (bool)0, (int)7, (bool)0, "
     "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, "
     "cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<"
     "__nv_bfloat16>, float>>(T13)"},
    {14.8, 26427871, 2304, 11470.4, 5344.0, 4928, 208004, 33079.0,
     "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>"
     "(T1::Params)"},
    {0.1, 3000, 1, 3000.0, 3000.0, 3000, 3000, 0.0, "void one_off_kernel(float *)"},
};

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

std::string KernSumCsv() {
  std::string csv =
      "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n";
  for (const Row& r : kRows) {
    csv += std::to_string(r.pct) + "," + std::to_string(r.total) + "," +
           std::to_string(r.instances) + "," + std::to_string(r.avg) + "," +
           std::to_string(r.med) + "," + std::to_string(r.min) + "," + std::to_string(r.max) +
           "," + std::to_string(r.stddev) + "," + Quoted(r.name) + "\n";
  }
  return csv;
}

struct Durations {
  uint64_t count = 0, total = 0, min = UINT64_MAX, max = 0;
};

Durations Of(const proto::Trace& t, const std::string& name) {
  Durations d;
  for (const auto& a : t.activities()) {
    if (a.name() != name) continue;
    const uint64_t ns = static_cast<uint64_t>(a.end_ns() - a.start_ns());
    ++d.count;
    d.total += ns;
    d.min = std::min(d.min, ns);
    d.max = std::max(d.max, ns);
  }
  return d;
}

TEST(NsysStatsCsv, KernelSummaryKeepsEachKernelsTotalCountMinAndMax) {
  const std::string path = testing::WriteTemp("summary_cuda_gpu_kern_sum.csv", KernSumCsv());
  auto kind = DetectInputKind(path);
  ASSERT_TRUE(kind.ok());
  EXPECT_EQ(*kind, InputKind::kNsysStatsCsv);
  auto t = ImportFile(path, Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->header().source_kind(), "nsys-stats-csv");
  EXPECT_NE(t->header().no_timeline().find("cuda_gpu_kern_sum"), std::string::npos)
      << t->header().no_timeline();
  uint64_t launches = 0;
  for (const Row& r : kRows) {
    const Durations d = Of(*t, r.name);
    EXPECT_EQ(d.count, r.instances) << r.name;
    EXPECT_EQ(d.total, r.total) << r.name;
    EXPECT_EQ(d.min, r.min) << r.name;
    EXPECT_EQ(d.max, r.max) << r.name;
    launches += r.instances;
  }
  EXPECT_EQ(static_cast<uint64_t>(t->activities_size()), launches);
}

TEST(NsysStatsCsv, AnalysedAsAProfileWithoutTimeline) {
  const std::string path = testing::WriteTemp("decode_kern_sum.csv", KernSumCsv());
  auto state = IngestFile(path, Quiet());
  ASSERT_TRUE(state.ok()) << state.status();
  auto p = AnalyzeState(*state, AnalyzeOptions());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->no_timeline().empty());
  uint64_t total = 0, launches = 0;
  for (const Row& r : kRows) total += r.total, launches += r.instances;
  EXPECT_EQ(p->totals().kernel_time_ns(), total);
  EXPECT_EQ(p->totals().kernel_count(), launches);
  // Each kernel row: the file's total, count, minimum and maximum, and its share.
  for (const Row& r : kRows) {
    const proto::KernelRow* k = nullptr;
    for (const auto& row : p->kernels()) {
      if (row.raw_name() == r.name) k = &row;
    }
    ASSERT_NE(k, nullptr) << r.name;
    EXPECT_EQ(k->time_ns(), r.total);
    EXPECT_EQ(k->calls(), r.instances);
    EXPECT_EQ(k->min_ns(), r.min);
    EXPECT_EQ(k->max_ns(), r.max);
    EXPECT_NEAR(k->share(), static_cast<double>(r.total) / total, 1e-12);
  }
  // Amdahl per role from the shares alone.
  ASSERT_GT(p->ceilings().amdahl_size(), 0);
  for (const auto& a : p->ceilings().amdahl()) {
    EXPECT_NEAR(a.speedup_if_vanished(), 1 / (1 - a.share()), 1e-9);
  }
  // No GPU named: the warning says so and asks for --device.
  bool device_warning = false;
  for (const auto& w : p->warnings()) {
    if (w.code() == "device_unknown") {
      device_warning = true;
      EXPECT_NE(w.message().find("names no GPU"), std::string::npos) << w.message();
    }
  }
  EXPECT_TRUE(device_warning);
  EXPECT_FALSE(p->totals().has_tokens_per_s());  // unknown: absent, not 0
}

TEST(NsysStatsCsv, GridBlockVariantTimeUnitAndOldHeader) {
  // cuda_gpu_kern_gb_sum in microseconds (nsys stats --timeunit usec): one kernel at two
  // grid sizes is one kernel row with both.
  const std::string gb =
      "Time (%),Total Time (us),Instances,Avg (us),Med (us),Min (us),Max (us),StdDev (us),"
      "GridXYZ,BlockXYZ,Name\n"
      "60.0,30.000,10,3.000,3.000,2.500,3.500,0.3,\"  224    1    1\",\"  32    4    1\",k\n"
      "40.0,20.000,5,4.000,4.000,4.000,4.000,0.0,\"  448    1    1\",\"  32    4    1\",k\n";
  auto t = ImportFile(testing::WriteTemp("gb.csv", gb), Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  const Durations d = Of(*t, "k");
  EXPECT_EQ(d.count, 15u);
  EXPECT_EQ(d.total, 50000u);
  EXPECT_EQ(d.min, 2500u);
  EXPECT_EQ(d.max, 4000u);
  EXPECT_EQ(t->activities(0).grid().x(), 224u);
  EXPECT_EQ(t->activities(0).block().y(), 4u);
  EXPECT_NE(t->header().no_timeline().find("cuda_gpu_kern_gb_sum"), std::string::npos);
  // nsys before 2022: Time(%), Average, Minimum, Maximum, times in ns without a unit.
  const std::string old =
      "Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,Name\n"
      "100.0,900,3,300.0,100,500,old_kernel\n";
  auto o = ImportFile(testing::WriteTemp("old.csv", old), Quiet());
  ASSERT_TRUE(o.ok()) << o.status();
  const Durations od = Of(*o, "old_kernel");
  EXPECT_EQ(od.count, 3u);
  EXPECT_EQ(od.total, 900u);
  EXPECT_EQ(od.min, 100u);
  EXPECT_EQ(od.max, 500u);
}

TEST(NsysStatsCsv, KernelExecSummaryCountTimesAverageOnItsDevice) {
  const std::string csv =
      "PID,TID,DevId,Count,QCount,TAvg (ns),TMed (ns),TMin (ns),TMax (ns),TStdDev (ns),"
      "AAvg (ns),AMed (ns),AMin (ns),AMax (ns),AStdDev (ns),QAvg (ns),QMed (ns),QMin (ns),"
      "QMax (ns),QStdDev (ns),KAvg (ns),KMed (ns),KMin (ns),KMax (ns),KStdDev (ns),API Name,"
      "Kernel Name\n"
      "4242,4242,1,4,0,9000.0,9000.0,8000,10000,1.0,5000.0,5000.0,4000,6000,1.0,,,,,,"
      "2500.0,2500.0,2000,3000,408.2,cudaLaunchKernel,my_kernel\n";
  auto t = ImportFile(testing::WriteTemp("exec.csv", csv), Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  const Durations d = Of(*t, "my_kernel");
  EXPECT_EQ(d.count, 4u);
  EXPECT_EQ(d.total, 10000u);  // 4 x 2500.0
  EXPECT_EQ(d.min, 2000u);
  EXPECT_EQ(d.max, 3000u);
  EXPECT_EQ(t->activities(0).device_id(), 1u);
  EXPECT_EQ(t->activities(0).pid(), 4242u);
}

TEST(NsysStatsCsv, InconsistentExtremesFallBackToTheAverageWithTheTotalKept) {
  // A maximum that the rest of the total cannot accommodate: every launch at the average.
  const std::string csv =
      "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
      "100.0,1001,4,250.25,250.0,10,990,1.0,k\n";
  auto t = ImportFile(testing::WriteTemp("odd.csv", csv), Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  const Durations d = Of(*t, "k");
  EXPECT_EQ(d.count, 4u);
  EXPECT_EQ(d.total, 1001u);
  EXPECT_EQ(d.max - d.min, 1u);
}

TEST(NsysStatsCsv, OtherReportsNameTheKernelSummaryToExport) {
  const std::string api =
      "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
      "90.0,1000,10,100.0,100.0,90,110,5.0,cudaLaunchKernel\n";
  const std::string path = testing::WriteTemp("cuda_api_sum.csv", api);
  auto kind = DetectInputKind(path);
  ASSERT_TRUE(kind.ok());
  EXPECT_EQ(*kind, InputKind::kNsysStatsCsv);
  auto t = ImportFile(path, Quiet());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string m(t.status().message());
  EXPECT_NE(m.find("cuda_api_sum"), std::string::npos) << m;
  EXPECT_NE(m.find("--report cuda_gpu_kern_sum --format csv"), std::string::npos) << m;
  const std::string trace =
      "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
      "DymSMem (MB),Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n"
      "100,20,1,1,1,1,32,1,1,16,0,0,,,,,NVIDIA H100,1,7,k\n";
  auto g = ImportFile(testing::WriteTemp("cuda_gpu_trace.csv", trace), Quiet());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("cuda_gpu_trace"), std::string::npos)
      << g.status();
  // A header without rows is no profile.
  auto e = ImportFile(testing::WriteTemp("empty_kern_sum.csv",
                                         "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),"
                                         "Min (ns),Max (ns),StdDev (ns),Name\n"),
                      Quiet());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(std::string(e.status().message()).find("without kernel rows"), std::string::npos);
}

}  // namespace
}  // namespace qprof::importers
