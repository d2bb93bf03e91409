// What the importers read for communication, copies and waits: each activity's launch time
// (the runtime call with its correlation id), the memory kinds of copies and memsets, and the
// host's synchronising calls; on hand-made Kineto and nsys inputs faithful to the formats
// (libkineto's "Memcpy {kind} ({src} -> {dst})" names; nsys's srcKind / dstKind / memKind
// columns and ENUM_CUDA_MEM_KIND; "_v3020"-suffixed runtime names), and on the shared traces
// against their raw tables.
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "analysis/analyze.h"
#include "analysis/importers/import.h"
#include "analysis/importers/kineto/kineto_importer.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/raw_kineto.h"
#include "tests/analysis/importers/sqlite_fixture.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

ImportOptions Quiet() {
  ImportOptions o;
  o.progress = false;
  return o;
}

const proto::Activity* Find(const proto::Trace& t, const std::string& name) {
  for (const auto& a : t.activities()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::map<std::string, std::pair<uint64_t, uint64_t>> SyncOf(const proto::Trace& t) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> out;
  for (const auto& s : t.header().host_calls().sync()) out[s.kind()] = {s.calls(), s.ns()};
  return out;
}

constexpr char kKineto[] = R"J({
  "schemaVersion": 1,
  "traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11,
     "ts": 100.25, "dur": 3, "args": {"correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 110, "dur": 5,
     "args": {"correlation": 1, "device": 0, "stream": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 10, "tid": 11,
     "ts": 120, "dur": 2, "args": {"correlation": 2}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy PtoP (Device -> Device)", "pid": 0,
     "tid": 9, "ts": 125, "dur": 4, "args": {"correlation": 2, "device": 0, "stream": 9, "bytes": 65536}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0,
     "tid": 9, "ts": 130, "dur": 2, "args": {"correlation": 3, "device": 0, "stream": 9, "bytes": 64}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 140,
     "dur": 1, "args": {"correlation": 4, "device": 0, "stream": 7, "bytes": 1024}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 10, "tid": 11,
     "ts": 150, "dur": 40, "args": {"correlation": 5}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpy", "pid": 10, "tid": 11,
     "ts": 200, "dur": 7.5, "args": {"correlation": 6}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 10, "tid": 11,
     "ts": 210, "dur": 1, "args": {"correlation": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventQuery", "pid": 10, "tid": 11,
     "ts": 212, "dur": 1, "args": {"correlation": 8}},
    {"ph": "X", "cat": "cuda_driver", "name": "cuCtxSynchronize", "pid": 10, "tid": 11,
     "ts": 220, "dur": 2, "args": {"correlation": 9}}
  ]
})J";

