// Kineto / Chrome trace JSON, plain or gzip, from arbitrary bytes: must return a trace or
// one error, never crash, hang or leak; an imported trace must serialize. The same bytes
// also go down the analysis's path (streamed into the aggregation, decoded on worker
// threads, through a partial profile) and must give what one thread gives at the same batch
// size. (Across batch sizes only well-formed documents must agree: how far a malformed
// event reaches depends on where batches are cut.) Read as a graph-capture trace, the bytes
// also join, as a replay, the captures they hold.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "analysis/aggregate/partial.h"
#include "analysis/analyze.h"
#include "analysis/importers/common/graph_capture.h"
#include "analysis/importers/import.h"
#include "analysis/importers/kineto/kineto_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  qprof::importers::ImportOptions options;
  options.progress = false;
  options.threads = 1;
  auto whole_batches = qprof::importers::ImportKinetoJsonBytes(bytes, "fuzz.json", options);
  if (whole_batches.ok()) {
    std::string serialized;
    if (!whole_batches->SerializeToString(&serialized)) __builtin_trap();  // invalid UTF-8
  }
  options.batch_bytes = 256;
  auto trace = qprof::importers::ImportKinetoJsonBytes(bytes, "fuzz.json", options);
  qprof::importers::ImportOptions parallel = options;
  parallel.threads = 2;
  qprof::aggregate::ProfileState state;
  qprof::aggregate::TraceAccumulator acc(&state);
  absl::Status s = qprof::importers::StreamKinetoJsonBytes(bytes, "fuzz.json", parallel, &acc);
  if (s.ok() != trace.ok()) __builtin_trap();  // the two paths disagree on the input
  if (!s.ok()) return 0;
  auto back = qprof::aggregate::FromPartial(qprof::aggregate::ToPartial(state), "fuzz");
  if (!back.ok()) __builtin_trap();
  auto streamed = qprof::AnalyzeState(*back, {});
  auto whole = qprof::Analyze({*trace}, {});
  if (streamed.ok() != whole.ok()) __builtin_trap();
  if (streamed.ok() && (streamed->totals().kernel_time_ns() != whole->totals().kernel_time_ns() ||
                        streamed->totals().busy_time_ns() != whole->totals().busy_time_ns() ||
                        streamed->kernels_size() != whole->kernels_size())) {
    __builtin_trap();
  }
  // The same bytes as a graph-capture trace, and as a replay joined with what it captured.
  auto captures = std::make_shared<qprof::importers::GraphCaptureSet>();
  qprof::importers::ImportOptions capture_options = options;
  capture_options.batch_bytes = 0;
  if (qprof::importers::ReadKinetoGraphCapturesBytes(bytes, "fuzz.json", capture_options,
                                                     captures.get())
          .ok()) {
    capture_options.graph_captures = captures;
    auto joined = qprof::importers::ImportKinetoJsonBytes(bytes, "fuzz.json", capture_options);
    std::string serialized;
    if (joined.ok() && !joined->SerializeToString(&serialized)) __builtin_trap();
  }
  return 0;
}
