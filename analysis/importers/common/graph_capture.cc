#include "analysis/importers/common/graph_capture.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "analysis/importers/common/graph_capture_pairing.h"

namespace qprof::importers {
namespace {

// The number after `key` in `text` ("capture_32_DECODE" after "capture_" is 32), when a
// digit follows it directly and the key starts a word.
uint32_t NumberAfter(std::string_view text, std::string_view key) {
  for (size_t pos = text.find(key); pos != std::string_view::npos; pos = text.find(key, pos + 1)) {
    if (pos > 0 && std::isalnum(static_cast<unsigned char>(text[pos - 1]))) continue;
    size_t i = pos + key.size();
    uint64_t n = 0;
    size_t digits = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && digits < 9) {
      n = n * 10 + static_cast<uint64_t>(text[i++] - '0');
      ++digits;
    }
    if (digits > 0 && n > 0) return static_cast<uint32_t>(n);
  }
  return 0;
}

}  // namespace

uint32_t CaptureBatch(std::string_view annotation, std::string_view file_name,
                      std::string* source) {
  for (std::string_view key : {"capture_", "bs=", "bs_"}) {
    if (uint32_t n = NumberAfter(annotation, key)) {
      *source = std::string(annotation);
      return n;
    }
  }
  if (uint32_t n = NumberAfter(file_name, "bs_")) {
    *source = absl::StrCat("file name ", std::string(file_name));
    return n;
  }
  source->clear();
  return 0;
}

uint32_t GraphCaptureSet::InternName(const std::string& name) {
  if (name.empty()) return 0;
  auto [it, inserted] = index_.try_emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(name);
  return it->second;
}

uint32_t GraphCaptureSet::FindName(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? 0 : it->second;
}

uint32_t GraphCaptureSet::InternOp(std::string_view op) {
  if (op.empty()) return 0;
  auto [it, inserted] = op_index_.try_emplace(std::string(op), static_cast<uint32_t>(ops_.size()));
  if (inserted) ops_.emplace_back(op);
  return it->second;
}

GraphCaptureJoiner::GraphCaptureJoiner(const GraphCaptureSet* set, LaunchStackTable* table,
                                       proto::GraphCaptureJoin* stats)
    : set_(set), table_(table), stats_(stats), kernel_sets_(table->stats()) {}

uint32_t GraphCaptureJoiner::SetName(const ReplayKernel& k) {
  auto [it, inserted] = names_.try_emplace(k.name_key, 0);
  if (inserted) it->second = set_->FindName(std::string(k.name));
  return it->second;
}

uint32_t GraphCaptureJoiner::TableStack(uint32_t set_stack) {
  if (set_stack == 0) return 0;
  auto [it, inserted] = stacks_.try_emplace(set_stack, 0);
  if (inserted) it->second = table_->CopyStack(set_->tables, set_stack);
  return it->second;
}

// The kernels each captured op call launched, as the replay ran them: per call (innermost
// and outermost), the names of the replay kernels its launches paired with, and for
// launches the replay lacks, the name the capture recorded (none without names). Every
// paired kernel points at its calls' sets, as an eager kernel points at its calls'.
void GraphCaptureJoiner::FillPairing(const std::vector<ReplayKernel>& ordered, ReplayMatch* m) {
  m->pairing.assign(ordered.size(), ReplayPairing{});
  if (m->capture < 0) return;
  const GraphCapture& c = set_->captures[static_cast<size_t>(m->capture)];
  std::vector<int32_t> pos_of(c.kernels.size(), -1);
  for (size_t pos = 0; pos < ordered.size(); ++pos) {
    if (m->launch[pos] >= 0) pos_of[static_cast<size_t>(m->launch[pos])] = static_cast<int32_t>(pos);
  }
  std::vector<std::pair<std::string_view, std::string_view>> kernels;
  for (const bool inner : {true, false}) {
    std::unordered_map<uint32_t, std::vector<uint32_t>> calls;  // call -> its launches
    for (uint32_t li = 0; li < c.kernels.size(); ++li) {
      const uint32_t call = inner ? c.kernels[li].inner_call : c.kernels[li].outer_call;
      if (call != 0) calls[call].push_back(li);
    }
    for (const auto& [call, launches] : calls) {
      kernels.clear();
      bool any_paired = false;
      for (uint32_t li : launches) {
        const CapturedLaunch& l = c.kernels[li];
        const int32_t pos = pos_of[li];
        any_paired |= pos >= 0;
        std::string_view name = pos >= 0 ? ordered[static_cast<size_t>(pos)].name
                                         : std::string_view(set_->Name(l.name));
        if (!name.empty()) kernels.emplace_back(name, set_->Op(l.inner_op));
      }
      if (!any_paired) continue;
      const uint32_t id = kernel_sets_.Intern(&kernels);
      for (uint32_t li : launches) {
        if (pos_of[li] < 0) continue;
        ReplayPairing& rp = m->pairing[static_cast<size_t>(pos_of[li])];
        (inner ? rp.op_kernels : rp.outer_op_kernels) = id;
      }
    }
  }
  for (size_t pos = 0; pos < ordered.size(); ++pos) {
    if (m->launch[pos] < 0) continue;
    m->pairing[pos].stack = TableStack(c.kernels[static_cast<size_t>(m->launch[pos])].stack);
  }
}

