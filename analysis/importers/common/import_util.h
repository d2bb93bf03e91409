// Helpers shared by the importers: UTF-8 repair, progress lines, NVTX range nesting.
//
// RangeIndex is the one place that turns per-thread ranges into paths. Both nsys (NVTX
// push/pop) and Kineto (user_annotation) feed it the ranges of each thread; then each
// kernel's launch point (thread, time) asks for its path: the "/"-joined names of the
// ranges open on its thread at its time, outermost first; ranges are half-open [start,
// end). Ranges that cross instead of nesting are tolerated: a range is closed when it is on
// top of the stack and has ended, so a crossed range may stay on the stack a little longer
// than it lived. Launches are answered one at a time in any order (binary search, then a
// walk down the stack), so importers stream kernels without holding them.
//
// Cost: a range holds its name as an interned id and its parent, not a path. Paths are
// built for the ranges handed to Build's callback in one reused buffer (no string per
// range), and kept only for the ranges a launch asks about (PathAt), each built once from
// its parent's. A trace of 20k ranges with unique names (PyTorch's emit_nvtx numbers every
// op) keeps 20k names and as many paths as there are distinct launch points.
#ifndef QPROF_ANALYSIS_IMPORTERS_COMMON_IMPORT_UTIL_H_
#define QPROF_ANALYSIS_IMPORTERS_COMMON_IMPORT_UTIL_H_

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/importers/common/trace_sink.h"
#include "base/text.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

// UTF-8 validation and repair live in base/text.h.
using ::qprof::IsValidUtf8;
using ::qprof::RepairUtf8;
using ::qprof::Utf8Clean;

// Prints "qprof: <what>: <n> <unit> ..." on stderr at most once a second, and only after
// the first second, so short imports stay silent.
class Progress {
 public:
  Progress(bool enabled, std::string what);
  // Call often (per row); cheap: the clock is read every 64th call. `done`/`total` in bytes
  // or rows (total 0 = unknown).
  void Update(uint64_t done, uint64_t total, const char* unit);
  // For calls that come rarely (per MiB read): reads the clock every time.
  void UpdateNow(uint64_t done, uint64_t total, const char* unit);
  void Finish();

 private:
  bool enabled_;
  std::string what_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  uint64_t calls_ = 0;
  bool printed_ = false;
};

// A CUDA runtime or driver call that launches kernels: cudaLaunchKernel, cuLaunchKernel(Ex),
// cudaLaunchKernelExC, cudaLaunchCooperativeKernel, cudaGraphLaunch (nsys names carry a
// "_v7000"-style suffix).
bool IsLaunchCall(std::string_view name);

// Adds one runtime/driver call of `dur_ns` named `name` to the header's host-call sums
// (and to its synchronisation sums when SyncKindOf names a kind).
void CountHostCall(std::string_view name, int64_t dur_ns, proto::TraceHeader* header);

// The kind of a call that blocks the calling CPU thread until GPU work is done (CUDA Runtime
// API, "API synchronization behavior"), or "" for any other call:
//   "device_synchronize"  cudaDeviceSynchronize, cudaThreadSynchronize, cuCtxSynchronize
//   "stream_synchronize"  cudaStreamSynchronize, cuStreamSynchronize
//   "event_synchronize"   cudaEventSynchronize, cuEventSynchronize
//   "synchronous_copy"    cudaMemcpy*, cuMemcpy* without "Async" (a copy to pageable host
//                         memory returns only when it is done; the call's time is what the
//                         host spent in it either way)
// and HIP's counterparts in ROCm traces (hipDeviceSynchronize, hipCtxSynchronize,
// hipStreamSynchronize, hipEventSynchronize, hipMemcpy* without "Async", among them
// hipMemcpyWithStream, which blocks the host until its copy is done).
// Not counted: cudaStreamWaitEvent (the GPU waits, not the host), cudaStreamQuery and
// cudaEventQuery (polls that return at once), memsets. nsys's CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
// table is not used for this: its "event sync" records include cudaEventQuery polls (133 of
// 133 in the shared h100x2 trace), which never block. Version suffixes ("_v3020", "_v2") and
// per-thread-stream suffixes ("_ptsz", "_ptds") are ignored.
std::string_view SyncKindOf(std::string_view name);

// Adds `calls` calls of `ns` to the header's synchronisation sums of `kind`.
void AddSyncCalls(std::string_view kind, uint64_t calls, uint64_t ns, proto::TraceHeader* header);

struct ThreadKey {
  uint32_t pid = 0;
  uint64_t tid = 0;
  bool operator==(const ThreadKey& o) const { return pid == o.pid && tid == o.tid; }
  bool operator<(const ThreadKey& o) const {
    return pid != o.pid ? pid < o.pid : tid < o.tid;
  }
};

