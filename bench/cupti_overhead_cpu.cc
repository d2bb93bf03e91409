// CPU cost per record of what the collector does with CUPTI's records, on this machine,
// without a GPU: walking buffers (libcupti's own cuptiActivityGetNextRecord), decoding
// and attributing (ActivityDecoder), and writing .qtrace chunks (the injection library's
// hand-written encoder), plus protobuf's serializer for the in-process path, for
// comparison. Input: real CUpti_ActivityKernel10 + CUpti_ActivityAPI records (one launch
// each) in 8 MiB buffers, 200 distinct mangled kernel names, an NVTX push/pop around
// every 50 launches; as CUPTI would deliver a decode loop.
//
//   bench_cupti_record_cpu [launches=1000000] [repeats=5]
// Prints each stage's median over the repeats, in ns per launch (= ms per million
// launches) of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID: what the collector's
// worker would spend, and less disturbed than wall time on a shared machine), the wall
// time beside it, and the load average.
#include <cupti_runtime_cbid.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fmt/core.h"
#include "profiler/cupti/activity_buffer.h"
#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/cupti_api.h"
#include "profiler/trace_data_proto.h"
#include "profiler/trace_wire.h"

namespace {

using qprof::profiler::ActivityData;
using qprof::profiler::FrameEncoder;
using qprof::profiler::cupti::ActivityDecoder;
using qprof::profiler::cupti::DecodedBatch;
// This thread's CPU time and the wall clock, read together.
struct Clock {
  struct time_point {
    double cpu_ns;
    double wall_ns;
  };
  static time_point now() {
    timespec cpu;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    const double wall = std::chrono::duration<double, std::nano>(
        std::chrono::steady_clock::now().time_since_epoch()).count();
    return {cpu.tv_sec * 1e9 + cpu.tv_nsec, wall};
  }
};

constexpr size_t kBufferBytes = 8u << 20;

struct Buffers {
  std::vector<std::vector<uint8_t>> data;  // each filled to `used`
  std::vector<size_t> used;
};

template <typename T>
void Put(Buffers* b, const T& record) {
  const size_t size = (sizeof(T) + 7) / 8 * 8;
  if (b->data.empty() || b->used.back() + size > kBufferBytes) {
    b->data.emplace_back(kBufferBytes);
    b->used.push_back(0);
  }
  std::memcpy(b->data.back().data() + b->used.back(), &record, sizeof(T));
  b->used.back() += size;
}

Buffers MakeRecords(size_t launches, const std::vector<std::string>& names) {
  Buffers b;
  uint64_t t = 1'000'000'000;
  for (size_t i = 0; i < launches; ++i) {
    const uint32_t corr = static_cast<uint32_t>(i + 1);
    if (i % 50 == 0) {
      CUpti_ActivityMarker2 m;
      std::memset(&m, 0, sizeof(m));
      m.kind = CUPTI_ACTIVITY_KIND_MARKER;
      m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
      m.timestamp = t++;
      m.id = static_cast<uint32_t>(i / 50 + 1);
      m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
      m.objectId.pt.threadId = 7;
      m.name = "layer";
      Put(&b, m);
    }
    CUpti_ActivityAPI api;
    std::memset(&api, 0, sizeof(api));
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    api.start = t;
    api.end = t + 300;
    api.threadId = 7;
    api.correlationId = corr;
    Put(&b, api);
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = names[i % names.size()].c_str();
    k.start = t + 1000;
    k.end = t + 3000;
    k.correlationId = corr;
    k.streamId = 7;
    k.gridX = 132; k.gridY = k.gridZ = 1;
    k.blockX = 256; k.blockY = k.blockZ = 1;
    k.registersPerThread = 64;
    Put(&b, k);
    t += 4000;
    if (i % 50 == 49) {
      CUpti_ActivityMarker2 m;
      std::memset(&m, 0, sizeof(m));
      m.kind = CUPTI_ACTIVITY_KIND_MARKER;
      m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
      m.timestamp = t++;
      m.id = static_cast<uint32_t>(i / 50 + 1);
      m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
      m.objectId.pt.threadId = 7;
      Put(&b, m);
    }
  }
  return b;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const size_t launches = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) {
    names.push_back("_ZN5flash13flash_fwd_kernelILi" + std::to_string(i) +
                    "ELb1EEEvNS_6ParamsEPKfS3_i");
  }
  Buffers buffers = MakeRecords(launches, names);
  auto& api = qprof::profiler::cupti::RealCuptiApi();
  std::vector<double> walk_decode, attribute, encode, write_file, proto_path, wall_total;
  uint64_t bytes = 0, demangled = 0;
  for (int r = 0; r < repeats; ++r) {
    ActivityDecoder decoder;
    auto t0 = Clock::now();
    for (size_t i = 0; i < buffers.data.size(); ++i) {
      qprof::profiler::cupti::DecodeActivityBuffer(api, buffers.data[i].data(), buffers.used[i], &decoder);
    }
    auto t1 = Clock::now();
    DecodedBatch batch;
    decoder.TakeReady(&batch, true);
    auto t2 = Clock::now();
    FrameEncoder enc;
    std::string out;
    for (size_t i = 0; i < batch.activities.size(); i += 4096) {
      const size_t n = std::min<size_t>(4096, batch.activities.size() - i);
      enc.Chunk(batch.activities.data() + i, n, nullptr, 0, &out);
    }
    auto t3 = Clock::now();
    bytes = out.size();
    demangled = decoder.stats().demangled;
    // The streaming writer to a file (page cache; no fsync until the footer).
    const std::string path = "/tmp/qprof_bench_record_cpu.qtrace";
    std::unique_ptr<qprof::profiler::WireTraceWriter> w;
    if (!qprof::profiler::WireTraceWriter::Open(path, &w).ok()) return 1;
    (void)w->WriteHeader(qprof::profiler::HeaderData{});
    std::vector<std::vector<ActivityData>> chunks;  // as the worker hands them over
    for (size_t i = 0; i < batch.activities.size(); i += 4096) {
      const size_t n = std::min<size_t>(4096, batch.activities.size() - i);
      chunks.emplace_back(batch.activities.begin() + i, batch.activities.begin() + i + n);
    }
    auto t4 = Clock::now();
    for (const auto& chunk : chunks) (void)w->WriteChunk(chunk, {});
    auto t5 = Clock::now();
    w.reset();
    std::remove((path + ".partial").c_str());
    // In-process path: protobuf messages, serialized.
    auto t6 = Clock::now();
    qprof::proto::TraceChunk pchunk;
    std::string pout;
    for (size_t i = 0; i < batch.activities.size(); ++i) {
      qprof::profiler::ToProto(batch.activities[i], pchunk.add_activities());
      if (pchunk.activities_size() == 4096 || i + 1 == batch.activities.size()) {
        pchunk.AppendToString(&pout);
        pchunk.Clear();
      }
    }
    auto t7 = Clock::now();
    auto ns = [&](Clock::time_point a, Clock::time_point b) {
      return (b.cpu_ns - a.cpu_ns) / static_cast<double>(launches);
    };
    wall_total.push_back(((t2.wall_ns - t0.wall_ns) + (t5.wall_ns - t4.wall_ns)) /
                         static_cast<double>(launches));
    walk_decode.push_back(ns(t0, t1));
    attribute.push_back(ns(t1, t2));
    encode.push_back(ns(t2, t3));
    write_file.push_back(ns(t4, t5));
    proto_path.push_back(ns(t6, t7));
  }
  double load[3] = {0, 0, 0};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    std::fclose(f);
  }
  fmt::print("bench_cupti_record_cpu: {} launches (kernel + runtime API record each, NVTX every 50), "
             "{} buffers of 8 MiB, median of {} runs; {} names demangled; load average {:.2f}\n",
             launches, buffers.data.size(), repeats, demangled, load[0]);
  fmt::print("  {:<48} {:>12}\n", "stage (thread CPU time)", "ns per launch = ms per million");
  auto row = [](const char* stage, double ns_per) {
    fmt::print("  {:<48} {:8.1f}\n", stage, ns_per);
  };
  row("walk + decode (cuptiActivityGetNextRecord)", Median(walk_decode));
  row("attribute (correlation, NVTX) and hand out", Median(attribute));
  row("encode .qtrace chunks (trace_wire, in memory)", Median(encode));
  row("encode + write chunks to a file (page cache)", Median(write_file));
  row("in-process: to protobuf + serialize", Median(proto_path));
  row("injection library total (walk..write)",
      Median(walk_decode) + Median(attribute) + Median(write_file));
  fmt::print("  same, wall time                                  {:8.1f}\n", Median(wall_total));
  fmt::print("  encoded size: {:.1f} bytes per kernel\n", static_cast<double>(bytes) / launches);
  return 0;
}
