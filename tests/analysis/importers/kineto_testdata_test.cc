// Every Kineto trace in the test data: kernel count and total kernel time equal what a
// whole-document simdjson DOM parse (a different parser path from the streaming importer)
// says; annotation paths equal a brute-force oracle.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

ImportOptions Quiet() {
  ImportOptions o;
  o.progress = false;
  return o;
}

// Integer view of a number element (int64, uint64 or double).
int64_t AsInt(simdjson::dom::element e) {
  if (e.is_int64()) return e.get_int64().value();
  if (e.is_uint64()) return static_cast<int64_t>(e.get_uint64().value());
  if (e.is_double()) return static_cast<int64_t>(e.get_double().value());
  if (e.is_string()) {
    std::string s(e.get_string().value());
    size_t i = s.find_last_not_of("0123456789");
    return std::stoll(i == std::string::npos ? s : s.substr(i + 1));
  }
  return -1;
}

struct Oracle {
  int64_t kernels = 0, kernel_ns = 0, counter_ranges = 0;
  // (start ns rounded, corr) -> expected path, for kernels with a launch record.
  std::map<uint64_t, std::string> path_by_corr;
};

Oracle Compute(const std::string& json) {
  Oracle o;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json);
  simdjson::dom::array events = doc["traceEvents"].get_array();
  struct Ann { int64_t pid, tid; double ts, end; std::string name; };
  std::vector<Ann> anns;
  std::map<uint64_t, std::tuple<int64_t, int64_t, double>> launch;  // corr -> pid, tid, ts
  std::vector<uint64_t> kernel_corrs;
  for (simdjson::dom::element e : events) {
    std::string_view ph, cat;
    if (e["ph"].get(ph) || ph != "X" || e["cat"].get(cat)) continue;
    std::string c = absl::AsciiStrToLower(std::string(cat));
    if (c == "cuda_profiler_range") ++o.counter_ranges;
    if (c == "kernel") {
      ++o.kernels;
      o.kernel_ns += std::llround(e["dur"].get_double().value() * 1000.0);
      uint64_t corr;
      if (!e["args"]["correlation"].get(corr)) kernel_corrs.push_back(corr);
    } else if (c == "cuda_runtime" || c == "runtime" || c == "cuda_driver") {
      uint64_t corr;
      if (!e["args"]["correlation"].get(corr)) {
        launch[corr] = {AsInt(e["pid"]), AsInt(e["tid"]), e["ts"].get_double().value()};
      }
    } else if (c == "user_annotation") {
      double ts = e["ts"].get_double().value();
      anns.push_back({AsInt(e["pid"]), AsInt(e["tid"]), ts, ts + e["dur"].get_double().value(),
                      std::string(e["name"].get_string().value())});
    }
  }
  // A counter-only trace (no kernel events) lists its kernels as counter ranges: kernels
  // without a known duration.
  if (o.kernels == 0) o.kernels = o.counter_ranges;
  for (uint64_t corr : kernel_corrs) {
    auto it = launch.find(corr);
    if (it == launch.end()) continue;
    auto [pid, tid, ts] = it->second;
    std::vector<Ann> open;
    for (const Ann& a : anns) {
      if (a.pid == pid && a.tid == tid && a.ts <= ts && ts < a.end) open.push_back(a);
    }
    std::stable_sort(open.begin(), open.end(), [](const Ann& a, const Ann& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
    });
    std::string p;
    for (const Ann& a : open) p += (p.empty() ? "" : "/") + a.name;
    o.path_by_corr[corr] = p;
  }
  return o;
}

TEST(KinetoTestData, KernelCountTimeAndPathsMatchDomOracle) {
  auto files = testing::TestFiles("kineto", ".json.gz");
  if (files.empty()) GTEST_SKIP() << "no ../shared/testdata/kineto (set QPROF_TESTDATA)";
  int with_paths = 0;
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    Oracle o = Compute(Gunzip(f));
    auto t = ImportFile(f, Quiet());
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->header().source_kind(), "kineto-json");
    int64_t k = 0, kt = 0;
    for (const auto& a : t->activities()) {
      if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
      ++k;
      kt += a.end_ns() - a.start_ns();
      auto it = o.path_by_corr.find(a.correlation_id());
      if (it != o.path_by_corr.end() && a.args().count("kineto_category") == 0) {
        // A kernel under a gpu_user_annotation only (no CPU path) may carry that instead.
        if (!it->second.empty() || a.nvtx_path().empty()) {
          EXPECT_EQ(a.nvtx_path(), it->second) << a.name();
        }
        with_paths += !it->second.empty();
      }
    }
    EXPECT_EQ(k, o.kernels);
    EXPECT_EQ(kt, o.kernel_ns);
  }
  EXPECT_GT(with_paths, 0);
}

TEST(KinetoTestData, CounterRangesKeepMetricsWithoutFakeKernelTime) {
  std::string dir = testing::TestDataDir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/testdata (set QPROF_TESTDATA)";
  auto t = ImportFile(dir + "/kineto/a100_cupti_counters.json.gz", Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  int ranges = 0;
  for (const auto& a : t->activities()) {
    // The file has no kernel events: its counter ranges are its kernels, with no time.
    ASSERT_EQ(a.kind(), proto::ACTIVITY_KIND_KERNEL);
    EXPECT_EQ(a.args().at("kineto_category"), "cuda_profiler_range");
    ++ranges;
    EXPECT_EQ(a.start_ns(), a.end_ns());
    EXPECT_TRUE(a.metrics().raw().count("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"));
  }
  EXPECT_EQ(ranges, 77);
  EXPECT_EQ(t->header().devices_size(), 1);  // of the 8 in deviceProperties, the one used
  EXPECT_EQ(t->header().collector().warnings_size(), 1);
}

TEST(KinetoTestData, DevicesFromDeviceProperties) {
  std::string dir = testing::TestDataDir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/testdata (set QPROF_TESTDATA)";
  auto t = ImportFile(dir + "/kineto/h100_qwen1.5-0.5b_inference.json.gz", Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->header().devices_size(), 1);
  EXPECT_NE(t->header().devices(0).name().find("H100"), std::string::npos);
  EXPECT_EQ(t->header().devices(0).arch(), "sm_90");
  // NCCL collective args are kept verbatim on the kernels.
  auto nccl = ImportFile(dir + "/kineto/a100x2_nccl_allreduce.json.gz", Quiet());
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  int with_args = 0;
  for (const auto& a : nccl->activities()) {
    if (a.name().find("nccl") != std::string::npos && !a.args().empty()) ++with_args;
  }
  EXPECT_GT(with_args, 0);
}

}  // namespace
}  // namespace qprof::importers
