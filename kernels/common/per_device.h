// Per-device, thread-safe memo of a monotone integer (e.g. the dynamic shared memory a
// kernel has been opted in to on each GPU, or a device's SM count). No CUDA here, so the
// logic is tested on the CPU (tests/kernels/per_device_test.cc).
//
// Why: CUDA function attributes such as cudaFuncAttributeMaxDynamicSharedMemorySize are
// per device, and with --tp N one host thread per rank launches on its own GPU at the same
// time. A process-wide `static bool done` both misses the other devices (their launches
// then fail) and is a data race. PerDeviceMax keeps one slot per device: a lock-free read
// on the fast path, and the setter runs under a mutex at most once per increase.
#ifndef QPROF_KERNELS_COMMON_PER_DEVICE_H_
#define QPROF_KERNELS_COMMON_PER_DEVICE_H_

#include <atomic>
#include <mutex>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace qprof::kernels {

class PerDeviceMax {
 public:
  static constexpr int kMaxDevices = 64;

  PerDeviceMax() {
    for (auto& v : value_) v.store(-1, std::memory_order_relaxed);
  }

  // The value recorded for `device`, or -1 when none yet.
  int Get(int device) const {
    return InRange(device) ? value_[device].load(std::memory_order_acquire) : -1;
  }

  // The value for `device`, computed by compute() -> absl::StatusOr<int> (>= 0) the first
  // time (under the lock: concurrent first callers compute once). Failures are not recorded.
  template <typename Compute>
  absl::StatusOr<int> GetOrCompute(int device, Compute&& compute) {
    if (!InRange(device)) {
      return absl::OutOfRangeError(absl::StrCat("device ", device, " outside 0..", kMaxDevices - 1));
    }
    const int v = value_[device].load(std::memory_order_acquire);
    if (v >= 0) return v;
    std::lock_guard<std::mutex> lock(mu_);
    const int again = value_[device].load(std::memory_order_relaxed);
    if (again >= 0) return again;
    absl::StatusOr<int> got = compute();
    if (got.ok()) value_[device].store(*got, std::memory_order_release);
    return got;
  }

  // Makes sure the value recorded for `device` is >= `want`: when it is not, calls
  // set(want) (under the lock, so concurrent callers for one device run it once) and
  // records `want` if it returned Ok. A failure is returned and not recorded.
  template <typename Setter>
  absl::Status Ensure(int device, int want, Setter&& set) {
    if (!InRange(device)) {
      return absl::OutOfRangeError(absl::StrCat("device ", device, " outside 0..", kMaxDevices - 1));
    }
    if (value_[device].load(std::memory_order_acquire) >= want) return absl::OkStatus();
    std::lock_guard<std::mutex> lock(mu_);
    if (value_[device].load(std::memory_order_relaxed) >= want) return absl::OkStatus();
    absl::Status s = set(want);
    if (s.ok()) value_[device].store(want, std::memory_order_release);
    return s;
  }

 private:
  static bool InRange(int d) { return d >= 0 && d < kMaxDevices; }
  std::mutex mu_;
  std::atomic<int> value_[kMaxDevices];
};

// True when a kernel with `static_bytes` of static and `dynamic_bytes` of dynamic shared
// memory exceeds the 48 KiB a launch gets without opting in: the limit applies to the sum.
constexpr bool NeedsSmemOptIn(long long static_bytes, long long dynamic_bytes) {
  return static_bytes + dynamic_bytes > 48 * 1024;
}

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_COMMON_PER_DEVICE_H_
