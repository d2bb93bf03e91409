#include "analysis/importers/common/import_util.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "proto/vocabulary.h"

namespace qprof::importers {

Progress::Progress(bool enabled, std::string what)
    : enabled_(enabled), what_(std::move(what)), start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void Progress::Update(uint64_t done, uint64_t total, const char* unit) {
  if (!enabled_ || (++calls_ & 63) != 0) return;
  UpdateNow(done, total, unit);
}

void Progress::UpdateNow(uint64_t done, uint64_t total, const char* unit) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::seconds(1)) return;
  last_ = now;
  printed_ = true;
  double secs = std::chrono::duration<double>(now - start_).count();
  if (total > 0) {
    std::fprintf(stderr, "qprof: %s: %llu of %llu %s (%.0f%%), %.1f s\n", what_.c_str(),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                 unit, 100.0 * static_cast<double>(done) / static_cast<double>(total), secs);
  } else {
    std::fprintf(stderr, "qprof: %s: %llu %s, %.1f s\n", what_.c_str(),
                 static_cast<unsigned long long>(done), unit, secs);
  }
}

void Progress::Finish() {
  if (!enabled_ || !printed_) return;
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "qprof: %s: done in %.1f s\n", what_.c_str(), secs);
}

void RangeNester::AddRange(ThreadKey thread, int64_t start, int64_t end, std::string name) {
  ranges_.push_back({thread, start, end, std::move(name)});
}

void RangeNester::AddLaunch(ThreadKey thread, int64_t time, int activity_index) {
  launches_.push_back({thread, time, activity_index});
}

void RangeNester::Resolve(proto::Trace* trace) {
  // Sweep each thread in time order: range starts (outer before inner at equal start, i.e.
  // longer first) and launches. A stack holds open ranges with their paths.
  std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) {
    if (!(a.thread == b.thread)) return a.thread < b.thread;
    if (a.start != b.start) return a.start < b.start;
    return a.end > b.end;
  });
  std::sort(launches_.begin(), launches_.end(), [](const Launch& a, const Launch& b) {
    if (!(a.thread == b.thread)) return a.thread < b.thread;
    return a.time < b.time;
  });
  struct Open {
    int64_t end;
    std::string path;
  };
  std::vector<Open> stack;
  size_t r = 0, l = 0;
  trace->mutable_ranges()->Reserve(trace->ranges_size() + static_cast<int>(ranges_.size()));
  while (r < ranges_.size() || l < launches_.size()) {
    // Pick the next thread to sweep.
    ThreadKey thread;
    if (r < ranges_.size() && (l >= launches_.size() || !(launches_[l].thread < ranges_[r].thread))) {
      thread = ranges_[r].thread;
    } else {
      thread = launches_[l].thread;
    }
    stack.clear();
    auto pop_ended = [&stack](int64_t t) {
      while (!stack.empty() && stack.back().end <= t) stack.pop_back();
    };
    while (true) {
      bool have_r = r < ranges_.size() && ranges_[r].thread == thread;
      bool have_l = l < launches_.size() && launches_[l].thread == thread;
      if (!have_r && !have_l) break;
      // At equal times a range start comes first: a launch at a range's start is inside it.
      if (have_r && (!have_l || ranges_[r].start <= launches_[l].time)) {
        const Range& rg = ranges_[r++];
        pop_ended(rg.start);
        std::string path = stack.empty() ? rg.name : stack.back().path + "/" + rg.name;
        proto::NvtxRange* out = trace->add_ranges();
        out->set_path(path);
        out->set_name(rg.name);
        out->set_start_ns(rg.start);
        out->set_end_ns(rg.end == kOpenEnd ? rg.start : rg.end);
        out->set_pid(rg.thread.pid);
        out->set_tid(rg.thread.tid);
        out->set_depth(static_cast<uint32_t>(stack.size()));
        stack.push_back({rg.end, std::move(path)});
      } else {
        const Launch& ln = launches_[l++];
        pop_ended(ln.time);
        if (!stack.empty() && ln.index >= 0 && ln.index < trace->activities_size()) {
          trace->mutable_activities(ln.index)->set_nvtx_path(stack.back().path);
        }
      }
    }
  }
  ranges_.clear();
  launches_.clear();
}

void FillImportedHeader(proto::Trace* trace, const std::string& path, const char* kind) {
  proto::TraceHeader* h = trace->mutable_header();
  h->set_schema_version(kTraceSchemaVersion);
  h->set_provenance(proto::PROVENANCE_IMPORTED);
  h->set_source_path(Utf8Clean(path));
  h->set_source_kind(kind);
  h->mutable_collector()->set_collector(std::string("import:") + kind);
}

}  // namespace qprof::importers
