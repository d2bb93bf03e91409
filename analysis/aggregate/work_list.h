// WorkList: the work models (bytes, FLOPs, compute pipe) of one kernel's launches, kept so
// that roofline times can be computed at the end, when the device is known.
//
// A launch's roofline time is max(bytes / bandwidth, flops / pipe rate): not additive, so
// sums of bytes and FLOPs are not enough. The list keeps every launch's work in arrival
// order while there are at most kExactLimit (the sum is then computed in the order the
// launches came, as a plain loop over them would); past that, each distinct work model
// with its count (work models repeat: same shapes, same kernel); past kMaxDistinct
// distinct ones, per-pipe totals, which give a lower bound (approximate() says so).
#ifndef QPROF_ANALYSIS_AGGREGATE_WORK_LIST_H_
#define QPROF_ANALYSIS_AGGREGATE_WORK_LIST_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "proto/partial.pb.h"

namespace qprof::aggregate {

struct LaunchWork {
  double bytes = 0;
  double flops = 0;
  std::string pipe;  // WorkModel.compute_pipe
  bool operator<(const LaunchWork& o) const {
    return std::tie(bytes, flops, pipe) < std::tie(o.bytes, o.flops, o.pipe);
  }
};

class WorkList {
 public:
  static constexpr size_t kExactLimit = 16384;
  static constexpr size_t kMaxDistinct = 65536;

  void Add(const LaunchWork& w);
  void Merge(const WorkList& other);
  // Sum over launches of `roof(work)`; -1 when any call returns a negative value.
  double Sum(const std::function<double(const LaunchWork&)>& roof) const;
  bool approximate() const { return mode_ == Mode::kTotals; }
  uint64_t count() const { return count_; }

  void ToProto(proto::PartialWork* out) const;
  bool FromProto(const proto::PartialWork& in);

 private:
  enum class Mode { kList, kDistinct, kTotals };
  void ToDistinct();
  void ToTotals();

  Mode mode_ = Mode::kList;
  uint64_t count_ = 0;
  std::vector<LaunchWork> list_;
  std::map<LaunchWork, uint64_t> distinct_;
  std::map<std::string, std::pair<double, double>> totals_;  // pipe -> bytes, flops
};

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_WORK_LIST_H_
