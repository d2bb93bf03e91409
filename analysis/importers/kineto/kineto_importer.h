// PyTorch profiler (Kineto) and Chrome trace JSON, plain or gzip -> proto::Trace.
//
// Events are "X" (complete) events; the category decides what they are, compared without
// case so both generations match: kernel/Kernel, gpu_memcpy/Memcpy, gpu_memset/Memset
// (activities); cuda_runtime/Runtime, cuda_driver/Driver (launch calls: thread and time of
// the call with the same args.correlation); user_annotation (CPU ranges -> nvtx_path of the
// kernels they launched); gpu_user_annotation (GPU ranges, used for kernels with no launch
// record); cuda_profiler_range (per-kernel counter values, joined to kernels by name and
// order into KernelMetrics.raw). Times: ts/dur microseconds, integer or decimal, converted
// to ns from their text (no double rounding), baseTimeNanoseconds added when present.
// GPU events: device = args.device (else pid), stream = args.stream (else tid, "stream 7").
// pid/tid may be strings; integers beyond 64 bits and invalid UTF-8 do not stop the import
// (the event is skipped and counted, bytes are repaired).
// Streaming: events are decoded batch by batch (on worker threads for inputs of 32 MB or
// more: batches cut at event boundaries, decoded in parallel, committed in document order;
// gzip inflated as a stream). GPU events are kept in a compact form until the end of the
// document, because a kernel's launch call, the annotations that give its path and
// baseTimeNanoseconds may all come after it; memory is about 100 bytes per GPU event plus
// the launch calls and annotations, not the document. A document cut short keeps the
// events before the cut (Trace.truncation_detail has the byte offset).
#ifndef QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_IMPORTER_H_
#define QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_IMPORTER_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "analysis/importers/common/graph_capture.h"
#include "analysis/importers/common/trace_sink.h"
#include "analysis/importers/import.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

absl::StatusOr<proto::Trace> ImportKinetoJson(const std::string& path,
                                              const ImportOptions& options);

// The same from bytes in memory (plain or gzip); `label` names it in errors.
absl::StatusOr<proto::Trace> ImportKinetoJsonBytes(std::string_view bytes,
                                                   const std::string& label,
                                                   const ImportOptions& options);

// Streaming forms: records go to `sink` (importers/common/trace_sink.h).
absl::Status StreamKinetoJson(const std::string& path, const ImportOptions& options,
                              TraceSink* sink);
absl::Status StreamKinetoJsonBytes(std::string_view bytes, const std::string& label,
                                   const ImportOptions& options, TraceSink* sink);

// Reads a trace taken while CUDA (or HIP) graphs were captured into `set` (its launches
// per capture, with their contexts: common/graph_capture.h); InvalidArgument when the file
// holds no capture with a kernel launch. Several files may be read into one set.
absl::Status ReadKinetoGraphCaptures(const std::string& path, const ImportOptions& options,
                                     GraphCaptureSet* set);
// The same from bytes in memory; `label` names it in errors and capture labels.
absl::Status ReadKinetoGraphCapturesBytes(std::string_view bytes, const std::string& label,
                                          const ImportOptions& options, GraphCaptureSet* set);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_KINETO_KINETO_IMPORTER_H_
