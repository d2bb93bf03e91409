// The NVTX context a CUDA graph's kernels were captured in, for the kernel records of its
// replays (trace mode).
//
// NVTX ranges are host calls: a graph replay runs its kernels under whatever range is open
// at cudaGraphLaunch ("decode/step 7"), while the ranges that say what each kernel is for
// ("layer 3/moe") were pushed while the graph was captured. The collector learns, from
// CUPTI's callbacks, which launch created each node (its API correlation id) and in which
// capture (the cuStreamBeginCapture's correlation id); the decoder reads the NVTX path
// open at each of those API records. A node's capture path is the path at its launch
// below the path open when the capture began (the ranges around the capture itself, e.g.
// "decode/step 1", do not belong to the replays); a replayed kernel's path is its launch
// path joined with that ("decode/step 7" + "layer 3/moe"). A path at the launch that is
// not below the capture's (ranges closed during the capture) is kept whole.
//
// The correlation ids may be seen before or after their API records are read (the records
// come through buffers, the ids through callbacks): both orders are handled, through the
// decoder's recent-launch index for records already read.
// Memory: at most `max_nodes` nodes (later ones counted); a node's path is kept as long
// as the collector runs, since replays may come at any time.
// Plain C++; thread-safety: none (the decoder's caller serialises).
#ifndef QPROF_PROFILER_CUPTI_CAPTURE_PATHS_H_
#define QPROF_PROFILER_CUPTI_CAPTURE_PATHS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace qprof::profiler::cupti {

class CapturePaths {
 public:
  // The NVTX path of an API record already read, or false (not read yet, or forgotten).
  using PathOfRecord = std::function<bool(uint32_t correlation, std::string* path)>;

  explicit CapturePaths(size_t max_nodes = size_t{1} << 20) : max_nodes_(max_nodes) {}

  // Kernel node `node_id` was created by the launch with API correlation id
  // `launch_correlation`, in the capture begun by `capture_correlation` (0: not seen).
  void NodeCaptured(uint64_t node_id, uint32_t launch_correlation, uint32_t capture_correlation,
                    const PathOfRecord& read);
  // `node_id` is a copy of `original_id` (instantiation).
  void NodeCloned(uint64_t node_id, uint64_t original_id);
  // An API record was read, with the default-domain NVTX path open at it.
  void OnApiRecord(uint32_t correlation, const std::string& path);

  // The capture path of `node_id` (following clones), false when unknown.
  bool PathBelowCapture(uint64_t node_id, std::string* path) const;

  uint64_t nodes_over_limit() const { return over_limit_; }

  // `path` below `base` ("a/b/c" below "a" is "b/c"; equal: ""; not below: all of it).
  static std::string Below(const std::string& path, const std::string& base);

 private:
  struct Waiting {
    uint64_t node_id;
    uint32_t capture_correlation;
  };
  void Resolve(uint64_t node_id, const std::string& launch_path, uint32_t capture_correlation);

  const size_t max_nodes_;
  uint64_t over_limit_ = 0;
  std::unordered_map<uint64_t, std::string> below_;     // node -> path below its capture
  std::unordered_map<uint64_t, uint64_t> original_;     // clone -> original
  std::unordered_map<uint32_t, std::vector<Waiting>> waiting_launch_;  // by launch correlation
  std::unordered_map<uint32_t, std::string> capture_path_;  // capture correlation -> path
  std::unordered_map<uint32_t, bool> capture_wanted_;   // capture correlations not read yet
};

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_CAPTURE_PATHS_H_
