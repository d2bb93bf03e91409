#include "analysis/importers/kineto/kineto_batch.h"

#include <algorithm>

#include "base/text.h"

namespace qprof::importers {

namespace od = simdjson::ondemand;

void BatchDecoder::Decode(char* data, size_t size, size_t capacity, DecodedBatch* out,
                          const std::function<void(KinetoEvent&)>& take) {
  out->events.clear();
  out->done = 0;
  out->repaired_bytes = 0;
  od::document doc;
  auto err = parser_.iterate(data, size, capacity).get(doc);
  if (err == simdjson::UTF8_ERROR) {
    // Invalid UTF-8 inside strings: replace the bad bytes (same length) and go on.
    // (simdjson validated everything else, so names need no second check.)
    out->repaired_bytes = RepairUtf8(data, size);
    err = parser_.iterate(data, size, capacity).get(doc);
  }
  od::array arr;
  if (!err) err = doc.get_array().get(arr);
  if (!err) {
    for (auto elem : arr) {
      od::object obj;
      err = elem.get_object().get(obj);
      if (!err) err = decoder_.Decode(obj, &ev_);
      if (err) break;
      if (ev_.kind != KinetoEventKind::kIgnored || !ev_.text_ids.empty()) {
        if (take) {
          take(ev_);
        } else {
          out->events.push_back(ev_);
        }
      }
      ++out->done;
    }
  }
  out->error = err;
}

ParallelBatches::ParallelBatches(int workers) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Work(); });
}

ParallelBatches::~ParallelBatches() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ParallelBatches::Submit(std::vector<char>* buffer, size_t size, size_t capacity) {
  Job job{next_seq_++, {}, size, capacity};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!spare_.empty()) {
      job.bytes = std::move(spare_.back());
      spare_.pop_back();
    }
    std::swap(job.bytes, *buffer);
    jobs_.push_back(std::move(job));
  }
  work_cv_.notify_one();
}

std::optional<DecodedBatch> ParallelBatches::Next(bool wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (taken_seq_ == next_seq_) return std::nullopt;
  auto ready = [this] {
    return std::any_of(done_.begin(), done_.end(),
                       [this](const auto& d) { return d.first == taken_seq_; });
  };
  if (!ready()) {
    if (!wait) return std::nullopt;
    done_cv_.wait(lock, ready);
  }
  auto it = std::find_if(done_.begin(), done_.end(),
                         [this](const auto& d) { return d.first == taken_seq_; });
  DecodedBatch out = std::move(it->second);
  done_.erase(it);
  ++taken_seq_;
  return out;
}

void ParallelBatches::Work() {
  BatchDecoder decoder;  // one simdjson parser per thread
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    DecodedBatch result;
    decoder.Decode(job.bytes.data(), job.size, job.capacity, &result);
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_.emplace_back(job.seq, std::move(result));
      spare_.push_back(std::move(job.bytes));
    }
    done_cv_.notify_all();
  }
}

}  // namespace qprof::importers
