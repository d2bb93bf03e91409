#include "analysis/aggregate/timeline_sample.h"

#include <algorithm>
#include <optional>
#include <tuple>

namespace qprof::aggregate {

namespace {

// A total order, so which launches a step keeps never depends on arrival order.
bool Before(const SampledLaunch& a, const SampledLaunch& b, const TimelineSample::Names& names) {
  return std::tie(a.start_ns, names[a.group], a.trace, a.device, a.stream, a.dur_ns,
                  a.nvtx_path) <
         std::tie(b.start_ns, names[b.group], b.trace, b.device, b.stream, b.dur_ns,
                  b.nvtx_path);
}

}  // namespace

void TimelineSample::Insert(std::vector<SampledLaunch>* v, SampledLaunch launch,
                            const Names& names) {
  // A max-heap of the first kMaxPerStep launches: one step never holds more.
  auto less = [&names](const SampledLaunch& a, const SampledLaunch& b) {
    return Before(a, b, names);
  };
  if (v->size() < kMaxPerStep) {
    v->push_back(std::move(launch));
    std::push_heap(v->begin(), v->end(), less);
    ++total_;
  } else if (less(launch, v->front())) {
    std::pop_heap(v->begin(), v->end(), less);
    v->back() = std::move(launch);
    std::push_heap(v->begin(), v->end(), less);
  }
}

void TimelineSample::Add(int64_t step, SampledLaunch launch, const Names& names) {
  if (!Wants(step)) return;
  Insert(&steps_[step], std::move(launch), names);
  if (total_ > kMaxEvents) Enforce();
}

void TimelineSample::Enforce() {
  while (total_ > kMaxEvents && steps_.size() > 1) {
    stride_ *= 2;
    DropUnwanted();
  }
}

void TimelineSample::DropUnwanted() {
  for (auto it = steps_.begin(); it != steps_.end();) {
    if (!Wants(it->first)) {
      total_ -= it->second.size();
      it = steps_.erase(it);
    } else {
      ++it;
    }
  }
}

void TimelineSample::Merge(TimelineSample&& other, const std::vector<uint32_t>& group_map,
                           uint32_t trace_offset, const Names& names) {
  stride_ = std::max(stride_, other.stride_);
  DropUnwanted();
  for (auto& [step, v] : other.steps_) {
    if (!Wants(step)) continue;
    std::vector<SampledLaunch>& mine = steps_[step];
    for (SampledLaunch& l : v) {
      l.group = group_map[l.group];
      l.trace += trace_offset;
      Insert(&mine, std::move(l), names);
    }
  }
  other.steps_.clear();
  Enforce();
}

std::optional<std::vector<SampledLaunch>> TimelineSample::Step(int64_t step,
                                                               const Names& names) const {
  auto it = steps_.find(step);
  if (it == steps_.end()) return std::nullopt;
  std::vector<SampledLaunch> v = it->second;
  std::sort(v.begin(), v.end(), [&names](const SampledLaunch& a, const SampledLaunch& b) {
    return Before(a, b, names);
  });
  return v;
}

std::vector<int64_t> TimelineSample::KeptSteps() const {
  std::vector<int64_t> out;
  for (const auto& [step, v] : steps_) out.push_back(step);
  return out;
}

void TimelineSample::ToProto(proto::PartialTimeline* out) const {
  out->set_stride(stride_);
  for (const auto& [step, v] : steps_) {
    proto::PartialTimelineStep* s = out->add_steps();
    s->set_step(step);
    for (const SampledLaunch& l : v) {
      proto::PartialLaunch* p = s->add_launches();
      p->set_start_ns(l.start_ns);
      p->set_dur_ns(l.dur_ns);
      p->set_kernel(l.group);
      p->set_trace(l.trace);
      p->set_device_id(l.device);
      p->set_stream_id(l.stream);
      p->set_nvtx_path(l.nvtx_path);
    }
  }
}

bool TimelineSample::FromProto(const proto::PartialTimeline& in, uint32_t traces,
                               const Names& names) {
  if (in.stride() < 1 || (in.stride() & (in.stride() - 1)) != 0) return false;
  stride_ = in.stride();
  steps_.clear();
  total_ = 0;
  for (const proto::PartialTimelineStep& s : in.steps()) {
    if (s.step() < 0 || s.step() % stride_ != 0 || steps_.count(s.step())) return false;
    if (static_cast<size_t>(s.launches_size()) > kMaxPerStep) return false;
    std::vector<SampledLaunch>& v = steps_[s.step()];
    for (const proto::PartialLaunch& p : s.launches()) {
      if (p.kernel() >= names.size() || p.trace() >= traces) return false;
      Insert(&v, {p.start_ns(), p.dur_ns(), p.kernel(), p.trace(), p.device_id(),
                  p.stream_id(), p.nvtx_path()},
             names);
    }
  }
  return total_ <= kMaxEvents || steps_.size() <= 1;
}

}  // namespace qprof::aggregate
