// Decoding batches of Kineto events, on the calling thread or on worker threads.
//
// BatchDecoder turns one EventBatch (json_stream.h) into the events an importer keeps: the
// GPU activities, launch calls, annotations and counter ranges, plus the pid/tid texts of
// any event (so IdNumbering sees them in document order). Ignored events cost a find of
// their "cat".
//
// ParallelBatches runs BatchDecoders on worker threads: the reader thread submits batches
// as the streamer cuts them (fast-path cuts at "}, {"; a cut that was not at an event
// boundary makes its batch fail to parse) and takes the decoded batches back in submission
// order, so everything downstream sees the events in document order, as with one thread.
// A batch that does not decode cleanly is reported as failed: the caller then reads the
// file again on one thread, where the streamer redoes such batches event by event.
#ifndef QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_BATCH_H_
#define QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_BATCH_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "analysis/importers/kineto/json_stream.h"
#include "analysis/importers/kineto/kineto_event.h"
#include "simdjson.h"

namespace qprof::importers {

// The events a worker kept from one batch (kept kinds, and ignored ones with pid/tid
// texts), packed for the thread that commits them: per event a fixed head, the name, and
// only the parts it carries (GPU args, op shapes, the rarer lists). That is 132 bytes per
// event on average in a 261 MB PyTorch trace, where a KinetoEvent takes ~370 and its
// strings on the heap besides, so the committing thread reads each from a few cache lines,
// and a recycled batch keeps its buffer: no allocation per event on either side.
class DecodedBatch {
 public:
  size_t done = 0;                  // events of the batch decoded before an error
  simdjson::error_code error = simdjson::SUCCESS;
  uint64_t repaired_bytes = 0;      // invalid UTF-8 bytes replaced by '?'

  void Clear();
  void Add(const KinetoEvent& e);
  // Reads the next event into *e (whose buffers are reused); false after the last.
  bool Next(KinetoEvent* e);

 private:
  std::string packed_;
  size_t read_ = 0;
};

class BatchDecoder {
 public:
  // Decodes the whole batch; on an error, `error` and `done` say where it stopped. `data`
  // may be rewritten in place when it holds invalid UTF-8 (bytes replaced by '?'). Events
  // are added to *out, or handed to `take` (which may move from them) when given.
  void Decode(char* data, size_t size, size_t capacity, DecodedBatch* out,
              const std::function<void(KinetoEvent&)>& take = nullptr);
  KinetoEventDecoder& decoder() { return decoder_; }

 private:
  simdjson::ondemand::parser parser_;
  KinetoEventDecoder decoder_;
  KinetoEvent ev_;
};

class ParallelBatches {
 public:
  explicit ParallelBatches(int workers);
  ~ParallelBatches();
  // Takes the batch's bytes (swapping *buffer with a spare one).
  void Submit(std::vector<char>* buffer, size_t size, size_t capacity);
  // The oldest batch when it is decoded (wait: block until it is); nullopt when none.
  std::optional<DecodedBatch> Next(bool wait);
  // Hands a batch from Next back once its events are read: later batches are packed into
  // its buffer.
  void Recycle(DecodedBatch&& batch);
  size_t in_flight() const { return next_seq_ - taken_seq_; }

 private:
  struct Job {
    uint64_t seq;
    std::vector<char> bytes;
    size_t size, capacity;
  };
  void Work();

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Job> jobs_;
  std::vector<std::pair<uint64_t, DecodedBatch>> done_;
  std::vector<std::vector<char>> spare_;
  std::vector<DecodedBatch> spare_decoded_;
  uint64_t next_seq_ = 0, taken_seq_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_BATCH_H_
