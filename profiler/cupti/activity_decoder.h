// Turns CUPTI activity records into trace records (trace_data.h) as they stream in, plus
// decoder statistics. No CUPTI calls happen here: the input is a record pointer (what
// cuptiActivityGetNextRecord yields, or a struct a test built), so the whole decoding and
// correlation path runs on a CPU.
//
// Record versions are those of the CUPTI headers we build against (CUDA 13.0):
// CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemcpyPtoP4,
// CUpti_ActivityMemset4, CUpti_ActivityAPI, CUpti_ActivityMarker2,
// CUpti_ActivityOverhead3, CUpti_ActivityExternalCorrelation, CUpti_ActivityDevice5.
// Newer libcupti appends fields to these structs, so reading them as these versions is
// safe.
//
// Correlation: a kernel/memcpy/memset record carries the correlation id of the runtime or
// driver API call that launched it; the API record gives the thread, the process and
// (through NvtxTracker, at the moment the API record is read) the NVTX paths. Several GPU
// records may share one id (a cudaGraphLaunch: one API record, one kernel record per
// node). A GPU record whose API record has not been read yet is held back; TakeReady()
// releases it once its API record arrives, or unattributed after kMaxPendingBatches
// batches without it (API tracing off, or the API record was dropped), or at the end.
//
// Kernel names: demangled once per distinct name pointer (CUPTI hands every record of one
// kernel the same pointer); a cached entry is reused only while the pointer still holds
// the same text, so a module unloaded and another loaded at the same address is safe.
//
// Thread-safety: none; the collector serialises Add()/TakeReady().
// Memory: strings are copied out of the record at Add(), so buffers can be returned to
// CUPTI right after.
#ifndef QPROF_PROFILER_CUPTI_ACTIVITY_DECODER_H_
#define QPROF_PROFILER_CUPTI_ACTIVITY_DECODER_H_

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <cupti_activity.h>

#include "profiler/capture_range.h"
#include "profiler/cupti/capture_paths.h"
#include "profiler/cupti/nvtx_ranges.h"
#include "profiler/trace_data.h"

namespace qprof::profiler::cupti {

// Where and when a correlation id's API call ran, and the NVTX paths open then.
struct LaunchInfo {
  uint32_t pid = 0;
  uint64_t tid = 0;
  int64_t start_ns = 0;
  uint32_t cbid = 0;
  bool runtime = false;  // runtime API (true) or driver API (false)
  std::string nvtx_path;
  std::map<std::string, std::string> domain_paths;
};

// correlation id -> launch call. When both a runtime and a driver record carry the same
// id (the driver call made inside a runtime call), the earlier start wins: it is the
// outer call, the one the user wrote. Holds the most recent `capacity` ids (oldest
// forgotten first), which bounds memory on long runs; GPU records arrive soon after
// their launch, so only a record delayed past that many launches loses its attribution.
class LaunchIndex {
 public:
  explicit LaunchIndex(size_t capacity = size_t{1} << 18) : capacity_(capacity) {}
  void Add(uint32_t correlation_id, LaunchInfo info);
  const LaunchInfo* Find(uint32_t correlation_id) const;
  size_t size() const { return by_correlation_.size(); }

 private:
  size_t capacity_;
  std::unordered_map<uint32_t, LaunchInfo> by_correlation_;
  std::deque<uint32_t> order_;
};

struct DecoderStats {
  uint64_t records_total = 0;      // every record handed to Add()
  uint64_t records_gpu = 0;        // kernel, memcpy and memset records
  uint64_t records_invalid = 0;    // GPU records with start == 0 or end <= start (or null)
  uint64_t records_incomplete = 0; // ... of which start == end == 0: CUPTI returned the record
                                   // of a kernel still running at a forced flush
  uint64_t records_unknown = 0;    // kinds we do not decode
  uint64_t records_outside_window = 0;  // dropped by the --duration window, the --delay
                                        // or a capture range
  uint64_t over_cap = 0;           // GPU records left out past max_activities
  uint64_t emitted = 0;            // GPU records handed out by TakeReady()
  uint64_t overhead_ns = 0;        // sum of OVERHEAD records' durations
  uint64_t kernels = 0;
  uint64_t graph_kernels = 0;      // kernel records with a nonzero graph id
  uint64_t graph_kernels_capture_path = 0;  // ... given their node's capture-time path
  uint64_t graph_kernels_unmapped = 0;      // ... whose node's capture was not seen
  uint64_t unattributed = 0;       // GPU records emitted without their launch record
  uint64_t demangled = 0;          // names demangled (cache misses)
  uint64_t name_cache_hits = 0;
};

// What TakeReady() hands out.
struct DecodedBatch {
  std::vector<ActivityData> activities;
  std::vector<RangeData> ranges;
  std::vector<DeviceData> devices;  // from DEVICE records
  void clear() {
    activities.clear();
    ranges.clear();
    devices.clear();
  }
};

class ActivityDecoder {
 public:
  // A held GPU record is released unattributed after this many TakeReady(false) calls.
  static constexpr int kMaxPendingBatches = 4;

