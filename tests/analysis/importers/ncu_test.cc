// Nsight Compute CSV: hand-written details and raw pages with preambles, thousands
// separators and scaled units; the join onto a trace by name and launch order.
#include <string>

#include "analysis/importers/import.h"
#include "analysis/importers/ncu/ncu_csv.h"
#include "analysis/importers/ncu/ncu_importer.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

// Details page as `ncu --csv --page details --metrics ...` prints it, after program output.
constexpr char kDetails[] =
    "==PROF== Connected to process 4242 (/usr/bin/python3)\n"
    "step 0 loss 1.25, \"quoted\" output\n"
    "==PROF== Profiling \"gemm\" - 0: 0%....50%....100% - 9 passes\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\","
    "\"Metric Unit\",\"Metric Value\"\n"
    "\"0\",\"4242\",\"python3\",\"host\",\"void gemm<128>(float *, int)\",\"1\",\"7\",\"(128, 1, 1)\","
    "\"(1024, 2, 1)\",\"0\",\"9.0\",\"GPU Speed Of Light Throughput\",\"DRAM Throughput\",\"%\",\"71.25\"\n"
    "\"0\",\"4242\",\"python3\",\"host\",\"void gemm<128>(float *, int)\",\"1\",\"7\",\"(128, 1, 1)\","
    "\"(1024, 2, 1)\",\"0\",\"9.0\",\"GPU Speed Of Light Throughput\",\"Duration\",\"usecond\",\"1,234.50\"\n"
    "\"0\",\"4242\",\"python3\",\"host\",\"void gemm<128>(float *, int)\",\"1\",\"7\",\"(128, 1, 1)\","
    "\"(1024, 2, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active\",\"%\",\"88.5\"\n"
    "\"0\",\"4242\",\"python3\",\"host\",\"void gemm<128>(float *, int)\",\"1\",\"7\",\"(128, 1, 1)\","
    "\"(1024, 2, 1)\",\"0\",\"9.0\",\"Memory Workload Analysis\",\"Memory Throughput\",\"Gbyte/second\",\"2,048.00\"\n"
    "\"1\",\"4242\",\"python3\",\"host\",\"slot_gemv\",\"1\",\"7\",\"(256, 1, 1)\",\"(66, 1, 1)\",\"0\","
    "\"9.0\",\"GPU Speed Of Light Throughput\",\"Duration\",\"msecond\",\"2.5\"\n"
    "\"1\",\"4242\",\"python3\",\"host\",\"slot_gemv\",\"1\",\"7\",\"(256, 1, 1)\",\"(66, 1, 1)\",\"0\","
    "\"9.0\",\"Command line profiler metrics\",\"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active\","
    "\"%\",\"63\"\n"
    "\"1\",\"4242\",\"python3\",\"host\",\"slot_gemv\",\"1\",\"7\",\"(256, 1, 1)\",\"(66, 1, 1)\",\"0\","
    "\"9.0\",\"Command line profiler metrics\",\"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active\","
    "\"%\",\"0.4\"\n"
    "==PROF== Disconnected from process 4242\n";

// Raw page: metric names as columns, a units row, one row per kernel.
constexpr char kRaw[] =
    "==PROF== Connected to process 77\r\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Device\",\"dram__bytes_read.sum\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
    "\"gpu__time_duration.sum\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
    "\"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active\"\r\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Kbyte\",\"%\",\"nsecond\",\"%\",\"%\"\r\n"
    "\"0\",\"77\",\"a.out\",\"h\",\"k_a\",\"1\",\"13\",\"1\",\"1,536.25\",\"50.5\",\"12,000\",\"20\",\"n/a\"\r\n"
    "\"1\",\"77\",\"a.out\",\"h\",\"k_b\",\"1\",\"13\",\"1\",\"3\",\"1\",\"800\",\"95.5\",\"77\"\r\n"
    "\"2\",\"77\",\"a.out\",\"h\",\"k_a\",\"1\",\"13\",\"1\",\"2\",\"3\",\"1,000\",\"4\",\"5\"\r\n";

