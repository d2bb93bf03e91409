// Communication, copies and waits on the shared real traces, against the tests' own sort and
// sweep over each trace's records and the raw documents and tables:
//   kineto/a100x2_nccl_allreduce  partly overlapped all-reduces and broadcasts with message
//                                 sizes ("In msg nelems" x dtype), DtoD copies and memsets;
//   nsys/h100x2_train_before      NCCL send/recv on two devices (no sizes in the export),
//                                 HtoD and DtoD copies with memory kinds, stream syncs;
//   nsys/rtx3080_mock, a100_saxpy copies: bytes and rates against the host link.
// The comm kernels of the oracle are those whose name says "nccl" (every comm kernel of these
// traces); exposed time is the explicit subtraction of the compute union from the comm union.
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "analysis/analyze.h"
#include "analysis/devices/device_specs.h"
#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/raw_kineto.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof {
namespace {

using importers::testing::TestDataDir;
using Intervals = std::vector<std::pair<int64_t, int64_t>>;

Intervals Union(Intervals iv) {
  std::sort(iv.begin(), iv.end());
  Intervals out;
  for (const auto& [s, e] : iv) {
    if (!out.empty() && s <= out.back().second) {
      out.back().second = std::max(out.back().second, e);
    } else {
      out.emplace_back(s, e);
    }
  }
  return out;
}

uint64_t Length(const Intervals& u) {
  uint64_t n = 0;
  for (const auto& [s, e] : u) n += static_cast<uint64_t>(e - s);
  return n;
}

// |a \ b| for two unions.
uint64_t Minus(const Intervals& a, const Intervals& b) {
  uint64_t n = 0;
  size_t j = 0;
  for (const auto& [s, e] : a) {
    int64_t cur = s;
    while (j < b.size() && b[j].second <= cur) ++j;
    for (size_t k = j; k < b.size() && b[k].first < e; ++k) {
      if (b[k].first > cur) n += static_cast<uint64_t>(b[k].first - cur);
      cur = std::max(cur, b[k].second);
      if (cur >= e) break;
    }
    if (cur < e) n += static_cast<uint64_t>(e - cur);
  }
  return n;
}

struct DeviceSweep {
  Intervals kernels, compute, comm, copies;
};

bool IsComm(const proto::Activity& a) {
  return absl::AsciiStrToLower(a.name()).find("nccl") != std::string::npos;
}

std::map<uint32_t, DeviceSweep> SweepDevices(const proto::Trace& t) {
  std::map<uint32_t, DeviceSweep> raw;
  for (const auto& a : t.activities()) {
    if (a.end_ns() < a.start_ns()) continue;
    DeviceSweep& d = raw[a.device_id()];
    const std::pair<int64_t, int64_t> iv{a.start_ns(), a.end_ns()};
    if (a.kind() == proto::ACTIVITY_KIND_KERNEL) {
      d.kernels.push_back(iv);
      (IsComm(a) ? d.comm : d.compute).push_back(iv);
    } else if (a.kind() == proto::ACTIVITY_KIND_MEMCPY || a.kind() == proto::ACTIVITY_KIND_MEMSET) {
      d.copies.push_back(iv);
    }
  }
  for (auto& [id, d] : raw) {
    d.kernels = Union(d.kernels);
    d.compute = Union(d.compute);
    d.comm = Union(d.comm);
    d.copies = Union(d.copies);
  }
  return raw;
}

// Checks Profile.comm and the per-GPU rows against the sweep; returns the exposed comm.
uint64_t ExpectOverlapMatches(const proto::Trace& t, const proto::Profile& p) {
  const auto sweep = SweepDevices(t);
  uint64_t total = 0, exposed = 0, copy = 0, copy_exposed = 0;
  for (const auto& [id, d] : sweep) {
    const proto::ProfileDevice* row = nullptr;
    for (const auto& pd : p.devices()) {
      if (pd.id() == id) row = &pd;
    }
    EXPECT_NE(row, nullptr) << "device " << id;
    if (row == nullptr) continue;
    const uint64_t dev_exposed = Minus(d.comm, d.compute);
    const uint64_t dev_copy_exposed = Minus(d.copies, d.kernels);
    EXPECT_EQ(row->comm_ns(), Length(d.comm)) << id;
    EXPECT_EQ(row->comm_exposed_ns(), dev_exposed) << id;
    EXPECT_EQ(row->compute_ns(), Length(d.compute)) << id;
    EXPECT_EQ(row->copy_ns(), Length(d.copies)) << id;
    EXPECT_EQ(row->copy_exposed_ns(), dev_copy_exposed) << id;
    if (!d.kernels.empty()) {
      const uint64_t span = static_cast<uint64_t>(d.kernels.back().second - d.kernels.front().first);
      EXPECT_EQ(row->span_ns(), span) << id;
      EXPECT_EQ(row->idle_ns(), span - Length(d.kernels)) << id;
    }
    total += Length(d.comm);
    exposed += dev_exposed;
    copy += Length(d.copies);
    copy_exposed += dev_copy_exposed;
  }
  EXPECT_EQ(p.comm().total_ns(), total);
  EXPECT_EQ(p.comm().exposed_ns(), exposed);
  EXPECT_EQ(p.comm().hidden_ns(), total - exposed);
  EXPECT_EQ(p.comm().copy_total_ns(), copy);
  EXPECT_EQ(p.comm().copy_exposed_ns(), copy_exposed);
  EXPECT_EQ(p.comm().error_ns(), 0u);
  return exposed;
}

// HTA's rule on each device gap, from the records' launch times (the importer's join is
// checked against the raw documents in importers_comm_import_test).
std::map<std::string, std::pair<uint64_t, uint64_t>> SweepCauses(const proto::Trace& t) {
  struct K {
    int64_t start, end, launch;
  };
  std::map<uint32_t, std::vector<K>> by_device;
  for (const auto& a : t.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL || a.end_ns() < a.start_ns()) continue;
    by_device[a.device_id()].push_back(
        {a.start_ns(), a.end_ns(), a.has_launch_ns() ? a.launch_ns() : INT64_MAX});
  }
  std::map<std::string, std::pair<uint64_t, uint64_t>> out;
  for (auto& [id, ks] : by_device) {
    std::sort(ks.begin(), ks.end(), [](const K& a, const K& b) {
      return a.start != b.start ? a.start < b.start : a.launch < b.launch;
    });
    int64_t ce = ks[0].end;
    for (size_t i = 1; i < ks.size(); ++i) {
      if (ks[i].start > ce) {
        const uint64_t g = static_cast<uint64_t>(ks[i].start - ce);
        const char* c = ks[i].launch == INT64_MAX ? "no_launch_time"
                        : ks[i].launch > ce       ? "host_wait"
                        : g < 30                  ? "kernel_wait"
                                                  : "other";
        out[c].first += 1;
        out[c].second += g;
      }
      ce = std::max(ce, ks[i].end);
    }
  }
  return out;
}

