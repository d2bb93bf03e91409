#include "analysis/importers/nsys/launch_join.h"

#include <algorithm>

#include "base/status_macros.h"

namespace qprof::importers {
namespace {

uint32_t PidOf(int64_t global) { return static_cast<uint32_t>((global >> 24) & 0xFFFFFF); }

}  // namespace

// The heap order of Process::late: the smallest entry on top.
bool RuntimeJoin::LaterFirst(const Entry& a, const Entry& b) { return b < a; }

const RuntimeJoin::Entry& RuntimeJoin::Process::Front() const {
  if (late.empty()) return window.front();
  if (window.empty() || late.front() < window.front()) return late.front();
  return window.front();
}

void RuntimeJoin::Process::PopFront() {
  if (!late.empty() && (window.empty() || late.front() < window.front())) {
    std::pop_heap(late.begin(), late.end(), LaterFirst);
    late.pop_back();
  } else {
    window.pop_front();
  }
}

absl::Status RuntimeJoin::Fill() {
  while (in_windows_ < window_ && !exhausted_ && !failed_) {
    ASSIGN_OR_RETURN(bool row, runtime_->Next());
    if (!row) {
      exhausted_ = true;
      break;
    }
    const RowReader& r = *runtime_;
    if (on_row_) on_row_(r);
    Entry e{r.Int(1), r.Int(2), rows_++, r.Int(0), has_name_ && !r.IsNull(3) ? r.Int(3) : -1};
    Process& p = processes_[PidOf(e.gtid)];  // no pointer cache: Find's must stay valid
    if (e.corr <= p.handed_until) {
      failed_ = true;  // a row behind the window: the tables are too far out of order
      break;
    }
    if (p.window.empty() || !(e < p.window.back())) {
      p.window.push_back(e);
    } else {
      p.late.push_back(e);
      std::push_heap(p.late.begin(), p.late.end(), LaterFirst);
    }
    ++in_windows_;
  }
  return absl::OkStatus();
}

absl::Status RuntimeJoin::Drain() {
  while (!exhausted_) {
    ASSIGN_OR_RETURN(bool row, runtime_->Next());
    if (!row) {
      exhausted_ = true;
      break;
    }
    if (on_row_) on_row_(*runtime_);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<RuntimeJoin::Launch>> RuntimeJoin::Find(uint32_t pid,
                                                                      int64_t correlation) {
  RETURN_IF_ERROR(Fill());
  if (last_process_ == nullptr || last_pid_ != pid) {
    last_process_ = &processes_[pid];  // unordered_map nodes do not move
    last_pid_ = pid;
  }
  Process& p = *last_process_;
  // Hand over every row up to the id asked for, reading ahead as the window empties.
  while (!failed_ && !p.Empty() && p.Front().corr <= correlation) {
    const Entry e = p.Front();
    p.PopFront();
    --in_windows_;
    if (p.recent.empty() || p.recent.back().corr != e.corr) {  // else a later duplicate
      p.recent.push_back(e);
      if (p.recent.size() > recent_) {
        p.dropped_until = p.recent.front().corr;
        p.recent.pop_front();
      }
    }
    RETURN_IF_ERROR(Fill());
  }
  if (failed_) return std::nullopt;
  // From now on a row with an id up to this one would be out of order: Fill() checks it.
  p.handed_until = std::max(p.handed_until, correlation);
  if (correlation <= p.dropped_until) {
    failed_ = true;  // asked for an id the recent list no longer holds
    return std::nullopt;
  }
  if (!p.recent.empty() && p.recent.back().corr == correlation) {  // in order: the usual case
    return Launch{p.recent.back().gtid, p.recent.back().start, p.recent.back().name};
  }
  auto it = std::lower_bound(p.recent.begin(), p.recent.end(), correlation,
                             [](const Entry& e, int64_t c) { return e.corr < c; });
  if (it == p.recent.end() || it->corr != correlation) return std::nullopt;
  return Launch{it->gtid, it->start, it->name};
}

}  // namespace qprof::importers
