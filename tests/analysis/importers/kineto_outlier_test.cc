// A Kineto trace with one GPU event on another clock (an epoch-based ts among relative
// ones): the event is left out with a warning, and the analysis and its JSON report come
// out whole. Two real profiling windows far apart are not outliers.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/analyze.h"
#include "analysis/importers/kineto/kineto_importer.h"
#include "gtest/gtest.h"
#include "reports/json/json_report.h"

namespace qprof::importers {
namespace {

ImportOptions Quiet() {
  ImportOptions o;
  o.progress = false;
  return o;
}

// `n` kernels of 5 us, one every 100 us from ts0 (in us), correlations from `corr`.
std::string Kernels(int n, double ts0, int corr) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    absl::StrAppend(&s, R"({"ph": "X", "cat": "kernel", "name": "k)", i % 3,
                    R"(", "pid": 0, "tid": 7, "ts": )", absl::StrFormat("%.3f", ts0 + 100.0 * i),
                    R"(, "dur": 5, "args": {"correlation": )", corr + i,
                    R"(, "device": 0, "stream": 7}},)", "\n");
  }
  return s;
}

std::string Doc(const std::string& events) {
  return absl::StrCat(R"({"traceEvents": [)", "\n", events,
                      R"({"ph": "X", "cat": "cpu_op", "name": "end", "pid": 1, "tid": 1, "ts": 0, "dur": 1}]})");
}

std::string Warnings(const proto::Trace& t) {
  std::string all;
  for (const auto& w : t.header().collector().warnings()) all += w + "\n";
  return all;
}

TEST(KinetoOutliers, OneEpochTimestampAmongRelativeOnesIsLeftOutWithAWarning) {
  // 50 kernels from 1000 us, then one whose ts is microseconds since the Unix epoch
  // (2024-12-01): its distance from the rest, 1.7e18 ns, is past 2^53 and 54 years long.
  const std::string events =
      Kernels(50, 1000, 1) +
      R"({"ph": "X", "cat": "kernel", "name": "k_epoch", "pid": 0, "tid": 7, "ts": 1733011200000000, "dur": 5, "args": {"correlation": 99, "device": 0, "stream": 7}},)"
      "\n";
  auto t = ImportKinetoJsonBytes(Doc(events), "epoch.json", Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->activities_size(), 50);
  for (const auto& a : t->activities()) EXPECT_NE(a.name(), "k_epoch");
  const std::string w = Warnings(*t);
  EXPECT_NE(w.find("1 GPU events lie far outside the rest of the trace (the first: k_epoch at ts "
                   "1733011200000000 us"),
            std::string::npos)
      << w;
  EXPECT_GE(t->header().collector().records_invalid(), 1u);

  auto p = Analyze({*t}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  // Span: first kernel start (1000 us) to last end (1000 + 49 * 100 + 5 us), as the raw list says.
  EXPECT_EQ(p->totals().span_ns(), uint64_t{(49 * 100 + 5) * 1000});
  EXPECT_EQ(p->totals().kernel_count(), 50u);
  auto json = reports::ProfileToJson(*p);
  ASSERT_TRUE(json.ok()) << json.status();
}

TEST(KinetoOutliers, FarOutlierOnTheEarlySideAndTwoClusters) {
  // Two bogus early events (ts near 0 while the run's clock reads 1.7e15 us), 40 real ones.
  const std::string events = Kernels(2, 1, 1) + Kernels(40, 1733011200000000.0, 10);
  auto t = ImportKinetoJsonBytes(Doc(events), "early.json", Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->activities_size(), 40);
  EXPECT_NE(Warnings(*t).find("2 GPU events lie far outside"), std::string::npos) << Warnings(*t);
}

TEST(KinetoOutliers, WindowsHoursApartAreNotOutliers) {
  // Two profiling windows two days apart, each about ten minutes long (a kernel a minute):
  // the gap is not 10^4 times the rest's extent, so both stay.
  std::string events;
  for (int i = 0; i < 10; ++i) {
    events += Kernels(1, 60e6 * i, 100 + i);               // window 1: 0..540 s
  }
  for (int i = 0; i < 12; ++i) {
    events += Kernels(1, 172800e6 + 60e6 * i, 200 + i);    // window 2: two days later
  }
  auto t = ImportKinetoJsonBytes(Doc(events), "windows.json", Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->activities_size(), 22);
  EXPECT_EQ(Warnings(*t).find("far outside"), std::string::npos) << Warnings(*t);
  auto p = Analyze({*t}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_GT(p->totals().span_ns(), uint64_t{172800} * 1000000000);
}

TEST(KinetoOutliers, SpanBeyondTwoToThe53IsWrittenWithAWarning) {
  // Two equal halves 200 days apart: no side is the outlier (equal counts), so the span is
  // past 2^53 ns, and the analysis warns and still writes it.
  const std::string events = Kernels(5, 1000, 1) + Kernels(5, 200 * 86400e6, 50);
  auto t = ImportKinetoJsonBytes(Doc(events), "halves.json", Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->activities_size(), 10);
  auto p = Analyze({*t}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_GT(p->totals().span_ns(), uint64_t{1} << 53);
  bool warned = false;
  for (const auto& w : p->warnings()) warned |= w.code() == "span_beyond_2_53";
  EXPECT_TRUE(warned);
  auto json = reports::ProfileToJson(*p);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_NE(json->find(absl::StrCat(p->totals().span_ns())), std::string::npos);
}

}  // namespace
}  // namespace qprof::importers