void ExpectCausesMatch(const proto::Trace& t, const proto::Profile& p) {
  auto want = SweepCauses(t);
  uint64_t sum = 0;
  for (const auto& r : p.idle().causes()) {
    EXPECT_EQ(r.gaps(), want[r.cause()].first) << r.cause();
    EXPECT_EQ(r.time_ns(), want[r.cause()].second) << r.cause();
    sum += r.time_ns();
  }
  EXPECT_EQ(sum, p.idle().idle_ns());
}

proto::Trace ImportOrDie(const std::string& path) {
  importers::ImportOptions io;
  io.progress = false;
  auto t = importers::ImportFile(path, io);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : proto::Trace();
}

const proto::CollectiveRow* Row(const proto::Profile& p, const std::string& name) {
  for (const auto& r : p.comm().collectives()) {
    if (r.name() == name) return &r;
  }
  return nullptr;
}

const proto::CopyRow* CopyOf(const proto::Profile& p, const std::string& kind,
                             const std::string& memory) {
  for (const auto& r : p.copies()) {
    if (r.kind() == kind && r.memory() == memory) return &r;
  }
  return nullptr;
}

TEST(CommRealTraces, A100AllReduceOverlapCollectivesAndCopies) {
  const std::string path = TestDataDir() + "/kineto/a100x2_nccl_allreduce.json.gz";
  if (TestDataDir().empty() || !std::filesystem::exists(path)) {
    GTEST_SKIP() << "test data not found: " << path << " (set QPROF_TESTDATA)";
  }
  const proto::Trace t = ImportOrDie(path);
  auto p = Analyze({t}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  const uint64_t exposed = ExpectOverlapMatches(t, *p);
  EXPECT_GT(exposed, 0u);
  EXPECT_LT(exposed, p->comm().total_ns());  // partly overlapped: both parts exist
  ExpectCausesMatch(t, *p);
  // Collectives from the raw document: calls, S = max(In, Out msg nelems) x sizeof(dtype)
  // (c10 names: Float 4 bytes, Long 8) per "Collective name"; times from the records.
  const testing_raw::RawTrace raw = testing_raw::ReadRaw(testing_raw::Gunzip(path));
  const std::map<std::string, uint64_t> sizes = {{"Float", 4}, {"Long", 8}};
  struct Want {
    uint64_t calls = 0, bytes = 0, time = 0, group = 0;
  };
  std::map<std::string, Want> want;  // allreduce, broadcast
  for (const auto& e : raw.events) {
    auto it = e.text_args.find("Collective name");
    if (e.cat != "kernel" || it == e.text_args.end()) continue;
    Want& w = want[it->second];
    ++w.calls;
    w.bytes += std::max(std::stoull(e.text_args.at("In msg nelems")),
                        std::stoull(e.text_args.at("Out msg nelems"))) *
               sizes.at(e.text_args.at("dtype"));
    w.group = std::stoull(e.text_args.at("Group size"));
  }
  for (const auto& a : t.activities()) {
    auto it = a.args().find("Collective name");
    if (it != a.args().end()) want[it->second].time += static_cast<uint64_t>(a.end_ns() - a.start_ns());
  }
  ASSERT_EQ(want.size(), 2u);
  // The trace's "NVIDIA A100-PG509-200" reports 39.4 GiB: the spec table's 40 GB row
  // (devices/identify.h), whose NVLink is the 80 GB one's and whose HBM is 1,555 GB/s.
  const devices::DeviceSpec* a100 = devices::FindDevice("a100-40gb");
  ASSERT_NE(a100, nullptr);
  ASSERT_EQ(p->roofs().device(), a100->name);
  for (const auto& [raw_name, w] : want) {
    const proto::CollectiveRow* r = Row(*p, raw_name == "allreduce" ? "all_reduce" : raw_name);
    ASSERT_NE(r, nullptr) << raw_name;
    EXPECT_EQ(r->calls(), w.calls);
    EXPECT_EQ(r->calls_with_bytes(), w.calls);
    EXPECT_EQ(r->bytes(), w.bytes);
    EXPECT_EQ(r->time_ns(), w.time);
    EXPECT_EQ(r->group_size(), w.group);
    EXPECT_EQ(r->process_group(), "0 (default_pg)");
    EXPECT_EQ(r->graph_calls(), 0u);
    const double algbw = static_cast<double>(w.bytes) / static_cast<double>(w.time);
    EXPECT_NEAR(r->algbw_gbps(), algbw, 1e-12);
    // n = 2: all-reduce 2(n-1)/n = 1, broadcast 1 (nccl-tests PERFORMANCE.md).
    EXPECT_NEAR(r->busbw_gbps(), algbw, 1e-12);
    EXPECT_EQ(r->link_peak_gbps(), a100->interconnect_gbps.value);  // NVLink 3
    EXPECT_NEAR(r->link_fraction(), algbw / a100->interconnect_gbps.value, 1e-12);
  }
  EXPECT_EQ(want["allreduce"].calls, 15u);  // the trace's figures, for the record
  EXPECT_EQ(want["allreduce"].bytes, 306684384u);
  // Copies: every memcpy is DtoD device -> device, every memset of device memory.
  std::map<std::string, std::pair<uint64_t, uint64_t>> raw_copies;  // name -> calls, bytes
  for (const auto& e : raw.events) {
    if (e.cat == "gpu_memcpy" || e.cat == "gpu_memset") {
      raw_copies[e.name].first += 1;
      raw_copies[e.name].second += e.bytes.value_or(0);
    }
  }
  uint64_t dtod_time = 0;
  for (const auto& a : t.activities()) {
    if (a.kind() == proto::ACTIVITY_KIND_MEMCPY) dtod_time += static_cast<uint64_t>(a.end_ns() - a.start_ns());
  }
  const proto::CopyRow* dtod = CopyOf(*p, "DtoD", "device -> device");
  ASSERT_NE(dtod, nullptr);
  EXPECT_EQ(dtod->calls(), raw_copies["Memcpy DtoD (Device -> Device)"].first);
  EXPECT_EQ(dtod->bytes(), raw_copies["Memcpy DtoD (Device -> Device)"].second);
  EXPECT_EQ(dtod->time_ns(), dtod_time);
  EXPECT_NEAR(dtod->gbps(), static_cast<double>(dtod->bytes()) / static_cast<double>(dtod_time), 1e-12);
  EXPECT_EQ(dtod->link_peak_gbps(), a100->memory_bandwidth_gbps.value / 2);
  const proto::CopyRow* ms = CopyOf(*p, "memset", "device");
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ(ms->calls(), raw_copies["Memset (Device)"].first);
  EXPECT_EQ(ms->bytes(), raw_copies["Memset (Device)"].second);
  // Host: 24 cudaEventSynchronize and 1 cudaDeviceSynchronize block the host.
  EXPECT_EQ(p->idle().host().sync_calls(), 25u);
  // One device: no sum across GPUs to declare.
  EXPECT_EQ(p->idle().device_timelines(), 1u);
}

double Query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
  double v = NAN;
  if (st && sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_double(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

// One copy row against the raw MEMCPY table: copyKind and memory kinds by nsys's numbering.
void ExpectCopyRow(const proto::Profile& p, const std::string& path, int copy_kind, int src,
                   int dst, const std::string& kind, const std::string& memory) {
  const std::string where = " FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = " +
                            std::to_string(copy_kind) + " AND srcKind = " + std::to_string(src) +
                            " AND dstKind = " + std::to_string(dst);
  const proto::CopyRow* r = CopyOf(p, kind, memory);
  ASSERT_NE(r, nullptr) << kind << " " << memory;
  EXPECT_EQ(static_cast<double>(r->calls()), Query(path, "SELECT COUNT(*)" + where));
  EXPECT_EQ(static_cast<double>(r->bytes()), Query(path, "SELECT SUM(bytes)" + where));
  EXPECT_EQ(static_cast<double>(r->time_ns()), Query(path, "SELECT SUM(\"end\" - start)" + where));
  EXPECT_NEAR(r->gbps(), static_cast<double>(r->bytes()) / static_cast<double>(r->time_ns()), 1e-12);
}

TEST(CommRealTraces, H100TrainNcclOnTwoDevicesCopiesAndSyncs) {
  const std::string path = TestDataDir() + "/nsys/h100x2_train_before.sqlite";
  if (TestDataDir().empty() || !std::filesystem::exists(path)) {
    GTEST_SKIP() << "test data not found: " << path << " (set QPROF_TESTDATA)";
  }
  const proto::Trace t = ImportOrDie(path);
  auto p = Analyze({t}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  ExpectOverlapMatches(t, *p);
  ExpectCausesMatch(t, *p);
  EXPECT_EQ(p->comm().per_device_size(), 2);
  EXPECT_EQ(p->idle().device_timelines(), 2u);
  // NCCL send/recv on both devices; the export has NCCL's NVTX ranges but no payloads, so
  // the message size is unknown and said.
  const proto::CollectiveRow* sr = Row(*p, "send_recv");
  ASSERT_NE(sr, nullptr);
  const std::string nccl = " FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON "
                           "s.id = k.demangledName WHERE s.value LIKE 'ncclDevKernel_SendRecv%'";
  EXPECT_EQ(static_cast<double>(sr->calls()), Query(path, "SELECT COUNT(*)" + nccl));
  EXPECT_EQ(static_cast<double>(sr->time_ns()), Query(path, "SELECT SUM(k.\"end\" - k.start)" + nccl));
  EXPECT_EQ(sr->devices(), 2u);
  EXPECT_EQ(sr->calls_with_bytes(), 0u);
  EXPECT_FALSE(sr->has_algbw_gbps());
  EXPECT_EQ(sr->bytes_source().rfind("unknown", 0), 0u);
  EXPECT_EQ(p->comm().collectives_size(), 1);
  // Copies by kind and memory (ENUM_CUDA_MEM_KIND: 0 pageable, 2 device).
  ExpectCopyRow(*p, path, 1, 0, 2, "HtoD", "pageable -> device");
  ExpectCopyRow(*p, path, 8, 2, 2, "DtoD", "device -> device");
  const proto::CopyRow* ms = CopyOf(*p, "memset", "device");
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ(static_cast<double>(ms->calls()),
            Query(path, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE memKind = 2"));
  // The host blocks in cudaStreamSynchronize only (cudaEventQuery polls, cudaStreamWaitEvent
  // makes the GPU wait).
  const auto& h = p->idle().host();
  ASSERT_EQ(h.sync_size(), 1);
  EXPECT_EQ(h.sync(0).kind(), "stream_synchronize");
  const std::string ss = " FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                         "WHERE s.value = 'cudaStreamSynchronize_v3020'";
  EXPECT_EQ(static_cast<double>(h.sync(0).calls()), Query(path, "SELECT COUNT(*)" + ss));
  EXPECT_EQ(static_cast<double>(h.sync(0).time_ns()), Query(path, "SELECT SUM(r.\"end\" - r.start)" + ss));
}

TEST(CommRealTraces, CopiesAgainstTheHostLink) {
  const std::string a100 = TestDataDir() + "/nsys/a100_saxpy_mpi_nvtx.sqlite";
  const std::string rtx = TestDataDir() + "/nsys/rtx3080_mock.sqlite";
  if (TestDataDir().empty() || !std::filesystem::exists(a100) || !std::filesystem::exists(rtx)) {
    GTEST_SKIP() << "test data not found in " << TestDataDir() << " (set QPROF_TESTDATA)";
  }
  // a100_saxpy (schema 2.9.1, no ENUM table): pageable host memory both ways. Its "NVIDIA
  // A100-SXM4-40GB" is the spec table's 40 GB row, by name: the host link is its PCIe Gen4.
  const proto::Trace saxpy = ImportOrDie(a100);
  auto p = Analyze({saxpy}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  ExpectCopyRow(*p, a100, 1, 0, 2, "HtoD", "pageable -> device");
  ExpectCopyRow(*p, a100, 2, 2, 0, "DtoH", "device -> pageable");
  const devices::DeviceSpec* spec = devices::FindDevice("a100-40gb");
  ASSERT_NE(spec, nullptr);
  const proto::CopyRow* h2d = CopyOf(*p, "HtoD", "pageable -> device");
  EXPECT_EQ(h2d->link_peak_gbps(), spec->host_link_gbps.value);
  EXPECT_NEAR(h2d->link_fraction(), h2d->gbps() / spec->host_link_gbps.value, 1e-12);
  // rtx3080_mock: one DtoH to pinned memory against the RTX 3080's PCIe Gen4 host link.
  auto q = Analyze({ImportOrDie(rtx)}, {});
  ASSERT_TRUE(q.ok()) << q.status();
  ExpectCopyRow(*q, rtx, 2, 2, 1, "DtoH", "device -> pinned");
  const proto::CopyRow* d2h = CopyOf(*q, "DtoH", "device -> pinned");
  const devices::DeviceSpec* rtx3080 = devices::FindDevice("rtx-3080");
  ASSERT_NE(rtx3080, nullptr);
  EXPECT_EQ(d2h->link_peak_gbps(), rtx3080->host_link_gbps.value);
  EXPECT_EQ(d2h->link().rfind("unknown", 0), std::string::npos) << d2h->link();
  // The same export with a GPU the table cannot place (no name, no properties): the row says
  // it has no link figure instead of inventing one.
  proto::Trace blank = ImportOrDie(rtx);
  for (auto& d : *blank.mutable_header()->mutable_devices()) {
    d.set_name("");
    d.set_sm_count(0);
    d.set_memory_bytes(0);
  }
  auto u = Analyze({blank}, {});
  ASSERT_TRUE(u.ok()) << u.status();
  const proto::CopyRow* unknown = CopyOf(*u, "DtoH", "device -> pinned");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->link_peak_gbps(), 0);
  EXPECT_EQ(unknown->link().rfind("unknown", 0), 0u) << unknown->link();
}

}  // namespace
}  // namespace qprof
