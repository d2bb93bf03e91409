#include "analysis/importers/kineto/json_stream.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace qprof::importers {
namespace {

constexpr size_t kNpos = static_cast<size_t>(-1);
constexpr size_t kPadding = 64;  // SIMDJSON_PADDING

bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Finds where one JSON value ends; resumable across buffer refills.
struct ValueScanner {
  int depth = 0;
  bool in_str = false, esc = false, started = false, scalar = false;

  // Scans b[i, n). Returns the index just past the value, or kNpos if it goes on past n.
  size_t Scan(const char* b, size_t i, size_t n) {
    while (i < n) {
      if (in_str) {
        if (esc) {
          esc = false;
          ++i;
          continue;
        }
        const void* q = std::memchr(b + i, '"', n - i);
        size_t q_at = q ? static_cast<size_t>(static_cast<const char*>(q) - b) : n;
        const void* bs = std::memchr(b + i, '\\', q_at - i);
        if (bs) {
          i = static_cast<size_t>(static_cast<const char*>(bs) - b) + 1;
          esc = true;
          continue;
        }
        if (!q) return kNpos;
        i = q_at + 1;
        in_str = false;
        if (depth == 0) return i;
        continue;
      }
      char c = b[i];
      if (!started) {
        started = true;
        if (c == '{' || c == '[') {
          depth = 1;
        } else if (c == '"') {
          in_str = true;
        } else {
          scalar = true;
        }
        ++i;
        continue;
      }
      if (scalar) {
        if (c == ',' || c == '}' || c == ']' || IsWs(c)) return i;
        ++i;
        continue;
      }
      if (c == '"') {
        in_str = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return kNpos;
  }
};

class Streamer {
 public:
  Streamer(ByteSource* src, const std::string& label, TraceJsonHandler* h, Progress* progress,
           const JsonStreamLimits& limits)
      : src_(src), label_(label), h_(h), progress_(progress), limits_(limits) {
    // A handler that keeps the bytes is handed each batch with the buffer it was read into
    // (HandOver): reads of one batch keep that buffer a batch long, and what follows the
    // cut, which moves to the next buffer, the partial event the read ended in.
    if (h_->KeepsBatchBytes()) {
      limits_.read_bytes = std::min(limits_.read_bytes, limits_.batch_bytes);
    }
    buf_.resize(std::min<size_t>(limits_.read_bytes, 64 << 10) * 2 + kPadding);
  }

  absl::Status Run() {
    absl::Status s = RunDocument();
    // A source that failed part way (a cut gzip stream) was read as if it ended there; its
    // own error says more than "JSON ended early" (or "empty document" when it gave
    // nothing), so it wins then. An error found in the bytes before the cut stands.
    if (!source_error_.ok() && (s.ok() || absl::IsDataLoss(s) || base_ + end_ == 0)) {
      return absl::DataLossError(absl::StrCat(source_error_.message(),
                                              s.ok() ? "" : absl::StrCat("; ", s.message())));
    }
    return s;
  }

 private:
  absl::Status RunDocument() {
    size_t i = 0;
    ASSIGN_OR_RETURN(bool any, SkipWs(&i));
    if (!any) return absl::InvalidArgumentError(absl::StrCat(label_, ": empty JSON document"));
    if (end_ - i >= 3 && std::memcmp(&buf_[i], "\xEF\xBB\xBF", 3) == 0) {
      i += 3;
      ASSIGN_OR_RETURN(any, SkipWs(&i));
    }
    if (any && buf_[i] == '[') return StreamArray(i);
    if (!any || buf_[i] != '{') {
      return absl::InvalidArgumentError(absl::StrCat(
          label_, ": not a trace JSON (expected '{' or '[' at byte ", base_ + i, ")"));
    }
    ++i;
    bool saw_events = false;
    while (true) {
      ASSIGN_OR_RETURN(any, SkipWs(&i));
      if (!any) return Truncated(i, "in the top-level object");
      char c = buf_[i];
      if (c == '}') break;
      if (c == ',') {
        ++i;
        continue;
      }
      if (c != '"') {
        return absl::InvalidArgumentError(
            absl::StrCat(label_, ": malformed JSON at byte ", base_ + i, ": expected a key"));
      }
      pos_ = i;
      ASSIGN_OR_RETURN(size_t key_end, ScanWhole(&i));  // i = key start after refills
      std::string key(&buf_[i + 1], key_end - i - 2);
      i = key_end;
      ASSIGN_OR_RETURN(any, SkipWs(&i));
      if (!any) return Truncated(i, "after a key");
      if (buf_[i] != ':') {
        return absl::InvalidArgumentError(
            absl::StrCat(label_, ": malformed JSON at byte ", base_ + i, ": expected ':'"));
      }
      ++i;
      ASSIGN_OR_RETURN(any, SkipWs(&i));
      if (!any) return Truncated(i, "after a key");
      if (key == "traceEvents" && buf_[i] == '[') {
        saw_events = true;
        RETURN_IF_ERROR(StreamArray(i));
        i = pos_;
        continue;
      }
      RETURN_IF_ERROR(Member(key, &i));
    }
    if (!saw_events) {
      return absl::InvalidArgumentError(absl::StrCat(
          label_, ": JSON without a traceEvents array (not a PyTorch profiler/Chrome trace)"));
    }
    return absl::OkStatus();
  }

  absl::Status Truncated(size_t i, const char* where) {
    return absl::DataLossError(absl::StrCat(label_, ": truncated JSON: input ended at byte ",
                                            base_ + i, " ", where));
  }

  // Drops bytes before pos_, reads more. *i is shifted with the data. False at EOF.
  absl::StatusOr<bool> Fill(size_t* i, size_t* j = nullptr) {
    if (eof_) return false;
    // Compact, keeping one byte before pos_: a batch framed in place writes its '[' there.
    if (pos_ > 1) {
      const size_t shift = pos_ - 1;
      std::memmove(buf_.data() + 1, buf_.data() + pos_, end_ - pos_);
      base_ += shift;
      end_ -= shift;
      *i -= shift;
      if (j != nullptr) *j = *j >= shift ? *j - shift : 0;
      pos_ = 1;
    }
    // The buffer starts small (small inputs stay cheap) and doubles while it is nearly
    // full: up to read_bytes for throughput, beyond only for one value that big.
    const size_t min_read = std::min<size_t>(limits_.read_bytes, 64 << 10);
    if (buf_.size() - kPadding - end_ < min_read ||
        (buf_.size() - kPadding < limits_.read_bytes && end_ > (buf_.size() - kPadding) / 2)) {
      if (end_ >= limits_.max_value_bytes) {
        return absl::InvalidArgumentError(
            absl::StrCat(label_, ": a JSON value at byte ", base_, " is larger than ",
                         limits_.max_value_bytes >> 20, " MiB (input too large to import)"));
      }
      buf_.resize(std::max(buf_.size() * 2, end_ + min_read + kPadding));
    }
    size_t want = std::min(limits_.read_bytes, buf_.size() - kPadding - end_);
    absl::StatusOr<size_t> read = src_->Read(buf_.data() + end_, want);
    if (absl::IsDataLoss(read.status())) {
      // Cut short: what was read so far is still handed out; Run() reports the cut.
      source_error_ = read.status();
      eof_ = true;
      return false;
    }
    if (!read.ok()) return read.status();
    size_t got = *read;
    if (got == 0) {
      eof_ = true;
      return false;
    }
    end_ += got;
    if (progress_) progress_->UpdateNow(src_->consumed(), src_->total(), "bytes");
    return true;
  }

  // Skips whitespace from *i; false at EOF.
  absl::StatusOr<bool> SkipWs(size_t* i) {
    while (true) {
      while (*i < end_ && IsWs(buf_[*i])) ++*i;
      if (*i < end_) return true;
      pos_ = *i;
      ASSIGN_OR_RETURN(bool more, Fill(i));
      if (!more) return false;
    }
  }

  // Scans the value at *i (pos_ <= *i), refilling as needed; on return *i is the value's
  // start (indices move when the buffer is compacted) and the result its end.
  absl::StatusOr<size_t> ScanWhole(size_t* i) {
    while (true) {
      ValueScanner vs;
      size_t e = vs.Scan(buf_.data(), *i, end_);
      if (e != kNpos) return e;
      pos_ = *i;
      ASSIGN_OR_RETURN(bool more, Fill(i));
      if (!more) {
        if (vs.scalar) return end_;
        return Truncated(end_, "inside a value");
      }
    }
  }

  // A top-level member other than traceEvents: handed out when small, skipped otherwise
  // (a member over max_member_bytes is scanned through without being kept).
  absl::Status Member(const std::string& key, size_t* i) {
    ValueScanner vs;
    size_t start = *i, scan = *i;
    bool skipping = false;
    while (true) {
      size_t e = vs.Scan(buf_.data(), scan, end_);
      if (e != kNpos) {
        if (!skipping) RETURN_IF_ERROR(h_->OnMember(key, std::string_view(&buf_[start], e - start)));
        *i = e;
        pos_ = e;
        return absl::OkStatus();
      }
      if (end_ - start > limits_.max_member_bytes) skipping = true;
      scan = end_;
      pos_ = skipping ? end_ : start;
      ASSIGN_OR_RETURN(bool more, Fill(&scan, &start));
      if (!more) {
        if (!vs.scalar) return Truncated(end_, "inside a top-level value");
        if (!skipping) {
          RETURN_IF_ERROR(h_->OnMember(key, std::string_view(&buf_[start], end_ - start)));
        }
        *i = end_;
        pos_ = end_;
        return absl::OkStatus();
      }
    }
  }

  // Frames buf_[first, last) as "[...]" for the handler: in place when the handler only
  // reads the bytes during the call (the two bytes around are overwritten and restored
  // after), else copied into batch_buf_ (the handler may keep those).
  void Frame(size_t first, size_t last) {
    if (!h_->KeepsBatchBytes() && first >= 1) {
      framed_ = {first - 1, last, buf_[first - 1], buf_[last]};
      buf_[first - 1] = '[';
      buf_[last] = ']';
      batch_.data = buf_.data() + first - 1;
      batch_.buffer = nullptr;
      batch_.size = last - first + 2;
      batch_.capacity = buf_.size() - (first - 1);
      return;
    }
    size_t n = last - first + 2;
    if (batch_buf_.size() < n + kPadding) batch_buf_.resize(n + kPadding);
    batch_buf_[0] = '[';
    std::memcpy(batch_buf_.data() + 1, buf_.data() + first, last - first);
    batch_buf_[n - 1] = ']';
    std::memset(batch_buf_.data() + n, ' ', kPadding);
    batch_.data = batch_buf_.data();
    batch_.buffer = &batch_buf_;
    batch_.size = n;
    batch_.capacity = batch_buf_.size();
  }

  void Unframe() {
    if (!framed_.active) return;
    buf_[framed_.open] = framed_.open_byte;
    buf_[framed_.close] = framed_.close_byte;
    framed_.active = false;
  }

  absl::Status Flush() {
    if (batch_.events.empty()) return absl::OkStatus();
    size_t first = batch_first_, last = batch_last_;
    Frame(first, last);
    for (auto& ev : batch_.events) {
      ev.first = static_cast<uint32_t>(ev.first - first + 1);
      ev.second = static_cast<uint32_t>(ev.second - first + 1);
    }
    batch_.stream_offset = base_ + first;
    batch_.consumed = 0;
    absl::Status s = h_->OnEvents(&batch_);
    Unframe();
    batch_.events.clear();
    return s;
  }

  // The fast path: the last "}, {" (whitespace allowed) in (from, limit], returning the
  // index just past its '}', or kNpos. The cut may land inside a string or a nested object;
  // the parse of the batch then fails and the batch is redone exactly.
  size_t FindCut(size_t from, size_t limit) const {
    const char* b = buf_.data();
    size_t p = limit;
    while (p > from) {
      const void* q = memrchr(b + from + 1, '{', p - from - 1);
      if (q == nullptr) return kNpos;
      p = static_cast<size_t>(static_cast<const char*>(q) - b);
      size_t j = p;
      while (j > from && IsWs(b[j - 1])) --j;
      if (j > from && b[j - 1] == ',') {
        --j;
        while (j > from && IsWs(b[j - 1])) --j;
        if (j > from && b[j - 1] == '}') return j;
      }
    }
    return kNpos;
  }

  // Hands [i, cut) out as one batch without boundaries. Returns the index where the stream
  // goes on: cut on success, or the start of the first event the handler could not take.
  absl::StatusOr<size_t> FastBatch(size_t i, size_t cut) {
    batch_.events.clear();
    if (h_->KeepsBatchBytes() && i >= 1) return HandOver(i, cut);
    Frame(i, cut);
    batch_.stream_offset = base_ + i;
    batch_.consumed = 0;
    absl::Status s = h_->OnEvents(&batch_);
    Unframe();
    if (s.ok()) return cut;
    if (s.code() != absl::StatusCode::kAborted) return s;
    // Skip the events the handler took, with the exact scanner, and go on exactly from there.
    size_t j = i;
    for (size_t k = 0; k < batch_.consumed; ++k) {
      while (j < end_ && (IsWs(buf_[j]) || buf_[j] == ',')) ++j;
      ValueScanner vs;
      size_t e = vs.Scan(buf_.data(), j, end_);
      if (e == kNpos) {
        // simdjson took the event (its skipping is lenient with mismatched brackets) but it
        // has no end here: the document is cut inside it, or malformed.
        if (eof_) return Truncated(end_, "inside traceEvents");
        return absl::InvalidArgumentError(absl::StrCat(
            label_, ": malformed JSON in the event at byte ", base_ + j, ": unbalanced brackets"));
      }
      j = e;
    }
    exact_until_ = base_ + cut;
    return j;
  }

  // FastBatch for a handler that keeps the bytes: rather than a copy of the batch, it gets
  // the read buffer itself, framed in place, and the stream goes on in a spare buffer that
  // holds what followed the cut (with the byte before it, where Fill would keep it).
  // Returns the index where the stream goes on. Such a handler has the batch for good, so
  // it cannot ask for it again with exact boundaries: kAborted is an error like any other.
  absl::StatusOr<size_t> HandOver(size_t i, size_t cut) {
    const size_t rest = cut - 1;
    if (spare_.size() < buf_.size()) spare_.resize(buf_.size());
    std::memcpy(spare_.data(), buf_.data() + rest, end_ - rest);
    buf_[i - 1] = '[';
    buf_[cut] = ']';
    batch_.data = buf_.data() + i - 1;
    batch_.buffer = &buf_;
    batch_.size = cut - i + 2;
    batch_.capacity = buf_.size() - (i - 1);
    batch_.stream_offset = base_ + i;
    batch_.consumed = 0;
    absl::Status s = h_->OnEvents(&batch_);
    // buf_ is now whatever buffer the handler gave for it: the next spare.
    std::swap(buf_, spare_);
    base_ += rest;
    end_ -= rest;
    pos_ = 1;
    if (!s.ok()) return s;
    return cut - rest;
  }

  // The events array starting at '[' at index i; on return pos_ is just past its ']'.
  absl::Status StreamArray(size_t i) {
    h_->OnEventsBegin();
    ++i;
    pos_ = i;
    while (true) {
      while (i < end_ && (IsWs(buf_[i]) || buf_[i] == ',')) ++i;
      if (i >= end_) {
        RETURN_IF_ERROR(Flush());
        pos_ = i;
        ASSIGN_OR_RETURN(bool more, Fill(&i));
        if (!more) return Truncated(i, "inside traceEvents");
        continue;
      }
      if (buf_[i] == ']') {
        RETURN_IF_ERROR(Flush());
        pos_ = i + 1;
        return absl::OkStatus();
      }
      if (batch_.events.empty() && base_ + i >= exact_until_ && buf_[i] == '{') {
        if (end_ - i < limits_.batch_bytes && !eof_) {
          pos_ = i;
          ASSIGN_OR_RETURN(bool more, Fill(&i));
          if (more) continue;
        }
        size_t cut = FindCut(i, std::min(end_, i + limits_.batch_bytes));
        if (cut != kNpos) {
          ASSIGN_OR_RETURN(i, FastBatch(i, cut));
          pos_ = i;
          continue;
        }
      }
      ValueScanner vs;
      size_t e = vs.Scan(buf_.data(), i, end_);
      if (e == kNpos) {
        RETURN_IF_ERROR(Flush());
        pos_ = i;
        ASSIGN_OR_RETURN(bool more, Fill(&i));
        if (!more) return Truncated(end_, "inside traceEvents");
        continue;  // rescan the event from its start
      }
      if (batch_.events.empty()) batch_first_ = i;
      batch_last_ = e;
      batch_.events.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(e)});
      i = e;
      if (batch_last_ - batch_first_ >= limits_.batch_bytes) RETURN_IF_ERROR(Flush());
    }
  }

  ByteSource* src_;
  const std::string& label_;
  TraceJsonHandler* h_;
  Progress* progress_;
  JsonStreamLimits limits_;
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0;
  uint64_t base_ = 0;
  bool eof_ = false;
  absl::Status source_error_;
  EventBatch batch_;
  struct Framed {
    size_t open = 0, close = 0;
    char open_byte = 0, close_byte = 0;
    bool active = true;
  };
  Framed framed_{0, 0, 0, 0, false};
  size_t batch_first_ = 0, batch_last_ = 0;
  uint64_t exact_until_ = 0;  // stream offset: scan exactly up to here after a failed fast batch
  std::vector<char> batch_buf_;
  std::vector<char> spare_;  // HandOver's next read buffer
};

}  // namespace

absl::Status StreamTraceJson(ByteSource* source, const std::string& label,
                             TraceJsonHandler* handler, Progress* progress,
                             const JsonStreamLimits& limits) {
  Streamer s(source, label, handler, progress, limits);
  return s.Run();
}

}  // namespace qprof::importers
