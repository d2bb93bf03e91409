#include "profiler/host/host_collector.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <utility>

namespace qprof::profiler {

int64_t HostNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

proto::DeviceInfo HostDeviceInfo(int cpu_threads) {
  proto::DeviceInfo d;
  d.set_id(0);
  d.set_kind("host_cpu");
  std::string model = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  d.set_name("host CPU (" + model + ")");
#if defined(__x86_64__)
  d.set_arch("x86_64");
#elif defined(__aarch64__)
  d.set_arch("aarch64");
#else
  d.set_arch("unknown");
#endif
  d.set_cpu_threads(static_cast<uint32_t>(cpu_threads));
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) d.set_memory_bytes(static_cast<uint64_t>(pages) * page);
  return d;
}

HostCollector::HostCollector(int cpu_threads) : cpu_threads_(cpu_threads) {}

absl::Status HostCollector::Start() {
  if (started_) return absl::FailedPreconditionError("host collector: Start() called twice");
  started_ = true;
  pid_ = static_cast<uint32_t>(getpid());
  tid_ = static_cast<uint64_t>(syscall(SYS_gettid));
  return absl::OkStatus();
}

absl::Status HostCollector::Stop() {
  if (!started_) return absl::FailedPreconditionError("host collector: Stop() before Start()");
  if (stopped_) return absl::FailedPreconditionError("host collector: Stop() called twice");
  while (!stack_.empty()) PopRange();  // close ranges left open by an error path
  stopped_ = true;
  return absl::OkStatus();
}

void HostCollector::PushRange(const std::string& name) {
  stack_.push_back({name, HostNowNs()});
}

void HostCollector::PopRange() {
  if (stack_.empty()) return;
  proto::NvtxRange r;
  r.set_path(CurrentPath());
  r.set_name(stack_.back().name);
  r.set_start_ns(stack_.back().start_ns);
  r.set_end_ns(HostNowNs());
  r.set_pid(pid_);
  r.set_tid(tid_);
  r.set_depth(static_cast<uint32_t>(stack_.size() - 1));
  stack_.pop_back();
  if (started_ && !stopped_) ranges_.push_back(std::move(r));
}

std::string HostCollector::CurrentPath() const {
  std::string path;
  for (const Open& o : stack_) {
    if (!path.empty()) path += '/';
    path += o.name;
  }
  return path;
}

void HostCollector::RecordKernel(int64_t start_ns, int64_t end_ns, HostKernelCall call) {
  if (!started_ || stopped_) {
    ++dropped_;
    return;
  }
  if (end_ns < start_ns) {  // steady clock: cannot happen, but never record nonsense
    ++invalid_;
    return;
  }
  // A call shorter than the clock resolution still gets a nonzero duration, so readers
  // that reject end <= start keep it.
  if (end_ns == start_ns) end_ns = start_ns + 1;
  proto::Activity a;
  a.set_kind(proto::ACTIVITY_KIND_KERNEL);
  a.set_device_id(0);
  a.set_stream_id(0);
  a.set_start_ns(start_ns);
  a.set_end_ns(end_ns);
  a.set_correlation_id(next_correlation_++);
  a.set_name(std::move(call.name));
  a.set_kernel_id(std::move(call.kernel_id));
  a.set_nvtx_path(CurrentPath());
  a.set_pid(pid_);
  a.set_tid(tid_);
  *a.mutable_attribution() = std::move(call.attribution);
  *a.mutable_work() = std::move(call.work);
  for (auto& [k, v] : call.args) (*a.mutable_args())[k] = v;
  activities_.push_back(std::move(a));
}

absl::Status HostCollector::Flush(proto::Trace* trace) {
  if (!stopped_) return absl::FailedPreconditionError("host collector: Flush() before Stop()");
  if (flushed_) return absl::FailedPreconditionError("host collector: Flush() called twice");
  flushed_ = true;
  proto::TraceHeader* h = trace->mutable_header();
  h->set_provenance(proto::PROVENANCE_MEASURED_HOST);
  h->set_source_kind("qtrace");
  *h->add_devices() = HostDeviceInfo(cpu_threads_);
  proto::CollectorStats* s = h->mutable_collector();
  s->set_collector("host");
  s->set_records_total(activities_.size());
  s->set_records_dropped(dropped_);
  s->set_records_invalid(invalid_);
  s->set_metrics_requested(false);
  s->set_metrics_available(false);
  s->set_metrics_unavailable_reason("host CPU backend: no GPU hardware counters");
  for (proto::Activity& a : activities_) *trace->add_activities() = std::move(a);
  for (proto::NvtxRange& r : ranges_) *trace->add_ranges() = std::move(r);
  activities_.clear();
  ranges_.clear();
  return absl::OkStatus();
}

}  // namespace qprof::profiler