void GraphCaptureJoiner::JoinReplay(const std::vector<ReplayKernel>& kernels,
                                    std::vector<ReplayPairing>* out) {
  out->assign(kernels.size(), ReplayPairing{});
  if (kernels.empty()) return;
  const internal::LaneOrder lo = internal::OrderByLane(kernels);
  std::vector<ReplayKernel> ordered;
  ordered.reserve(kernels.size());
  set_names_.clear();
  // The signature: lane sizes, the step's batch, then the name keys and launch geometry in
  // lane order.
  std::string key;
  key.reserve((lo.lanes.size() + kernels.size() * 7) * sizeof(uint32_t));
  for (uint32_t n : lo.lanes) key.append(reinterpret_cast<const char*>(&n), sizeof(n));
  key.append(reinterpret_cast<const char*>(&kernels[0].step_batch), sizeof(uint32_t));
  for (uint32_t i : lo.order) {
    const ReplayKernel& k = kernels[i];
    ordered.push_back(k);
    set_names_.push_back(SetName(k));
    key.append(reinterpret_cast<const char*>(&k.name_key), sizeof(uint32_t));
    key.append(reinterpret_cast<const char*>(k.grid), sizeof(k.grid));
    key.append(reinterpret_cast<const char*>(k.block), sizeof(k.block));
  }
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    ReplayMatch m = internal::MatchReplay(*set_, ordered, lo.lanes, set_names_);
    FillPairing(ordered, &m);
    it = cache_.emplace(std::move(key), std::move(m)).first;
  }
  const ReplayMatch& m = it->second;
  Use& use = uses_[m.capture];
  ++use.replays;
  use.paired += m.paired;
  use.unpaired += kernels.size() - m.paired;
  use.equal_candidates = std::max(use.equal_candidates, m.equal_candidates);
  if (use.chosen_by.empty()) use.chosen_by = m.chosen_by;
  if (m.paired < kernels.size()) reasons_[m.reason] += kernels.size() - m.paired;
  for (size_t pos = 0; pos < lo.order.size(); ++pos) (*out)[lo.order[pos]] = m.pairing[pos];
  stats_->set_replays(stats_->replays() + 1);
  stats_->set_kernels(stats_->kernels() + kernels.size());
  stats_->set_matched(stats_->matched() + m.paired);
  stats_->set_unmatched(stats_->unmatched() + kernels.size() - m.paired);
}

void GraphCaptureJoiner::Finish() {
  for (const std::string& s : set_->sources) stats_->add_sources(s);
  stats_->set_captures(static_cast<uint32_t>(set_->captures.size()));
  stats_->set_method(
      "graph replay kernels paired with the launches recorded while the graph was captured: by "
      "kernel name where the capture's launch records name the kernel (ROCm), else by launch "
      "order and count, per stream (CUDA); ties between captures decided by launch geometry");
  for (const auto& [capture, use] : uses_) {
    if (capture < 0) continue;
    const GraphCapture& c = set_->captures[static_cast<size_t>(capture)];
    proto::GraphCaptureUse* u = stats_->add_uses();
    u->set_capture(c.label);
    u->set_method(c.named ? "kernel names" : "launch order and count");
    u->set_replays(use.replays);
    u->set_matched(use.paired);
    u->set_unmatched(use.unpaired);
    u->set_equal_candidates(use.equal_candidates);
    u->set_chosen_by(use.chosen_by);
    u->set_batch(c.batch);
    u->set_batch_source(c.batch_source);
    uint32_t pieces = 0;
    for (const GraphCapture& o : set_->captures) pieces += o.file == c.file && o.annotation == c.annotation;
    u->set_pieces(pieces);
  }
  if (auto none = uses_.find(-1); none != uses_.end()) {
    stats_->set_replays_without_capture(none->second.replays);
  }
  // A few reasons, most kernels first.
  std::vector<std::pair<uint64_t, std::string>> reasons;
  for (const auto& [r, n] : reasons_) reasons.emplace_back(n, r);
  std::sort(reasons.begin(), reasons.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; i < reasons.size() && i < 4; ++i) {
    stats_->add_notes(absl::StrCat(reasons[i].first, " kernels: ", reasons[i].second));
  }
  for (const std::string& w : set_->warnings) stats_->add_notes(w);
}

}  // namespace qprof::importers
