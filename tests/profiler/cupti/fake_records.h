// Builders for real CUPTI activity record structs (CUDA 13.0 versions), laid out in a
// byte buffer the way CUPTI hands them over, for decoding tests on a CPU.
#ifndef QPROF_TESTS_PROFILER_CUPTI_FAKE_RECORDS_H_
#define QPROF_TESTS_PROFILER_CUPTI_FAKE_RECORDS_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include <cupti_activity.h>

namespace qprof::profiler::cupti::testing {

inline CUpti_ActivityKernel10 Kernel(const char* name, uint64_t start, uint64_t end,
                                     uint32_t correlation, uint32_t stream = 7,
                                     uint32_t graph_id = 0) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.start = start;
  k.end = end;
  k.correlationId = correlation;
  k.deviceId = 0;
  k.streamId = stream;
  k.gridX = 132; k.gridY = 3; k.gridZ = 1;
  k.blockX = 256; k.blockY = 1; k.blockZ = 1;
  k.registersPerThread = 96;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 49152;
  k.graphId = graph_id;
  k.graphNodeId = graph_id ? 1000 + correlation : 0;
  return k;
}

inline CUpti_ActivityAPI Api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start,
                             uint64_t end, uint32_t tid, uint32_t correlation) {
  CUpti_ActivityAPI a;
  std::memset(&a, 0, sizeof(a));
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = 4242;
  a.threadId = tid;
  a.correlationId = correlation;
  return a;
}

inline CUpti_ActivityMarker2 Marker(bool start, uint32_t id, const char* name, uint64_t ts,
                                    uint32_t tid, const char* domain = nullptr) {
  CUpti_ActivityMarker2 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = start ? CUPTI_ACTIVITY_FLAG_MARKER_START : CUPTI_ACTIVITY_FLAG_MARKER_END;
  m.timestamp = ts;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 4242;
  m.objectId.pt.threadId = tid;
  m.name = start ? name : nullptr;
  m.domain = domain;
  return m;
}

inline CUpti_ActivityMemcpy6 Memcpy(uint8_t copy_kind, uint64_t bytes, uint64_t start,
                                    uint64_t end, uint32_t correlation) {
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = copy_kind;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.streamId = 7;
  m.correlationId = correlation;
  return m;
}

// Records packed back to back, 8-byte aligned, as in a CUPTI buffer.
class FakeBuffer {
 public:
  template <typename Record>
  void Append(const Record& r) {
    const size_t at = bytes_.size();
    bytes_.resize(at + (sizeof(Record) + 7) / 8 * 8, 0);
    std::memcpy(bytes_.data() + at, &r, sizeof(Record));
    offsets_.push_back(at);
  }
  // Pointers to each record, as cuptiActivityGetNextRecord would yield them.
  std::vector<const CUpti_Activity*> Records() const {
    std::vector<const CUpti_Activity*> out;
    for (size_t at : offsets_) {
      out.push_back(reinterpret_cast<const CUpti_Activity*>(bytes_.data() + at));
    }
    return out;
  }

 private:
  std::vector<uint8_t> bytes_;  // operator new memory: aligned for any record
  std::vector<size_t> offsets_;
};

}  // namespace qprof::profiler::cupti::testing

#endif  // QPROF_TESTS_PROFILER_CUPTI_FAKE_RECORDS_H_
