// Turns CUPTI activity records into trace records (proto::Activity, proto::NvtxRange,
// proto::DeviceInfo) plus collector statistics. No CUPTI calls happen here: the input is
// a record pointer (what cuptiActivityGetNextRecord yields, or a struct a test built), so
// the whole decoding and correlation path runs on a CPU.
//
// Record versions are those of the CUPTI headers we build against (CUDA 13.0):
// CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4, CUpti_ActivityAPI,
// CUpti_ActivityMarker2, CUpti_ActivityMarkerData2, CUpti_ActivityOverhead3,
// CUpti_ActivityExternalCorrelation, CUpti_ActivityDevice5. CUPTI emits the versions
// matching the header version the client was compiled with.
//
// Correlation (see LaunchIndex): a kernel/memcpy/memset record carries the correlation
// id of the runtime or driver API call that launched it. Several GPU records may share
// one id: a cudaGraphLaunch produces one API record and one kernel record per graph
// node. Each of them gets the thread, process and NVTX path of that one launch call.
// GPU records whose launch record is missing (API tracing off, or the record was dropped)
// keep an empty path and are counted in `unattributed()`.
//
// Thread-safety: none; the collector serialises Add() calls under its own lock.
// Memory: strings (kernel names, marker names) are copied out of the record at Add(),
// so buffers can be returned to CUPTI right after.
#ifndef QPROF_PROFILER_CUPTI_ACTIVITY_DECODER_H_
#define QPROF_PROFILER_CUPTI_ACTIVITY_DECODER_H_

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include <cupti_activity.h>

#include "profiler/cupti/nvtx_ranges.h"
#include "proto/trace.pb.h"

namespace qprof::profiler::cupti {

// Where and when a correlation id's API call ran.
struct LaunchInfo {
  uint32_t pid = 0;
  uint64_t tid = 0;
  int64_t start_ns = 0;
  uint32_t cbid = 0;
  bool runtime = false;  // runtime API (true) or driver API (false)
};

// correlation id -> launch call. When both a runtime and a driver record carry the same
// id (the driver call made inside a runtime call), the earlier start wins: it is the
// outer call, the one the user wrote.
struct LaunchIndex {
  std::unordered_map<uint32_t, LaunchInfo> by_correlation;
  void Add(uint32_t correlation_id, const LaunchInfo& info);
  const LaunchInfo* Find(uint32_t correlation_id) const;
};

struct DecoderStats {
  uint64_t records_total = 0;      // every record handed to Add()
  uint64_t records_invalid = 0;    // GPU records with start == 0 or end <= start
  uint64_t records_unknown = 0;    // kinds we do not decode
  uint64_t records_outside_window = 0;  // dropped by the --duration window
  uint64_t overhead_ns = 0;        // sum of OVERHEAD records' durations
  uint64_t kernels = 0;
  uint64_t graph_kernels = 0;      // kernel records with a nonzero graph id
  uint64_t unattributed = 0;       // GPU records with no launch record for their id
  uint64_t over_cap = 0;           // GPU records left out past max_activities
};

class ActivityDecoder {
 public:
  // Decodes one record. Unknown kinds are counted and skipped. Never throws on bad
  // input (a null record counts as invalid).
  void Add(const CUpti_Activity* record);

  // Keeps only GPU records that start in [begin, end) (the --duration window); API and
  // marker records are always kept for correlation. Default: everything.
  void SetWindow(int64_t begin_ns, int64_t end_ns) {
    window_begin_ = begin_ns;
    window_end_ = end_ns;
  }

  // Keeps at most `n` GPU records in memory (default 4M, roughly 1.2 GB of trace records:
  // a bound for long injected runs); later ones are counted in stats().over_cap.
  void SetMaxActivities(size_t n) { max_activities_ = n; }

  // Resolves correlation and NVTX paths and moves everything into `trace`: activities
  // and ranges are appended (sorted by start), devices are added when not present, and
  // the decoder's counts are added to trace->header().collector(). Call once.
  void Finish(proto::Trace* trace);

  const DecoderStats& stats() const { return stats_; }

 private:
  void AddKernel(const CUpti_ActivityKernel10& k);
  void AddMemcpy(const CUpti_ActivityMemcpy6& m);
  void AddMemset(const CUpti_ActivityMemset4& m);
  void AddApi(const CUpti_ActivityAPI& a);
  void AddMarker(const CUpti_ActivityMarker2& m);
  void AddDevice(const CUpti_ActivityDevice5& d);
  bool KeepGpuRecord(uint64_t start, uint64_t end);

  std::vector<proto::Activity> activities_;
  std::vector<proto::DeviceInfo> devices_;
  LaunchIndex launches_;
  NvtxRangeIndex nvtx_;
  std::unordered_map<uint32_t, uint64_t> external_ids_;  // correlation id -> external id
  int64_t last_timestamp_ = 0;
  size_t max_activities_ = 4u << 20;
  int64_t window_begin_ = std::numeric_limits<int64_t>::min();
  int64_t window_end_ = std::numeric_limits<int64_t>::max();
  DecoderStats stats_;
};

// "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", ... for CUpti_ActivityMemcpyKind.
const char* CopyKindName(uint8_t copy_kind);

// Itanium-ABI demangling of a kernel name; names that are not mangled come back as-is.
std::string DemangleKernelName(const char* name);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_ACTIVITY_DECODER_H_
