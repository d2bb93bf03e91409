// Streams a Chrome/Kineto trace JSON document in bounded memory.
//
// The document is `{"traceEvents": [ev, ev, ...], "deviceProperties": ..., ...}` (members in
// any order) or a bare `[ev, ...]`. The streamer reads the bytes in chunks, finds the
// boundaries of whole values with a small string-aware bracket scanner, and hands out:
//  - top-level members other than traceEvents, as JSON text (members over kMaxMemberBytes
//    are skipped without being held in memory);
//  - the events, in batches of about kBatchBytes: a padded buffer "[ev,ev,...]" that simdjson
//    can iterate directly, plus each event's offsets, for per-event recovery. A batch is
//    framed in place in the read buffer (its '[' and ']' overwrite the bytes around it for
//    the duration of the call; what follows serves as padding). A handler that keeps the
//    bytes is handed the read buffer itself, which was read to hold about one batch, and
//    the stream goes on in another (a batch cut at an exact boundary is copied instead).
// Memory is the read buffer (grown only for one value larger than it) plus one batch; no
// DOM of the whole document ever exists. The scanner does not validate JSON: simdjson does
// that on each batch, so syntax errors are reported with the batch's byte offset.
#ifndef QPROF_ANALYSIS_IMPORTERS_KINETO_JSON_STREAM_H_
#define QPROF_ANALYSIS_IMPORTERS_KINETO_JSON_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "analysis/importers/common/import_util.h"
#include "analysis/importers/kineto/byte_source.h"

namespace qprof::importers {

struct EventBatch {
  const char* data = nullptr;  // "[...]", followed by at least 64 readable padding bytes
  size_t size = 0;
  size_t capacity = 0;         // size + padding
  uint64_t stream_offset = 0;  // offset in the (decompressed) document of data[1]
  // [begin, end) of each event within data. Empty on the fast path, where the batch was cut
  // at a likely event boundary ("}, {" found backwards) without scanning it.
  std::vector<std::pair<uint32_t, uint32_t>> events;
  // Set by the handler when it returns kAborted on a fast-path batch: how many events it
  // consumed before something did not parse. The streamer then rescans exactly from there.
  size_t consumed = 0;
  // The vector holding `data` when the handler keeps the bytes (KeepsBatchBytes): the
  // handler may swap it for another (of any size) to keep them, e.g. to decode them on
  // another thread. nullptr when the batch is framed in the streamer's own buffer for the
  // duration of the call only.
  std::vector<char>* buffer = nullptr;
};

class TraceJsonHandler {
 public:
  virtual ~TraceJsonHandler() = default;
  virtual absl::Status OnMember(std::string_view key, std::string_view json) = 0;
  // The traceEvents array begins (events may follow).
  virtual void OnEventsBegin() {}
  // True when the handler keeps a batch's bytes past OnEvents (swapping EventBatch::buffer);
  // otherwise batches are framed in the streamer's read buffer for the call only.
  virtual bool KeepsBatchBytes() const { return false; }
  // With batch->events empty, returning kAborted (and setting batch->consumed) asks for the
  // rest of the batch again with exact boundaries, unless the handler keeps the bytes; any
  // other error stops the stream.
  virtual absl::Status OnEvents(EventBatch* batch) = 0;
};

struct JsonStreamLimits {
  size_t batch_bytes = 4 << 20;        // events handed out per batch
  size_t read_bytes = 8 << 20;         // bytes read per refill
  size_t max_value_bytes = 256 << 20;  // one event (or kept member) larger than this: error
  size_t max_member_bytes = 16 << 20;  // larger top-level members are skipped
};

// Returns InvalidArgument for a document that is not a trace (not an object/array, no
// traceEvents array), DataLoss when the input ends inside the document; messages name
// `label` and the byte offset.
absl::Status StreamTraceJson(ByteSource* source, const std::string& label,
                             TraceJsonHandler* handler, Progress* progress,
                             const JsonStreamLimits& limits = {});

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_KINETO_JSON_STREAM_H_
