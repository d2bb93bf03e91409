#include "analysis/importers/common/import_util.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
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

uint32_t PrehashedStrings::Intern(std::string_view s, size_t hash, bool* added) {
  auto it = ids_.find(Key{s, hash});
  if (added != nullptr) *added = it == ids_.end();
  if (it != ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(s);
  ids_.emplace(Key{strings_.back(), hash}, id);
  return id;
}

uint32_t StringArena::Intern(std::string_view s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  // The empty string needs no bytes, and there may be no block yet to point into.
  if (s.empty()) {
    const uint32_t id = static_cast<uint32_t>(views_.size());
    views_.push_back(std::string_view());
    ids_.emplace(std::string_view(), id);
    return id;
  }
  if (capacity_ - used_ < s.size()) {
    capacity_ = std::max(kBlockBytes, s.size());
    blocks_.push_back(std::make_unique<char[]>(capacity_));
    used_ = 0;
  }
  char* at = blocks_.back().get() + used_;
  std::memcpy(at, s.data(), s.size());
  used_ += s.size();
  const std::string_view stored(at, s.size());
  const uint32_t id = static_cast<uint32_t>(views_.size());
  views_.push_back(stored);
  ids_.emplace(stored, id);
  return id;
}

void StringArena::Reserve(size_t n) {
  views_.reserve(n);
  ids_.reserve(n);
}

void RangeIndex::Reserve(size_t n) {
  ranges_.reserve(n);
  names_.Reserve(n);
}

void RangeIndex::AddRange(ThreadKey thread, int64_t start, int64_t end, std::string_view name) {
  if (last_thread_id_ == std::numeric_limits<uint32_t>::max() || !(thread == last_thread_)) {
    auto [it, added] = thread_ids_.try_emplace(thread, static_cast<uint32_t>(threads_.size()));
    if (added) threads_.push_back({thread});
    last_thread_ = thread;
    last_thread_id_ = it->second;
  }
  ranges_.push_back({start, end, last_thread_id_, names_.Intern(name)});
}

std::vector<RangeIndex::Range> RangeIndex::SortedRanges() {
  // Counting sort by thread, threads in key order; stable, so each thread keeps its order.
  std::vector<size_t> offset(threads_.size() + 1, 0);
  std::vector<uint32_t> rank(threads_.size());
  uint32_t r = 0;
  for (const auto& [key, id] : thread_ids_) rank[id] = r++;
  for (const Range& rg : ranges_) ++offset[rank[rg.thread] + 1];
  for (size_t t = 1; t < offset.size(); ++t) offset[t] += offset[t - 1];
  std::vector<Range> sorted(ranges_.size());
  std::vector<size_t> next(offset.begin(), offset.end() - 1);
  for (const Range& rg : ranges_) sorted[next[rank[rg.thread]]++] = rg;
  for (size_t t = 0; t + 1 < offset.size(); ++t) {
    SortRuns(sorted.begin() + static_cast<std::ptrdiff_t>(offset[t]),
             sorted.begin() + static_cast<std::ptrdiff_t>(offset[t + 1]),
             [](const Range& a, const Range& b) {
               return a.start != b.start ? a.start < b.start : a.end > b.end;
             });
  }
  return sorted;
}

void RangeIndex::Build(const std::function<void(const proto::NvtxRange&)>& emit) {
  // Sweep each thread's ranges in start order (outer before inner at equal start, i.e.
  // longer first) with a stack of open ranges: a range's parent is the stack's top once the
  // ranges that ended by its start are popped. `path` is the stack's path, each entry
  // remembering its length before the range's name was appended.
  const std::vector<Range> sorted = SortedRanges();
  ranges_.clear();
  ranges_.shrink_to_fit();
  nodes_.reserve(sorted.size());
  struct Open {
    int32_t node;
    size_t path_size;  // of `path` before this range's name
  };
  std::vector<Open> stack;
  std::string path;
  proto::NvtxRange out;
  for (size_t r = 0; r < sorted.size(); ++r) {
    const Range& rg = sorted[r];
    Thread& thread = threads_[rg.thread];
    if (r == 0 || sorted[r - 1].thread != rg.thread) {
      stack.clear();
      path.clear();
      thread.begin = nodes_.size();
    }
    while (!stack.empty() && nodes_[static_cast<size_t>(stack.back().node)].end <= rg.start) {
      path.resize(stack.back().path_size);
      stack.pop_back();
    }
    const int32_t parent = stack.empty() ? -1 : stack.back().node;
    const std::string_view name = names_[rg.name];
    const size_t before = path.size();
    if (parent >= 0) path += '/';
    path += name;
    out.set_path(path);
    out.set_name(name.data(), name.size());
    out.set_start_ns(rg.start);
    out.set_end_ns(rg.end == kOpenEnd ? rg.start : rg.end);
    out.set_pid(thread.key.pid);
    out.set_tid(thread.key.tid);
    out.set_depth(static_cast<uint32_t>(stack.size()));
    emit(out);
    stack.push_back({static_cast<int32_t>(nodes_.size()), before});
    nodes_.push_back({rg.start, rg.end, parent, rg.name});
    thread.end = nodes_.size();
  }
  path_of_.assign(nodes_.size(), kNoPath);
}

const std::string& RangeIndex::PathOf(int32_t i) const {
  // The chain up to the nearest ancestor with a path (or the root), then built downwards.
  std::vector<int32_t> chain;
  int32_t a = i;
  while (a >= 0 && path_of_[static_cast<size_t>(a)] == kNoPath) {
    chain.push_back(a);
    a = nodes_[static_cast<size_t>(a)].parent;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Node& n = nodes_[static_cast<size_t>(*it)];
    const std::string_view name = names_[n.name];
    std::string p;
    if (n.parent >= 0) {
      const std::string& up = paths_[path_of_[static_cast<size_t>(n.parent)]];
      p.reserve(up.size() + 1 + name.size());
      p.append(up).push_back('/');
    }
    p.append(name.data(), name.size());
    path_of_[static_cast<size_t>(*it)] = static_cast<uint32_t>(paths_.size());
    paths_.push_back(std::move(p));
  }
  return paths_[path_of_[static_cast<size_t>(i)]];
}

const std::string* RangeIndex::PathAt(ThreadKey thread, int64_t time) const {
  auto t = thread_ids_.find(thread);
  if (t == thread_ids_.end()) return nullptr;
  const Thread& th = threads_[t->second];
  auto begin = nodes_.begin() + static_cast<std::ptrdiff_t>(th.begin);
  auto end = nodes_.begin() + static_cast<std::ptrdiff_t>(th.end);
  // The last range opened at or before `time` is the stack's top then; pop what has ended.
  auto it = std::upper_bound(begin, end, time,
                             [](int64_t tm, const Node& n) { return tm < n.start; });
  if (it == begin) return nullptr;
  int32_t i = static_cast<int32_t>(it - nodes_.begin()) - 1;
  while (i >= 0 && nodes_[static_cast<size_t>(i)].end <= time) i = nodes_[static_cast<size_t>(i)].parent;
  return i < 0 ? nullptr : &PathOf(i);
}

void FillImportedHeader(proto::TraceHeader* h, const std::string& path, const char* kind) {
  h->set_schema_version(kTraceSchemaVersion);
  h->set_provenance(proto::PROVENANCE_IMPORTED);
  h->set_source_path(Utf8Clean(path));
  h->set_source_kind(kind);
  h->mutable_collector()->set_collector(std::string("import:") + kind);
}

bool IsLaunchCall(std::string_view name) {
  return name.find("Launch") != std::string_view::npos &&
         name.find("HostFunc") == std::string_view::npos;
}

void CountHostCall(std::string_view name, int64_t dur_ns, proto::TraceHeader* header) {
  if (dur_ns < 0) return;
  proto::HostCalls* h = header->mutable_host_calls();
  h->set_runtime_calls(h->runtime_calls() + 1);
  h->set_runtime_ns(h->runtime_ns() + static_cast<uint64_t>(dur_ns));
  if (IsLaunchCall(name)) {
    h->set_launch_calls(h->launch_calls() + 1);
    h->set_launch_ns(h->launch_ns() + static_cast<uint64_t>(dur_ns));
  }
  if (std::string_view kind = SyncKindOf(name); !kind.empty()) {
    AddSyncCalls(kind, 1, static_cast<uint64_t>(dur_ns), header);
  }
}

std::string_view SyncKindOf(std::string_view name) {
  // Only calls whose names say Synchronize or Memcpy can be one: most calls leave here.
  // CUDA runtime/driver names start with 'c', HIP's (ROCm traces) with 'h'.
  if (name.size() < 8 || (name[0] != 'c' && name[0] != 'h')) return "";
  auto strip = [&name](std::string_view suffix_start, bool digits) {
    const size_t at = name.rfind(suffix_start);
    if (at == std::string_view::npos || at == 0) return;
    std::string_view rest = name.substr(at + suffix_start.size());
    if (!digits || (!rest.empty() && rest.find_first_not_of("0123456789") == std::string_view::npos)) {
      name = name.substr(0, at);
    }
  };
  strip("_v", true);
  if (name.size() > 5 && (name.substr(name.size() - 5) == "_ptsz" ||
                          name.substr(name.size() - 5) == "_ptds")) {
    name.remove_suffix(5);
  }
  if (name == "cudaDeviceSynchronize" || name == "cudaThreadSynchronize" ||
      name == "cuCtxSynchronize" || name == "hipDeviceSynchronize" ||
      name == "hipCtxSynchronize") {
    return "device_synchronize";
  }
  if (name == "cudaStreamSynchronize" || name == "cuStreamSynchronize" ||
      name == "hipStreamSynchronize") {
    return "stream_synchronize";
  }
  if (name == "cudaEventSynchronize" || name == "cuEventSynchronize" ||
      name == "hipEventSynchronize") {
    return "event_synchronize";
  }
  // hipMemcpyWithStream is HIP's blocking copy on a stream: it returns when the copy is done.
  if ((name.rfind("cudaMemcpy", 0) == 0 || name.rfind("cuMemcpy", 0) == 0 ||
       name.rfind("hipMemcpy", 0) == 0) &&
      name.find("Async") == std::string_view::npos) {
    return "synchronous_copy";
  }
  return "";
}

void AddSyncCalls(std::string_view kind, uint64_t calls, uint64_t ns, proto::TraceHeader* header) {
  proto::HostCalls* h = header->mutable_host_calls();
  for (proto::HostSyncCalls& k : *h->mutable_sync()) {
    if (k.kind() == kind) {
      k.set_calls(k.calls() + calls);
      k.set_ns(k.ns() + ns);
      return;
    }
  }
  proto::HostSyncCalls* k = h->add_sync();
  k->set_kind(std::string(kind));
  k->set_calls(calls);
  k->set_ns(ns);
}

}  // namespace qprof::importers
