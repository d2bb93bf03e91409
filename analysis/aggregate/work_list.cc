#include "analysis/aggregate/work_list.h"

namespace qprof::aggregate {

void WorkList::ToDistinct() {
  mode_ = Mode::kDistinct;
  for (const LaunchWork& w : list_) ++distinct_[w];
  list_.clear();
  list_.shrink_to_fit();
  if (distinct_.size() > kMaxDistinct) ToTotals();
}

void WorkList::ToTotals() {
  if (mode_ == Mode::kList) ToDistinct();
  mode_ = Mode::kTotals;
  for (const auto& [w, n] : distinct_) {
    auto& t = totals_[w.pipe];
    t.first += w.bytes * static_cast<double>(n);
    t.second += w.flops * static_cast<double>(n);
  }
  distinct_.clear();
}

void WorkList::Add(const LaunchWork& w) {
  ++count_;
  switch (mode_) {
    case Mode::kList:
      list_.push_back(w);
      if (list_.size() > kExactLimit) ToDistinct();
      return;
    case Mode::kDistinct:
      ++distinct_[w];
      if (distinct_.size() > kMaxDistinct) ToTotals();
      return;
    case Mode::kTotals: {
      auto& t = totals_[w.pipe];
      t.first += w.bytes;
      t.second += w.flops;
      return;
    }
  }
}

void WorkList::Merge(const WorkList& o) {
  if (o.count_ == 0) return;
  if (mode_ == Mode::kList && o.mode_ == Mode::kList && count_ + o.count_ <= kExactLimit) {
    list_.insert(list_.end(), o.list_.begin(), o.list_.end());
    count_ += o.count_;
    return;
  }
  if (mode_ == Mode::kList) ToDistinct();
  if (o.mode_ == Mode::kTotals && mode_ != Mode::kTotals) ToTotals();
  count_ += o.count_;
  auto add = [this](const LaunchWork& w, uint64_t n) {
    if (mode_ == Mode::kTotals) {
      auto& t = totals_[w.pipe];
      t.first += w.bytes * static_cast<double>(n);
      t.second += w.flops * static_cast<double>(n);
    } else {
      distinct_[w] += n;
    }
  };
  for (const LaunchWork& w : o.list_) add(w, 1);
  for (const auto& [w, n] : o.distinct_) add(w, n);
  for (const auto& [pipe, t] : o.totals_) {
    auto& mine = totals_[pipe];
    mine.first += t.first;
    mine.second += t.second;
  }
  if (mode_ == Mode::kDistinct && distinct_.size() > kMaxDistinct) ToTotals();
}

double WorkList::Sum(const std::function<double(const LaunchWork&)>& roof) const {
  double total = 0;
  for (const LaunchWork& w : list_) {
    double r = roof(w);
    if (r < 0) return -1;
    total += r;
  }
  for (const auto& [w, n] : distinct_) {
    double r = roof(w);
    if (r < 0) return -1;
    total += r * static_cast<double>(n);
  }
  for (const auto& [pipe, t] : totals_) {
    double r = roof(LaunchWork{t.first, t.second, pipe});
    if (r < 0) return -1;
    total += r;
  }
  return total;
}

void WorkList::ToProto(proto::PartialWork* out) const {
  out->set_count(count_);
  out->set_mode(static_cast<uint32_t>(mode_));
  auto entry = [out](const LaunchWork& w, uint64_t n) {
    proto::PartialWorkEntry* e = out->add_entries();
    e->set_bytes(w.bytes);
    e->set_flops(w.flops);
    e->set_compute_pipe(w.pipe);
    e->set_count(n);
  };
  for (const LaunchWork& w : list_) entry(w, 1);
  for (const auto& [w, n] : distinct_) entry(w, n);
  for (const auto& [pipe, t] : totals_) entry(LaunchWork{t.first, t.second, pipe}, 0);
}

bool WorkList::FromProto(const proto::PartialWork& in) {
  if (in.mode() > 2) return false;
  mode_ = static_cast<Mode>(in.mode());
  count_ = in.count();
  uint64_t n = 0;
  for (const proto::PartialWorkEntry& e : in.entries()) {
    LaunchWork w{e.bytes(), e.flops(), e.compute_pipe()};
    switch (mode_) {
      case Mode::kList:
        if (e.count() != 1) return false;
        list_.push_back(w);
        n += 1;
        break;
      case Mode::kDistinct:
        if (e.count() == 0 || e.count() > count_) return false;
        distinct_[w] += e.count();
        n += e.count();
        break;
      case Mode::kTotals:
        totals_[w.pipe] = {w.bytes, w.flops};
        break;
    }
  }
  if (mode_ == Mode::kList) return n == count_ && n <= kExactLimit;
  if (mode_ == Mode::kDistinct) return n == count_;
  return true;
}

}  // namespace qprof::aggregate
