#include "runtime/work_join.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/registry/work_models.h"
#include "proto/vocabulary.h"

namespace qprof::runtime {
namespace {

// One expected kernel of a range: its name and its part of the call's work.
struct Slot {
  const kernels::CudaLaunch* launch;
  const kernels::KernelInfo* info;  // the call's variant
  proto::WorkModel work;
};

// Expected kernels per range of one step. A call's optional kernels that do not run give
// their part to the call's first kernel, which then does that work itself.
std::map<std::string, std::vector<Slot>> SlotsByRange(const std::vector<StepKernels>& calls) {
  std::map<std::string, std::vector<Slot>> out;
  for (const StepKernels& call : calls) {
    const kernels::KernelInfo* info = kernels::KernelRegistry::Global().Find(call.launch.kernel_id);
    if (info == nullptr || call.kernels.empty()) continue;
    std::vector<Slot>& slots = out[call.launch.range];
    const size_t first = slots.size();
    for (const kernels::CudaLaunch* k : call.kernels) {
      slots.push_back({k, info, k->work ? k->work(call.launch.shape) : proto::WorkModel()});
    }
    for (const kernels::CudaLaunch& k : info->cuda_launches) {
      const bool runs = std::find(call.kernels.begin(), call.kernels.end(), &k) != call.kernels.end();
      if (!runs && k.work) {
        slots[first].work = kernels::SumWork({slots[first].work, k.work(call.launch.shape)});
      }
    }
  }
  return out;
}

bool NameMatches(const std::string& record, const kernels::CudaLaunch& k) {
  if (record == k.name) return true;
  // Demangled names of our extern "C" kernels are exact; library kernels (NCCL) vary in
  // their suffix, and a C++ kernel may carry its parameter list.
  if (record.rfind(k.name, 0) != 0) return false;
  return k.name_is_prefix || record[k.name.size()] == '(';
}

void Join(const Slot& slot, proto::Activity* a) {
  *a->mutable_work() = slot.work;
  a->set_kernel_id(slot.info->id);
  if (a->attribution().evidence().empty()) {
    proto::Attribution* at = a->mutable_attribution();
    at->set_role(slot.info->role);
    at->set_pipe_class(slot.info->gpu_pipe_class);
    at->set_format(slot.info->format);
    at->set_evidence(std::string(evidence::kRegistry));
    at->set_evidence_detail(absl::StrCat("registry ", slot.info->id, ": ",
                                         slot.info->gpu_pipe_class, " (work joined by launch "
                                         "order under its NVTX range)"));
  }
}

// Matches the records of one range (in launch order) to its expected kernels.
void JoinRange(const std::vector<Slot>& slots, const std::vector<proto::Activity*>& records,
               WorkJoinStats* stats) {
  size_t next = 0;
  for (proto::Activity* a : records) {
    size_t found = next;
    while (found < slots.size() && !NameMatches(a->name(), *slots[found].launch)) ++found;
    if (found == slots.size()) {
      ++stats->unmatched;
      continue;
    }
    stats->missing += found - next;
    Join(slots[found], a);
    ++stats->joined;
    next = found + 1;
  }
  stats->missing += slots.size() - next;
}

}  // namespace

int DecodeStepOfPath(const std::string& path, std::string* range) {
  constexpr char kPrefix[] = "decode/step ";
  if (path.rfind(kPrefix, 0) != 0) return -1;
  const size_t begin = sizeof(kPrefix) - 1;
  const size_t slash = path.find('/', begin);
  int step = -1;
  if (slash == std::string::npos ||
      !absl::SimpleAtoi(path.substr(begin, slash - begin), &step)) {
    return -1;
  }
  *range = path.substr(slash + 1);
  return step;
}

absl::StatusOr<WorkJoinStats> JoinStepWork(const StepKernelsFn& expected, proto::Trace* trace) {
  WorkJoinStats stats;
  // (step, device, thread) -> range -> records: each launching thread keeps its own order
  // (ranks of a tensor-parallel run share nothing but the range names).
  std::map<std::tuple<int, uint32_t, uint64_t>, std::map<std::string, std::vector<proto::Activity*>>>
      groups;
  for (proto::Activity& a : *trace->mutable_activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    std::string range;
    const int step = DecodeStepOfPath(a.nvtx_path(), &range);
    if (step < 0) {
      ++stats.outside;
      continue;
    }
    ++stats.kernels;
    groups[{step, a.device_id(), a.tid()}][range].push_back(&a);
  }
  std::map<std::pair<int, uint32_t>, std::map<std::string, std::vector<Slot>>> cache;
  for (auto& [key, ranges] : groups) {
    const auto [step, device, tid] = key;
    auto it = cache.find({step, device});
    if (it == cache.end()) {
      ASSIGN_OR_RETURN(const std::vector<StepKernels> calls, expected(step, device));
      it = cache.emplace(std::make_pair(step, device), SlotsByRange(calls)).first;
    }
    for (auto& [range, records] : ranges) {
      // Launch order on one thread: start time, then the launch's correlation id.
      std::sort(records.begin(), records.end(), [](const proto::Activity* x, const proto::Activity* y) {
        return std::make_pair(x->start_ns(), x->correlation_id()) <
               std::make_pair(y->start_ns(), y->correlation_id());
      });
      auto slots = it->second.find(range);
      if (slots == it->second.end()) {
        stats.unmatched += records.size();
        continue;
      }
      JoinRange(slots->second, records, &stats);
    }
  }
  return stats;
}

}  // namespace qprof::runtime