TEST(NcuCsv, DetailsPageWithPreambleAndSeparators) {
  auto r = ParseNcuCsv(kDetails, "d.csv");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->raw_page);
  ASSERT_EQ(r->kernels.size(), 2u);
  const NcuKernel& g = r->kernels[0];
  EXPECT_EQ(g.name, "void gemm<128>(float *, int)");
  EXPECT_EQ(g.grid[0], 1024u);
  EXPECT_EQ(g.grid[1], 2u);
  EXPECT_EQ(g.block[0], 128u);
  EXPECT_EQ(g.stream, 7u);
  EXPECT_EQ(g.pid, 4242u);
  EXPECT_DOUBLE_EQ(*g.dram_pct, 71.25);
  EXPECT_DOUBLE_EQ(*g.duration_ns, 1234500.0);  // 1,234.50 usecond
  EXPECT_DOUBLE_EQ(*g.tensor_pipe_pct, 88.5);
  bool saw_rate = false;
  for (const auto& [k, v] : g.metrics) {
    if (k == "Memory Throughput") {
      EXPECT_DOUBLE_EQ(v, 2048e9);  // Gbyte/second -> bytes/s
      saw_rate = true;
    }
  }
  EXPECT_TRUE(saw_rate);
  const NcuKernel& s = r->kernels[1];
  EXPECT_DOUBLE_EQ(*s.duration_ns, 2.5e6);
  EXPECT_DOUBLE_EQ(*s.fma_pipe_pct, 63);
  EXPECT_DOUBLE_EQ(*s.tensor_pipe_pct, 0.4);
}

TEST(NcuCsv, RawPageWithUnitsRow) {
  auto r = ParseNcuCsv(kRaw, "r.csv");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->raw_page);
  ASSERT_EQ(r->kernels.size(), 3u);
  const NcuKernel& a = r->kernels[0];
  EXPECT_EQ(a.name, "k_a");
  EXPECT_EQ(a.stream, 13u);
  EXPECT_DOUBLE_EQ(*a.duration_ns, 12000);
  EXPECT_DOUBLE_EQ(*a.dram_pct, 50.5);
  EXPECT_DOUBLE_EQ(*a.sm_pct, 20);
  EXPECT_FALSE(a.tensor_pipe_pct.has_value());  // "n/a"
  EXPECT_DOUBLE_EQ(a.metrics[0].second, 1536250);  // 1,536.25 Kbyte
  EXPECT_DOUBLE_EQ(*r->kernels[1].tensor_pipe_pct, 77);
}

TEST(NcuCsv, ImportAsTraceLaysKernelsEndToEnd) {
  std::string path = testing::WriteTemp("raw.csv", kRaw);
  ImportOptions o;
  o.progress = false;
  auto t = ImportFile(path, o);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->header().source_kind(), "ncu-csv");
  ASSERT_EQ(t->activities_size(), 3);
  EXPECT_EQ(t->activities(1).start_ns(), 12000);
  EXPECT_EQ(t->activities(2).end_ns(), 13800);
  EXPECT_EQ(t->activities(1).metrics().source(), "ncu: " + path);
  EXPECT_FALSE(t->header().notes().empty());
}

// Found by fuzz_detect: a duration of 7.6e79 ns overflowed the int64 cast. Absurd,
// negative or non-numeric durations leave the kernel without a length and are counted.
TEST(NcuCsv, AbsurdDurationsGetNoLength) {
  const std::string csv =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n"
      "\"0\",\"k\",\"" + std::string(80, '5') + "\"\n"
      "\"1\",\"k\",\"-5\"\n"
      "\"2\",\"k\",\"1200\"\n";
  std::string path = testing::WriteTemp("absurd.csv", csv);
  ImportOptions o;
  o.progress = false;
  auto t = ImportFile(path, o);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->activities_size(), 3);
  EXPECT_EQ(t->activities(0).end_ns() - t->activities(0).start_ns(), 0);
  EXPECT_EQ(t->activities(1).end_ns() - t->activities(1).start_ns(), 0);
  EXPECT_EQ(t->activities(2).end_ns() - t->activities(2).start_ns(), 1200);
  ASSERT_GT(t->header().collector().warnings_size(), 0);
  EXPECT_NE(t->header().collector().warnings(0).find("2 kernels"), std::string::npos);
}

TEST(NcuCsv, Errors) {
  auto none = ParseNcuCsv("hello\nworld\n", "x.csv");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(none.status().message()).find("x.csv: not an Nsight Compute CSV"),
            std::string::npos);
  std::string bad_row = std::string(kRaw) + "\"3\",\"77\",\"short\"\n";
  auto b = ParseNcuCsv(bad_row, "y.csv");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(std::string(b.status().message()).find("y.csv: line 7 has 3 fields"), std::string::npos)
      << b.status();
  std::string cut(kDetails, 700);
  auto c = ParseNcuCsv(cut, "z.csv");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(std::string(c.status().message()).find("unterminated quote"), std::string::npos)
      << c.status();
}