  // Decodes one record. Unknown kinds are counted and skipped. Never throws on bad
  // input (a null record counts as invalid).
  void Add(const CUpti_Activity* record);

  // Keeps only GPU records that start in [begin, end) (the --duration window); API and
  // marker records are always kept for correlation. Default: everything.
  void SetWindow(int64_t begin_ns, int64_t end_ns) {
    window_begin_ = begin_ns;
    window_end_ = end_ns;
  }
  // Keeps only GPU records whose launch (the API call's start; the record's own start
  // when its launch is not known) is inside a capture range of `gate` (capture_range.h).
  // The gate must outlive the decoder. Default: no capture range.
  void SetCaptureGate(const CaptureGate* gate) { capture_gate_ = gate; }
  // Keeps at most `n` GPU records (for in-memory use; later ones are counted in
  // stats().over_cap). Default: no limit.
  void SetMaxActivities(uint64_t n) { max_activities_ = n; }
  // False when no runtime/driver API records will come (their kinds could not be
  // enabled): GPU records are then released at once instead of held for them.
  void SetExpectLaunchRecords(bool expect) { expect_launch_records_ = expect; }

  // CUDA graphs (capture_paths.h): kernel node `node_id` was created by the launch whose
  // API record has `launch_correlation`, in the capture begun by `capture_correlation`;
  // a replayed kernel of that node (or of a clone) takes the node's capture-time path
  // below its own launch path. Call before the records of its replays are added.
  void AddCapturedNode(uint64_t node_id, uint32_t launch_correlation,
                       uint32_t capture_correlation);
  void AddClonedNode(uint64_t node_id, uint64_t original_id);

  // Moves what is ready for the trace into *out (appending): GPU records whose launch is
  // known or given up on, ranges closed so far, devices seen. `final` releases every
  // held record and closes the ranges still open at the last timestamp seen.
  void TakeReady(DecodedBatch* out, bool final);

  const DecoderStats& stats() const { return stats_; }
  const NvtxTracker& nvtx() const { return nvtx_; }
  int64_t last_timestamp() const { return last_timestamp_; }

 private:
  struct Pending {
    ActivityData activity;
    int age = 0;
  };
  void AddKernel(const CUpti_ActivityKernel10& k);
  void AddMemcpy(const CUpti_ActivityMemcpy6& m);
  void AddMemcpyPtoP(const CUpti_ActivityMemcpyPtoP4& p);
  void AddMemset(const CUpti_ActivityMemset4& m);
  void AddApi(const CUpti_ActivityAPI& a);
  void AddMarker(const CUpti_ActivityMarker2& m);
  void AddDevice(const CUpti_ActivityDevice5& d);
  bool KeepGpuRecord(uint64_t start, uint64_t end);
  // Attributes (when its launch is known) or holds a decoded GPU record.
  void Route(ActivityData a);
  void Attribute(const LaunchInfo& launch, ActivityData* a) const;
  void Emit(ActivityData a);
  const std::pair<std::string, std::string>& KernelName(const char* mangled);

  std::vector<ActivityData> ready_;
  std::unordered_map<uint32_t, std::vector<Pending>> pending_;  // by correlation id
  std::vector<DeviceData> devices_;
  LaunchIndex launches_;
  NvtxTracker nvtx_;
  CapturePaths capture_paths_;
  std::unordered_map<uint32_t, uint64_t> external_ids_;  // correlation id -> external id
  std::deque<uint32_t> external_order_;
  // name pointer -> (mangled text, demangled)
  std::unordered_map<const char*, std::pair<std::string, std::string>> names_;
  int64_t last_timestamp_ = 0;
  uint64_t max_activities_ = std::numeric_limits<uint64_t>::max();
  uint64_t kept_ = 0;
  bool expect_launch_records_ = true;
  const CaptureGate* capture_gate_ = nullptr;
  int64_t window_begin_ = std::numeric_limits<int64_t>::min();
  int64_t window_end_ = std::numeric_limits<int64_t>::max();
  DecoderStats stats_;
};

// "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", ... for CUpti_ActivityMemcpyKind.
const char* CopyKindName(uint8_t copy_kind);

// Itanium-ABI demangling of a kernel name; names that are not mangled come back as-is.
std::string DemangleKernelName(const char* name);

// `text` with every byte sequence that is not valid UTF-8 replaced by U+FFFD: protobuf
// refuses to parse a string field holding invalid UTF-8, so one odd kernel name would
// otherwise make the rest of a trace file unreadable.
std::string ValidUtf8(const char* text);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_ACTIVITY_DECODER_H_
