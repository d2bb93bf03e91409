// The host collector: steady-clock timing of the CPU backend's kernel calls, recorded as
// trace activities on device 0 = the host CPU, with PROVENANCE_MEASURED_HOST.
//
// Ranges: PushRange/PopRange keep a stack whose joined names ("decode/step 3/layer 12/moe")
// form the nvtx_path of every kernel recorded while it is open, the same path scheme the
// CUDA backend pushes to NVTX, so CPU and GPU traces of one workload line up. Each popped
// range becomes an NvtxRange record.
//
// The collector knows nothing about kernels: callers pass each call's name, registry id,
// attribution and work model (the runtime takes them from the kernel registry).
//
// Threading: one recording thread (the decode loop). Kernel-internal worker threads are
// not recorded separately: an activity covers the whole parallel call.
// Contract (profiler/collector.h): Start() once, Stop() once, Flush() once.
#ifndef QPROF_PROFILER_HOST_HOST_COLLECTOR_H_
#define QPROF_PROFILER_HOST_HOST_COLLECTOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "profiler/collector.h"
#include "proto/trace.pb.h"

namespace qprof::profiler {

// Nanoseconds on the steady clock (the time base of host traces).
int64_t HostNowNs();

// DeviceInfo for the host CPU: id 0, kind "host_cpu", name from /proc/cpuinfo, arch,
// cpu_threads (the worker threads the run uses), total memory.
proto::DeviceInfo HostDeviceInfo(int cpu_threads);

struct HostKernelCall {
  std::string name;        // what the kernel would be called on the GPU
  std::string kernel_id;   // registry id
  proto::Attribution attribution;
  proto::WorkModel work;
  std::map<std::string, std::string> args;
};

class HostCollector : public Collector {
 public:
  explicit HostCollector(int cpu_threads);

  absl::Status Start() override;
  absl::Status Stop() override;
  // Appends activities and ranges, sets header provenance, devices and collector stats.
  absl::Status Flush(proto::Trace* trace) override;

  void PushRange(const std::string& name);
  void PopRange();
  std::string CurrentPath() const;

  // Records one call that ran from start_ns to end_ns (HostNowNs clock). Ignored unless
  // started and not stopped (counted as dropped).
  void RecordKernel(int64_t start_ns, int64_t end_ns, HostKernelCall call);

 private:
  struct Open {
    std::string name;
    int64_t start_ns;
  };
  int cpu_threads_;
  bool started_ = false;
  bool stopped_ = false;
  bool flushed_ = false;
  std::vector<Open> stack_;
  std::vector<proto::Activity> activities_;
  std::vector<proto::NvtxRange> ranges_;
  uint64_t next_correlation_ = 1;
  uint64_t dropped_ = 0;
  uint64_t invalid_ = 0;
  uint32_t pid_ = 0;
  uint64_t tid_ = 0;
};

// RAII range: PushRange on construction, PopRange on destruction.
class ScopedHostRange {
 public:
  ScopedHostRange(HostCollector* c, const std::string& name) : c_(c) {
    if (c_) c_->PushRange(name);
  }
  ~ScopedHostRange() {
    if (c_) c_->PopRange();
  }
  ScopedHostRange(const ScopedHostRange&) = delete;
  ScopedHostRange& operator=(const ScopedHostRange&) = delete;

 private:
  HostCollector* c_;
};

}  // namespace qprof::profiler

#endif  // QPROF_PROFILER_HOST_HOST_COLLECTOR_H_