// The details page as `ncu --csv` (its default page) writes it: 20 header fields, the five
// rule columns after "Metric Value" left off metric rows (16 fields: the 15 written and the
// empty one after the trailing comma), rule rows with all 20; several kernels; a "CC"
// column; counters named on the command line (--metrics) beside the section metrics.
std::string DetailsRow(const std::string& id, const std::string& kernel, const std::string& grid,
                       const std::string& section, const std::string& metric,
                       const std::string& unit, const std::string& value) {
  return "\"" + id + "\",\"1702327\",\"python3.12\",\"127.0.0.1\",\"" + kernel +
         "\",\"1\",\"7\",\"(128, 1, 1)\",\"" + grid + "\",\"0\",\"12.0\",\"" + section +
         "\",\"" + metric + "\",\"" + unit + "\",\"" + value + "\",\n";
}

const char kDetailsHeader[] =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\","
    "\"Metric Value\",\"Rule Name\",\"Rule Type\",\"Rule Description\",\"Estimated Speedup Type\","
    "\"Estimated Speedup\"\n";

std::string RaggedDetailsPage() {
  const std::string gemv = "void gemvx::kernel<int, __nv_bfloat16>(T13)";
  const std::string mma = "void Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16>(Params)";
  const std::string cmd = "Command line profiler metrics";
  std::string csv = kDetailsHeader;
  csv += DetailsRow("0", gemv, "(224, 1, 1)", cmd, "dram__bytes_read.sum", "Mbyte", "2.33");
  csv += DetailsRow("0", gemv, "(224, 1, 1)", cmd, "dram__bytes_write.sum", "byte", "0");
  csv += DetailsRow("0", gemv, "(224, 1, 1)", cmd, "gpu__time_duration.sum", "us", "6.46");
  csv += DetailsRow("0", gemv, "(224, 1, 1)", cmd, "sm__ops_path_tensor_src_bf16_dst_bf16.sum",
                    "", "n/a");
  csv += DetailsRow("0", gemv, "(224, 1, 1)", cmd, "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
                    "", "0");
  csv += DetailsRow("0", gemv, "(224, 1, 1)", "GPU Speed Of Light Throughput", "DRAM Throughput",
                    "%", "20.52");
  // A rule row: every column, the metric ones empty.
  csv += "\"0\",\"1702327\",\"python3.12\",\"127.0.0.1\",\"" + gemv +
         "\",\"1\",\"7\",\"(128, 1, 1)\",\"(224, 1, 1)\",\"0\",\"12.0\",\"SpeedOfLight\",\"\",\"\",\"\","
         "\"SOLBottleneck\",\"OPT\",\"This kernel grid is too small, resulting in only 0.7 full "
         "waves, \"\"quoted\"\".\",\"\",\"\"\n";
  csv += DetailsRow("1", mma, "(152, 4, 1)", cmd, "dram__bytes_read.sum", "Mbyte", "2.64");
  csv += DetailsRow("1", mma, "(152, 4, 1)", cmd, "dram__bytes_write.sum", "Kbyte", "1.5");
  csv += DetailsRow("1", mma, "(152, 4, 1)", cmd, "gpu__time_duration.sum", "us", "13.31");
  csv += DetailsRow("1", mma, "(152, 4, 1)", cmd, "sm__ops_path_tensor_src_bf16_dst_bf16.sum",
                    "", "n/a");
  csv += DetailsRow("1", mma, "(152, 4, 1)", cmd, "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
                    "", "603,979,776");
  return csv;
}

TEST(NcuCsv, DetailsPageWithRaggedRowsAsNcuWritesThem) {
  const std::string csv = RaggedDetailsPage();
  auto r = ParseNcuCsv(csv, "ncu.details.csv");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->raw_page);
  ASSERT_EQ(r->kernels.size(), 2u);
  const NcuKernel& g = r->kernels[0];
  EXPECT_EQ(g.cc, "12.0");
  EXPECT_EQ(g.grid[0], 224u);
  EXPECT_DOUBLE_EQ(*g.duration_ns, 6.46e3);
  EXPECT_DOUBLE_EQ(*g.dram_pct, 20.52);
  EXPECT_DOUBLE_EQ(*g.dram_bytes, 2.33e6 + 0);
  // "n/a" is no value; the other path counted 0: no tensor work.
  EXPECT_DOUBLE_EQ(*g.tensor_count, 0);
  EXPECT_EQ(g.tensor_count_metric, "sm__ops_path_tensor_src_bf16_dst_fp32.sum");
  const NcuKernel& m = r->kernels[1];
  EXPECT_DOUBLE_EQ(*m.tensor_count, 603979776);
  EXPECT_DOUBLE_EQ(*m.dram_bytes, 2.64e6 + 1.5e3);
  EXPECT_FALSE(m.tensor_pipe_pct.has_value());
  // A metric row cut before "Metric Value" is malformed, not ragged.
  std::string cut = std::string(kDetailsHeader) + "\"0\",\"1\",\"p\",\"h\",\"k\"\n";
  auto bad = ParseNcuCsv(cut, "cut.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("cut.csv: line 2 has 5 fields, the header 20"),
            std::string::npos) << bad.status();
}

