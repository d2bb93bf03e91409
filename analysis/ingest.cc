#include "analysis/ingest.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace qprof {
absl::StatusOr<aggregate::ProfileState> IngestFile(const std::string& path,
                                                   const importers::ImportOptions& options) {
  // (Aggregating on a second thread while the importer reads was tried: handing records
  // between threads cost more than it saved.)
  aggregate::ProfileState state;
  aggregate::TraceAccumulator acc(&state);
  absl::Status s = importers::StreamFile(path, &acc, options);
  if (!s.ok()) return s;
  return state;
}

absl::StatusOr<aggregate::ProfileState> IngestFiles(const std::vector<std::string>& paths,
                                                    const IngestOptions& options) {
  if (paths.empty()) return absl::InvalidArgumentError("no traces to analyse");
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  size_t threads = options.threads > 0 ? static_cast<size_t>(options.threads) : cores;
  threads = std::min(threads, paths.size());
  importers::ImportOptions import = options.import;
  // Files in parallel already use the cores; one file alone may use them inside its importer.
  if (threads > 1) import.threads = 1;

  std::vector<std::optional<absl::StatusOr<aggregate::ProfileState>>> done(paths.size());
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) {
      absl::StatusOr<aggregate::ProfileState> r = IngestFile(paths[i], import);
      std::lock_guard<std::mutex> lock(mu);
      done[i] = std::move(r);
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  // This thread reads too, and merges each state once every file before it is merged, so
  // finished states do not pile up.
  aggregate::ProfileState merged;
  absl::Status error;
  size_t merged_upto = 0;
  auto merge_ready = [&](std::unique_lock<std::mutex>& lock) {
    while (merged_upto < paths.size() && done[merged_upto].has_value()) {
      absl::StatusOr<aggregate::ProfileState> r = std::move(*done[merged_upto]);
      done[merged_upto].reset();
      ++merged_upto;
      lock.unlock();
      if (!r.ok()) {
        if (error.ok()) error = r.status();
      } else if (error.ok()) {
        merged.Merge(std::move(*r));
      }
      lock.lock();
    }
  };
  for (size_t i = next++; i < paths.size(); i = next++) {
    absl::StatusOr<aggregate::ProfileState> r = IngestFile(paths[i], import);
    std::unique_lock<std::mutex> lock(mu);
    done[i] = std::move(r);
    merge_ready(lock);
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    while (merged_upto < paths.size()) {
      cv.wait(lock, [&] { return done[merged_upto].has_value(); });
      merge_ready(lock);
    }
  }
  for (std::thread& t : pool) t.join();
  if (!error.ok()) return error;
  return merged;
}

}  // namespace qprof