TEST(CommImport, KinetoLaunchTimesMemoryKindsAndSyncCalls) {
  auto t = ImportKinetoJsonBytes(kKineto, "comm.json", Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  const proto::Activity* k = Find(*t, "gemm");
  ASSERT_NE(k, nullptr);
  ASSERT_TRUE(k->has_launch_ns());
  EXPECT_EQ(k->launch_ns(), 100250);  // the cudaLaunchKernel with correlation 1, in ns
  const proto::Activity* p2p = Find(*t, "Memcpy PtoP (Device -> Device)");
  ASSERT_NE(p2p, nullptr);
  EXPECT_EQ(p2p->copy_kind(), "PtoP");
  EXPECT_EQ(p2p->src_memory(), "device");
  EXPECT_EQ(p2p->dst_memory(), "device");
  EXPECT_EQ(p2p->launch_ns(), 120000);
  const proto::Activity* d2h = Find(*t, "Memcpy DtoH (Device -> Pinned)");
  ASSERT_NE(d2h, nullptr);
  EXPECT_EQ(d2h->dst_memory(), "pinned");
  EXPECT_FALSE(d2h->has_launch_ns());  // correlation 3 has no runtime event
  const proto::Activity* ms = Find(*t, "Memset (Device)");
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ(ms->dst_memory(), "device");
  EXPECT_EQ(ms->src_memory(), "");
  // Blocking calls only: stream sync 40 us, the synchronous cudaMemcpy 7.5 us, the driver's
  // context sync 2 us; cudaStreamWaitEvent (the GPU waits) and cudaEventQuery (a poll) not.
  auto sync = SyncOf(*t);
  EXPECT_EQ(sync.size(), 3u);
  EXPECT_EQ(sync["stream_synchronize"], std::make_pair(uint64_t{1}, uint64_t{40000}));
  EXPECT_EQ(sync["synchronous_copy"], std::make_pair(uint64_t{1}, uint64_t{7500}));
  EXPECT_EQ(sync["device_synchronize"], std::make_pair(uint64_t{1}, uint64_t{2000}));
}

using testing::MakeDb;

TEST(CommImport, NsysLaunchTimesMemoryKindsAndSyncCalls) {
  const std::string gpid = std::to_string(int64_t{100} << 24);
  const std::string gtid = std::to_string((int64_t{100} << 24) | 101);
  std::string sql = R"(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
    INSERT INTO StringIds VALUES (1, 'gemm(int)'), (2, 'cudaLaunchKernel_v7000'),
      (3, 'cudaMemcpyAsync_v3020'), (4, 'cudaStreamSynchronize_v3020'), (5, 'cudaMemcpy_v3020'),
      (6, 'cudaEventQuery_v3020'), (7, 'cuMemcpyDtoH_v2');
    CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
    INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),
      (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'), (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device');
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 1500, 0, 7, 1, )" + gpid + R"(, 1);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER,
      srcKind INTEGER, dstKind INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES
      (2000, 2100, 0, 8, 2, )" + gpid + R"(, 4096, 1, 0, 2),
      (2200, 2250, 0, 8, 3, )" + gpid + R"(, 512, 10, 2, 2);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, memKind INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (2300, 2310, 0, 8, 4, )" + gpid + R"(, 64, 2);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
      correlationId INTEGER, nameId INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
      (900, 950, )" + gtid + R"(, 1, 2), (1900, 1950, )" + gtid + R"(, 2, 3),
      (3000, 3900, )" + gtid + R"(, 10, 4), (4000, 4300, )" + gtid + R"(, 11, 5),
      (4400, 4410, )" + gtid + R"(, 12, 6), (4500, 4600, )" + gtid + R"(, 13, 7);
  )";
  auto t = ImportFile(MakeDb("comm.sqlite", sql), Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  const proto::Activity* k = Find(*t, "gemm(int)");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->launch_ns(), 900);
  const proto::Activity* h2d = Find(*t, "Memcpy HtoD");
  ASSERT_NE(h2d, nullptr);
  EXPECT_EQ(h2d->src_memory(), "pageable");  // the export's own label, lower-cased
  EXPECT_EQ(h2d->dst_memory(), "device");
  EXPECT_EQ(h2d->launch_ns(), 1900);
  const proto::Activity* p2p = Find(*t, "Memcpy PtoP");
  ASSERT_NE(p2p, nullptr);
  EXPECT_FALSE(p2p->has_launch_ns());  // correlation 3: no runtime row
  const proto::Activity* ms = Find(*t, "Memset");
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ(ms->dst_memory(), "device");
  auto sync = SyncOf(*t);
  EXPECT_EQ(sync.size(), 2u);
  EXPECT_EQ(sync["stream_synchronize"], std::make_pair(uint64_t{1}, uint64_t{900}));
  // cudaMemcpy_v3020 (300 ns) and the driver's cuMemcpyDtoH_v2 (100 ns) block; the query not.
  EXPECT_EQ(sync["synchronous_copy"], std::make_pair(uint64_t{2}, uint64_t{400}));
}

// Without ENUM_CUDA_MEM_KIND (older exports) nsys's own numbering applies: 0 pageable.
TEST(CommImport, NsysMemoryKindsWithoutTheEnumTable) {
  std::string sql = R"(
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER,
      srcKind INTEGER, dstKind INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (10, 20, 0, 1, 1, 0, 8, 2, 2, 1),
      (30, 40, 0, 1, 2, 0, 8, 2, 2, 42);
  )";
  auto t = ImportFile(MakeDb("noenum.sqlite", sql), Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->activities_size(), 2);
  EXPECT_EQ(t->activities(0).src_memory(), "device");
  EXPECT_EQ(t->activities(0).dst_memory(), "pinned");
  EXPECT_EQ(t->activities(1).dst_memory(), "unknown");
}

