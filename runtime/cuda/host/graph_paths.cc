#include "runtime/cuda/host/graph_paths.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace qprof::runtime::cuda {
namespace {

constexpr char kGraphSuffix[] = "/graph";

bool EndsWithGraph(const std::string& p) {
  const size_t n = sizeof(kGraphSuffix) - 1;
  return p.size() >= n && p.compare(p.size() - n, n, kGraphSuffix) == 0;
}

CapturedNode::Kind KindOf(const proto::Activity& a) {
  switch (a.kind()) {
    case proto::ACTIVITY_KIND_KERNEL: return CapturedNode::Kind::kKernel;
    case proto::ACTIVITY_KIND_MEMSET: return CapturedNode::Kind::kMemset;
    case proto::ACTIVITY_KIND_MEMCPY: return CapturedNode::Kind::kMemcpy;
    default: return CapturedNode::Kind::kOther;
  }
}

// Why record `a` cannot be node `n`, or "" when it can.
std::string Mismatch(const proto::Activity& a, const CapturedNode& n, size_t i) {
  if (KindOf(a) != n.kind) return absl::StrCat("record ", i, " is not the captured node's kind");
  if (n.kind == CapturedNode::Kind::kKernel && !n.name.empty() && a.name() != n.name &&
      a.mangled_name() != n.name) {
    return absl::StrCat("record ", i, " is ", a.name(), ", the captured node ", n.name);
  }
  return "";
}

void SetArg(proto::Activity* a, const std::string& key, std::string value) {
  (*a->mutable_args())[key].swap(value);
}

}  // namespace

GraphAttribution AttributeGraphReplays(const std::vector<CapturedNode>& chain,
                                       uint32_t device, proto::Trace* trace) {
  GraphAttribution out;
  // Records the collector already gave their capture-time path (".../graph/layer 3/moe",
  // profiler/cupti/capture_paths.h) go back under their launch path first, so that both
  // ways of attributing meet in one: the chain order below, which checks every record's
  // kind and name, and the collector's path, which must agree with it.
  for (proto::Activity& a : *trace->mutable_activities()) {
    if (a.device_id() != device) continue;
    auto launch = a.args().find("graph_launch_nvtx_path");
    if (launch == a.args().end() || !EndsWithGraph(launch->second)) continue;
    std::string below = a.nvtx_path().size() > launch->second.size() + 1
                            ? a.nvtx_path().substr(launch->second.size() + 1)
                            : "";
    a.set_nvtx_path(launch->second);
    SetArg(&a, "cupti_capture_path", std::move(below));
  }
  std::vector<const CapturedNode*> expected;
  for (const CapturedNode& n : chain) {
    if (n.kind != CapturedNode::Kind::kOther) expected.push_back(&n);
  }
  // Replays by their launch-time range (one per step) and stream (ranks sharing a GPU
  // replay their own graphs on their own streams).
  std::map<std::pair<std::string, uint64_t>, std::vector<proto::Activity*>> replays;
  for (proto::Activity& a : *trace->mutable_activities()) {
    if (a.device_id() != device || KindOf(a) == CapturedNode::Kind::kOther) continue;
    if (EndsWithGraph(a.nvtx_path())) replays[{a.nvtx_path(), a.stream_id()}].push_back(&a);
  }
  for (auto& [key, records] : replays) {
    const std::string& path = key.first;
    ++out.replays;
    if (records.size() != expected.size()) {
      out.unmatched.push_back(absl::StrCat(path, ": ", records.size(), " records, ",
                                           expected.size(), " captured nodes"));
      continue;
    }
    std::stable_sort(records.begin(), records.end(),
                     [](const proto::Activity* a, const proto::Activity* b) {
                       return a->start_ns() < b->start_ns();
                     });
    std::string why;
    for (size_t i = 0; i < records.size() && why.empty(); ++i) {
      why = Mismatch(*records[i], *expected[i], i);
    }
    if (!why.empty()) {
      out.unmatched.push_back(absl::StrCat(path, ": ", why));
      continue;
    }
    const std::string step(path.data(), path.size() - (sizeof(kGraphSuffix) - 1));
    for (size_t i = 0; i < records.size(); ++i) {
      proto::Activity& a = *records[i];
      std::string full = step;
      if (!expected[i]->path.empty()) full.append("/").append(expected[i]->path);
      a.set_nvtx_path(std::move(full));
      SetArg(&a, "graph_replay", "1");
      SetArg(&a, "nvtx_path_source", "graph capture order");
      auto cupti = a.args().find("cupti_capture_path");
      if (cupti != a.args().end() && cupti->second != expected[i]->path) ++out.path_disagreements;
    }
    ++out.attributed;
  }
  return out;
}

}  // namespace qprof::runtime::cuda
