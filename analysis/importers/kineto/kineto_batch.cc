#include "analysis/importers/kineto/kineto_batch.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "base/text.h"

namespace qprof::importers {
namespace {

namespace od = simdjson::ondemand;

// What a packed event holds after its head and name (flags in PackedHead::parts).
enum PackedPart : uint8_t {
  kHasTs = 1,
  kHasDur = 2,
  kHasCorrelation = 4,
  kGpuArgs = 8,   // KinetoEvent::GpuArgs, when not all default
  kShapes = 16,   // shapes and shapes_hash
  kLists = 32,    // extra_args, launch_kernel, metrics, text_ids
};

struct PackedHead {
  int64_t ts_ns, dur_ns;
  uint64_t tid_num, correlation;
  size_t name_hash;
  uint32_t pid_num, name_size;
  KinetoEventKind kind;
  uint8_t parts;
};

template <typename T>
void Put(const T& v, std::string* out) {
  static_assert(std::is_trivially_copyable_v<T>);
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

void PutString(std::string_view s, std::string* out) {
  Put(static_cast<uint32_t>(s.size()), out);
  out->append(s);
}

// Reads back what Put and PutString wrote, in the same order.
class Unpacker {
 public:
  explicit Unpacker(const char* p) : p_(p) {}
  const char* position() const { return p_; }

  template <typename T>
  T Get() {
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  std::string_view Bytes(size_t n) {
    std::string_view s(p_, n);
    p_ += n;
    return s;
  }
  std::string_view String() { return Bytes(Get<uint32_t>()); }

 private:
  const char* p_;
};

void PutLists(const KinetoEvent& e, std::string* out) {
  Put(static_cast<uint32_t>(e.extra_args.size()), out);
  for (const auto& [k, v] : e.extra_args) {
    PutString(k, out);
    PutString(v, out);
  }
  PutString(e.launch_kernel, out);
  Put(static_cast<uint32_t>(e.metrics.size()), out);
  for (const auto& [k, v] : e.metrics) {
    PutString(k, out);
    Put(v, out);
  }
  Put(static_cast<uint32_t>(e.text_ids.size()), out);
  for (const auto& [field, text] : e.text_ids) {
    Put(field, out);
    PutString(text, out);
  }
}

void GetLists(Unpacker& in, KinetoEvent* e) {
  e->extra_args.resize(in.Get<uint32_t>());
  for (auto& [k, v] : e->extra_args) {
    k.assign(in.String());
    v.assign(in.String());
  }
  e->launch_kernel.assign(in.String());
  e->metrics.resize(in.Get<uint32_t>());
  for (auto& [k, v] : e->metrics) {
    k.assign(in.String());
    v = in.Get<double>();
  }
  e->text_ids.resize(in.Get<uint32_t>());
  for (auto& [field, text] : e->text_ids) {
    field = in.Get<KinetoEvent::IdField>();
    text.assign(in.String());
  }
}

}  // namespace

void DecodedBatch::Clear() {
  done = 0;
  error = simdjson::SUCCESS;
  repaired_bytes = 0;
  packed_.clear();
  read_ = 0;
}

void DecodedBatch::Add(const KinetoEvent& e) {
  const bool shapes = !e.shapes.empty();
  const bool lists = !e.extra_args.empty() || !e.launch_kernel.empty() || !e.metrics.empty() ||
                     !e.text_ids.empty();
  PackedHead h{};
  h.ts_ns = e.ts_ns;
  h.dur_ns = e.dur_ns;
  h.tid_num = e.tid_num;
  h.correlation = e.correlation;
  h.name_hash = e.name_hash;
  h.pid_num = e.pid_num;
  h.name_size = static_cast<uint32_t>(e.name.size());
  h.kind = e.kind;
  h.parts = (e.has_ts ? kHasTs : 0) | (e.has_dur ? kHasDur : 0) |
            (e.has_correlation ? kHasCorrelation : 0) |
            (e.gpu == KinetoEvent::GpuArgs{} ? 0 : kGpuArgs) | (shapes ? kShapes : 0) |
            (lists ? kLists : 0);
  Put(h, &packed_);
  packed_.append(e.name);
  if (h.parts & kGpuArgs) Put(e.gpu, &packed_);
  if (shapes) {
    PutString(e.shapes, &packed_);
    Put(e.shapes_hash, &packed_);
  }
  if (lists) PutLists(e, &packed_);
}

bool DecodedBatch::Next(KinetoEvent* e) {
  if (read_ >= packed_.size()) return false;
  Unpacker in(packed_.data() + read_);
  const auto h = in.Get<PackedHead>();
  e->kind = h.kind;
  e->name.assign(in.Bytes(h.name_size));
  e->has_ts = h.parts & kHasTs;
  e->has_dur = h.parts & kHasDur;
  e->has_correlation = h.parts & kHasCorrelation;
  e->ts_ns = h.ts_ns;
  e->dur_ns = h.dur_ns;
  e->tid_num = h.tid_num;
  e->pid_num = h.pid_num;
  e->correlation = h.correlation;
  e->name_hash = h.name_hash;
  e->gpu = h.parts & kGpuArgs ? in.Get<KinetoEvent::GpuArgs>() : KinetoEvent::GpuArgs{};
  if (h.parts & kShapes) {
    e->shapes.assign(in.String());
    e->shapes_hash = in.Get<size_t>();
  } else {
    e->shapes.clear();
    e->shapes_hash = 0;
  }
  if (h.parts & kLists) {
    GetLists(in, e);
  } else {
    e->extra_args.clear();
    e->launch_kernel.clear();
    e->metrics.clear();
    e->text_ids.clear();
  }
  read_ = static_cast<size_t>(in.position() - packed_.data());
  return true;
}

void BatchDecoder::Decode(char* data, size_t size, size_t capacity, DecodedBatch* out,
                          const std::function<void(KinetoEvent&)>& take) {
  out->Clear();
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
          out->Add(ev_);
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

void ParallelBatches::Recycle(DecodedBatch&& batch) {
  std::lock_guard<std::mutex> lock(mu_);
  spare_decoded_.push_back(std::move(batch));
}

void ParallelBatches::Work() {
  BatchDecoder decoder;  // one simdjson parser per thread
  while (true) {
    Job job;
    DecodedBatch result;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      if (!spare_decoded_.empty()) {
        result = std::move(spare_decoded_.back());
        spare_decoded_.pop_back();
      }
    }
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