// The shared 2x A100 trace: every kernel's launch time is its cuda_runtime event's ts (same
// correlation id), read from the raw document; the synchronising calls are its raw events'.
TEST(CommImport, A100LaunchTimesAndSyncCallsAgreeWithTheRawDocument) {
  const std::string path = testing::TestDataDir() + "/kineto/a100x2_nccl_allreduce.json.gz";
  if (testing::TestDataDir().empty() || !std::filesystem::exists(path)) {
    GTEST_SKIP() << "test data not found: " << path << " (set QPROF_TESTDATA)";
  }
  auto t = ImportFile(path, Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  const testing_raw::RawTrace raw = testing_raw::ReadRaw(testing_raw::Gunzip(path));
  std::map<uint64_t, double> runtime_ts, kernel_ts;  // correlation -> us
  uint64_t sync_calls = 0;
  double sync_us = 0;
  for (const auto& e : raw.events) {
    if (e.cat == "cuda_runtime" && e.correlation) runtime_ts[*e.correlation] = e.ts;
    if (e.cat == "kernel" && e.correlation) kernel_ts[*e.correlation] = e.ts;
    if (e.cat == "cuda_runtime" &&
        (e.name == "cudaEventSynchronize" || e.name == "cudaDeviceSynchronize" ||
         e.name == "cudaStreamSynchronize")) {
      ++sync_calls;
      sync_us += e.dur;
    }
  }
  uint64_t checked = 0;
  for (const auto& a : t->activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    auto it = runtime_ts.find(a.correlation_id());
    ASSERT_NE(it, runtime_ts.end()) << a.name();
    ASSERT_TRUE(a.has_launch_ns());
    // Launch to start, both shifted by baseTimeNanoseconds alike: the raw ts read as doubles
    // (~1 ns apart at this magnitude) against the importer's exact decimals.
    const double want = (kernel_ts.at(a.correlation_id()) - it->second) * 1000;
    EXPECT_NEAR(static_cast<double>(a.start_ns() - a.launch_ns()), want, 3.0) << a.name();
    ++checked;
  }
  EXPECT_EQ(checked, 2700u);
  auto sync = SyncOf(*t);
  uint64_t calls = 0, ns = 0;
  for (const auto& [kind, v] : sync) {
    EXPECT_TRUE(kind == "event_synchronize" || kind == "device_synchronize") << kind;
    calls += v.first;
    ns += v.second;
  }
  EXPECT_EQ(calls, sync_calls);
  EXPECT_EQ(calls, 25u);  // 24 cudaEventSynchronize + 1 cudaDeviceSynchronize
  EXPECT_NEAR(static_cast<double>(ns), sync_us * 1000, static_cast<double>(sync_calls));
}


// A long nsys trace: 40000 kernels with gaps on one device (the kernel union folds twice) and
// copies over its whole length. Copies are read before kernels, so the union of kernels and
// copies stays exact: the exposed copy time is the hand count, with no error bound.
TEST(CommImport, NsysCopiesStayExactWhenKernelsFold) {
  std::string sql = R"(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
    INSERT INTO StringIds VALUES (1, 'k');
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER);
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 39999)
      INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT i * 100, i * 100 + 60, 0, 7, i, 0, 1 FROM n;
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER,
      srcKind INTEGER, dstKind INTEGER);
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99)
      INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT i * 40000 + 50, i * 40000 + 90, 0, 8,
        100000 + i, 0, 64, 1, 0, 2 FROM n;
  )";
  auto t = ImportFile(MakeDb("fold.sqlite", sql), Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  auto p = Analyze({*t}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  // Each copy [40000 i + 50, + 90) overlaps kernel 400 i ([.. + 0, + 60)) for 10 ns: 30 exposed.
  EXPECT_EQ(p->comm().copy_total_ns(), 100u * 40);
  EXPECT_EQ(p->comm().copy_exposed_ns(), 100u * 30);
  EXPECT_EQ(p->comm().error_ns(), 0u);
}

}  // namespace
}  // namespace qprof::importers