// Imported on its own: the device has the CC column's architecture, the counters become the
// per-kernel fields CUPTI metrics fill, and no timeline is claimed.
TEST(NcuCsv, RaggedDetailsPageImportsWithDeviceAndTensorCounts) {
  std::string path = testing::WriteTemp("ncu.details.csv", RaggedDetailsPage());
  ImportOptions o;
  o.progress = false;
  auto t = ImportFile(path, o);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->header().devices_size(), 1);
  const proto::DeviceInfo& d = t->header().devices(0);
  EXPECT_EQ(d.arch(), "sm_120");
  EXPECT_EQ(d.cc_major(), 12u);
  EXPECT_EQ(d.cc_minor(), 0u);
  EXPECT_EQ(d.vendor(), "NVIDIA");
  EXPECT_FALSE(t->header().no_timeline().empty());
  ASSERT_EQ(t->activities_size(), 2);
  const proto::KernelMetrics& g = t->activities(0).metrics();
  EXPECT_DOUBLE_EQ(g.tensor_count(), 0);
  EXPECT_DOUBLE_EQ(g.dram_bytes(), 2.33e6);
  EXPECT_DOUBLE_EQ(g.dram_throughput_pct(), 20.52);
  EXPECT_DOUBLE_EQ(t->activities(1).metrics().tensor_count(), 603979776);
  EXPECT_EQ(t->activities(1).end_ns() - t->activities(1).start_ns(), 13310);
}

TEST(NcuCsv, Units) {
  EXPECT_DOUBLE_EQ(*NcuValueInBaseUnits("1,024", "byte"), 1024);
  EXPECT_DOUBLE_EQ(*NcuValueInBaseUnits("1.5", "Mbyte"), 1.5e6);
  EXPECT_DOUBLE_EQ(*NcuValueInBaseUnits("3", "usecond"), 3000);
  EXPECT_DOUBLE_EQ(*NcuValueInBaseUnits("1.2", "Ghz"), 1.2e9);
  EXPECT_DOUBLE_EQ(*NcuValueInBaseUnits("42", "%"), 42);
  EXPECT_FALSE(NcuValueInBaseUnits("n/a", "%").has_value());
  EXPECT_FALSE(NcuValueInBaseUnits("", "%").has_value());
}

TEST(NcuJoin, ByNameAndLaunchOrderWithShortNames) {
  proto::Trace trace;
  auto add = [&trace](const std::string& name, int64_t start) {
    proto::Activity* a = trace.add_activities();
    a->set_kind(proto::ACTIVITY_KIND_KERNEL);
    a->set_name(name);
    a->set_start_ns(start);
    a->set_end_ns(start + 10);
  };
  // Trace order by start: k_a@5, k_b@10, k_a@20; stored out of order on purpose.
  add("k_a", 20);
  add("void ns::k_b<int, 4>(float const*, int)", 10);  // demangled; ncu printed "k_b"
  add("k_a", 5);
  add("unprofiled", 30);
  std::string path = testing::WriteTemp("join.csv", kRaw);
  NcuJoinStats st;
  ASSERT_TRUE(JoinNcuMetrics(&trace, path, &st).ok());
  EXPECT_EQ(st.ncu_kernels, 3);
  EXPECT_EQ(st.matched, 3);
  EXPECT_EQ(st.unmatched_ncu, 0);
  EXPECT_EQ(st.trace_kernels, 4);
  // The first k_a launch (start 5, stored third) got ncu's first k_a row (12000 ns).
  EXPECT_DOUBLE_EQ(trace.activities(2).metrics().raw().at("gpu__time_duration.sum"), 12000);
  EXPECT_DOUBLE_EQ(trace.activities(0).metrics().raw().at("gpu__time_duration.sum"), 1000);
  EXPECT_DOUBLE_EQ(trace.activities(1).metrics().tensor_pipe_pct(), 77);
  EXPECT_FALSE(trace.activities(3).has_metrics());
  EXPECT_EQ(trace.header().collector().warnings_size(), 1);  // 3 of 4 kernels
  EXPECT_EQ(NcuMatchKey("void at::native::vectorized_elementwise_kernel<4, F<(int)2>>(int, T2)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(NcuMatchKey("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096UL>)"),
            "ncclDevKernel_SendRecv");
}

}  // namespace
}  // namespace qprof::importers
