// Shared pieces of the collector-through-the-seam tests: a fake GPU per test, the
// collector over it, and a summary of the trace it produced.
#ifndef QPROF_TESTS_PROFILER_CUPTI_COLLECTOR_TEST_UTIL_H_
#define QPROF_TESTS_PROFILER_CUPTI_COLLECTOR_TEST_UTIL_H_

#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "profiler/cupti/cupti_collector.h"
#include "proto/trace.pb.h"
#include "tests/profiler/cupti/fake/fake_cupti.h"

namespace qprof::profiler::cupti::testing {

class CollectorSeamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("QPROF_CUPTI_QUIET", "1", 1);
    fake_ = std::make_unique<fake::FakeCupti>(Devices());
  }
  virtual std::vector<fake::FakeDevice> Devices() { return {fake::FakeDevice{}}; }

  std::unique_ptr<Collector> Make(const CuptiOptions& options) {
    auto c = MakeCuptiCollector(options, *fake_);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  // Stop + Flush into a trace.
  proto::Trace Finish(Collector* c) {
    proto::Trace trace;
    EXPECT_TRUE(c->Stop().ok());
    EXPECT_TRUE(c->Flush(&trace).ok());
    return trace;
  }

  std::unique_ptr<fake::FakeCupti> fake_;
};

// (correlation id, graph node id) of every kernel, with how often it appears.
inline std::map<std::pair<uint64_t, uint64_t>, int> KernelKeys(const proto::Trace& t) {
  std::map<std::pair<uint64_t, uint64_t>, int> out;
  for (const proto::Activity& a : t.activities()) {
    if (a.kind() == proto::ACTIVITY_KIND_KERNEL) ++out[{a.correlation_id(), a.graph_node_id()}];
  }
  return out;
}

inline int CountKind(const proto::Trace& t, proto::ActivityKind kind) {
  int n = 0;
  for (const proto::Activity& a : t.activities()) n += a.kind() == kind;
  return n;
}

inline bool HasWarning(const proto::Trace& t, const std::string& part) {
  for (const std::string& w : t.header().collector().warnings()) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace qprof::profiler::cupti::testing

#endif  // QPROF_TESTS_PROFILER_CUPTI_COLLECTOR_TEST_UTIL_H_