// Sorts [first, last) stably by `less` in O(n log r) for r ascending runs. Sources write
// most records in order (a thread's frames, launch calls by correlation id, GPU events by
// start): they come in a few dozen runs where streams or processes interleave or traces
// were concatenated, which std::stable_sort does not take advantage of (O(n log n) in any
// order). Neighbouring runs are merged pairwise until one is left; input of short runs
// goes to std::stable_sort.
template <typename It, typename Less>
void SortRuns(It first, It last, Less less) {
  const size_t n = static_cast<size_t>(last - first);
  std::vector<size_t> bounds = {0};  // where each run starts, then n
  for (size_t i = 1; i < n; ++i) {
    if (less(first[i], first[i - 1])) bounds.push_back(i);
  }
  bounds.push_back(n);
  if (bounds.size() - 1 > n / 16 + 1) {
    std::stable_sort(first, last, less);
    return;
  }
  while (bounds.size() > 2) {
    size_t kept = 1;
    for (size_t k = 2; k < bounds.size(); k += 2) {
      std::inplace_merge(first + bounds[k - 2], first + bounds[k - 1], first + bounds[k], less);
      bounds[kept++] = bounds[k];
    }
    if (bounds.size() % 2 == 0) bounds[kept++] = bounds.back();  // an odd run left over
    bounds.resize(kept);
  }
}

// Strings interned by a hash computed beforehand (Hash(), e.g. on the thread that decoded
// them), so the thread that owns the table hashes no name again however often it repeats:
// ids in order of first appearance, the strings held in stable storage.
class PrehashedStrings {
 public:
  static size_t Hash(std::string_view s) { return std::hash<std::string_view>()(s); }
  // The id of `s`, whose Hash() is `hash`; *added says whether it is new.
  uint32_t Intern(std::string_view s, size_t hash, bool* added = nullptr);
  const std::string& operator[](uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  struct Key {
    std::string_view text;
    size_t hash;
    bool operator==(const Key& o) const { return text == o.text; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return k.hash; }
  };
  std::deque<std::string> strings_;  // stable: the keys view into it
  std::unordered_map<Key, uint32_t, KeyHash> ids_;
};

// Strings interned into storage that never moves (blocks of 64 KiB), ids in order of first
// appearance: a repeated string is stored once, a new one costs a copy into the current
// block, not an allocation of its own.
class StringArena {
 public:
  uint32_t Intern(std::string_view s);
  // Room for `n` strings without rehashing (a hint: more may come).
  void Reserve(size_t n);
  std::string_view operator[](uint32_t id) const { return views_[id]; }
  size_t size() const { return views_.size(); }

 private:
  static constexpr size_t kBlockBytes = 64 << 10;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t used_ = 0, capacity_ = 0;  // of the last block
  std::vector<std::string_view> views_;
  absl::flat_hash_map<std::string_view, uint32_t> ids_;
};

class RangeIndex {
 public:
  static constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();
  // Room for about `n` ranges (a hint from the source's row count; more may come).
  void Reserve(size_t n);
  // A range; `end` = kOpenEnd when the source never closed it.
  void AddRange(ThreadKey thread, int64_t start, int64_t end, std::string_view name);
  // Nests the ranges of each thread (call once, after the last AddRange) and hands every
  // range, with its path and depth, to `emit`, in (thread, start) order. The range passed
  // is valid only during the call.
  void Build(const std::function<void(const proto::NvtxRange&)>& emit);
  // The path of the innermost range open on `thread` at `time` (a launch at a range's start
  // is inside it), or nullptr. After Build. The string stays valid, and the same, as long
  // as the index lives. Not thread-safe: the first ask for a range builds its path.
  const std::string* PathAt(ThreadKey thread, int64_t time) const;
  size_t range_count() const { return ranges_.size() + nodes_.size(); }

 private:
  static constexpr uint32_t kNoPath = std::numeric_limits<uint32_t>::max();
  struct Range {
    int64_t start;
    int64_t end;
    uint32_t thread;  // in threads_
    uint32_t name;    // in names_
  };
  struct Node {  // a range after Build, in start order within its thread
    int64_t start;
    int64_t end;
    int32_t parent;  // the range below it on the stack when it opened, or -1
    uint32_t name;   // in names_
  };
  struct Thread {
    ThreadKey key;
    size_t begin = 0, end = 0;  // its nodes, after Build
  };
  // The ranges in (thread, start, longest first) order: grouped by thread (kept in the
  // order the source gave), then each thread's sorted (SortRuns: sources write a thread's
  // ranges nearly in order).
  std::vector<Range> SortedRanges();
  // The path of node `i`, built (with its ancestors') on first use.
  const std::string& PathOf(int32_t i) const;

  StringArena names_;
  std::vector<Range> ranges_;
  std::vector<Node> nodes_;
  std::vector<Thread> threads_;                // in order of first appearance
  std::map<ThreadKey, uint32_t> thread_ids_;   // ordered: Build walks threads by key
  ThreadKey last_thread_;                      // AddRange's last thread, and its id
  uint32_t last_thread_id_ = std::numeric_limits<uint32_t>::max();
  mutable std::vector<uint32_t> path_of_;  // per node: index in paths_, or kNoPath
  mutable std::deque<std::string> paths_;  // stable: PathAt hands out pointers
};

// Sets schema/provenance/source fields of an imported trace's header.
void FillImportedHeader(proto::TraceHeader* header, const std::string& path, const char* kind);
inline void FillImportedHeader(proto::Trace* trace, const std::string& path, const char* kind) {
  FillImportedHeader(trace->mutable_header(), path, kind);
}

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_COMMON_IMPORT_UTIL_H_
