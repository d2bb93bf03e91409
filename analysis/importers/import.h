// Importing traces that other tools wrote (and our own .qtrace files) into proto::Trace.
//
// Design: one folder per input format (qtrace/, nsys/, kineto/, ncu/), each a small
// library that turns its format into the same proto::Trace the CUPTI collector writes.
// ImportFile() looks at the file's first bytes (not only its name) to pick the importer:
//   "QPROFTR1"                         -> .qtrace (read as is, its own provenance kept)
//   "SQLite format 3\0"                -> Nsight Systems SQLite export
//   gzip magic 1f 8b, or '{' / '['     -> PyTorch profiler / Kineto JSON (.json, .json.gz)
//   text with "Kernel Name" and "Metric Name"/"ID" in a header -> Nsight Compute CSV
//   text with an `nsys stats --format csv` header ("Time (%)", "Total Time (ns)", ...)
//                                      -> nsys stats kernel summary (a profile without a
//                                         timeline; other stats reports are refused with
//                                         the report to export instead)
// Anything else is InvalidArgument ("<path>: not a trace qprof can read (...)").
//
// Contracts of every importer:
//  - header.provenance = PROVENANCE_IMPORTED (a .qtrace keeps its own), header.source_path
//    = the path given, header.source_kind = "qtrace" | "nsys-sqlite" | "kineto-json" |
//    "ncu-csv" | "nsys-stats-csv", header.collector.collector = "import:<kind>".
//  - activities are kernels, memcpys and memsets, in the order of their start time per
//    source; times in ns on the source's clock (nsys: session ns; Kineto: us * 1000 with
//    baseTimeNanoseconds added when present); names demangled when the source has them.
//  - Activity.nvtx_path is the "/"-joined stack of NVTX (nsys) or user_annotation (Kineto)
//    ranges open on the thread that launched the kernel at the time of the launch call
//    (joined through the runtime API record with the same correlation id).
//  - Activity.launch_context holds the frames enclosing the launch call on its thread
//    (Kineto cpu_op / python_function / user_annotation, nsys NVTX; common/launch_context.h)
//    and TraceHeader.launch_context_stats how many kernels got one and why others did not.
//  - ImportFile() sets Activity.occupancy for every kernel with a launch configuration
//    (analysis/occupancy/annotate.h), from the device limits in the trace header.
//  - Strings are valid UTF-8 (invalid bytes are replaced by '?'), so the trace serializes.
//  - Errors are one line naming the file, with the byte offset or row when known:
//    InvalidArgument (wrong kind, malformed), DataLoss (truncated), NotFound (no file).
//    Nothing here calls exit() or throws.
//  - Large inputs stream: every importer hands its records to a TraceSink as it reads
//    them (StreamFile); nsys rows are stepped through and joined to their launches without
//    holding either table, Kineto JSON is parsed in bounded batches on all cores (gzip
//    inflated as a stream), .qtrace frame by frame. What memory a caller needs is the
//    sink's: the whole trace for ImportFile, running statistics for the analysis.
//  - A file that ends early yields the records before the cut: Trace.truncated, with
//    truncation_detail naming the byte offset (or the table and row) where reading stopped,
//    and a collector warning.
#ifndef QPROF_ANALYSIS_IMPORTERS_IMPORT_H_
#define QPROF_ANALYSIS_IMPORTERS_IMPORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/importers/common/trace_sink.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

class GraphCaptureSet;  // common/graph_capture.h
struct LayerModel;      // common/layer_model.h

enum class InputKind { kUnknown, kQtrace, kNsysSqlite, kKinetoJson, kNcuCsv, kNsysStatsCsv };

// "qtrace", "nsys-sqlite", "kineto-json", "ncu-csv", "nsys-stats-csv", "unknown".
const char* InputKindName(InputKind kind);

struct ImportOptions {
  // Print a plain progress line on stderr about once a second for inputs that take longer
  // than a second. Off in tests and fuzzers.
  bool progress = true;
  // Refuse inputs larger than this many bytes (compressed size for .gz); 0 = no limit.
  uint64_t max_input_bytes = 0;
  // Threads an importer may use for one large input (Kineto JSON decoding): 0 = one per
  // core for inputs of 32 MB or more, 1 = the calling thread only, N > 1 = N worker threads
  // whatever the size (tests and fuzzers compare the two paths). nsys exports: any value
  // but 1 lets tables of 2000 rows or more be decoded on reader threads (nsys/row_reader.h).
  int threads = 0;
  // With threads = 0: at most this many worker threads for a large input (0 = no cap but the
  // cores), so a user's thread budget (`qprof analyze --threads N`) holds inside one input too.
  int max_threads = 0;
  // Kineto JSON events per decoded batch, in bytes; 0 = the default (1 MiB). Small values
  // make tests and fuzzers cross batch boundaries on small inputs.
  size_t batch_bytes = 0;
  // Graph captures (ReadGraphCaptures): the kernels of CUDA-graph replays in a Kineto input
  // take the contexts they had when their graph was captured (common/graph_capture.h).
  // Shared, read-only, by every input of an analysis; other kinds of input are refused.
  std::shared_ptr<const GraphCaptureSet> graph_captures;
  // Graph replays of a Kineto input that no capture pairs: their GEMM and MoE kernels get
  // op calls modelled from the model's configuration and the layer order
  // (common/layer_model.h). Other kinds of input ignore it.
  std::shared_ptr<const LayerModel> layer_model;
};

// Detects the kind from the file's first bytes. NotFound if the file cannot be opened;
// kUnknown (not an error) when nothing matches.
absl::StatusOr<InputKind> DetectInputKind(const std::string& path);

// Same, from bytes already read (at least the first 4 KiB when available).
InputKind DetectInputKindFromBytes(const std::string& head);

// Reads any supported input into a trace (see the contracts above).
absl::StatusOr<proto::Trace> ImportFile(const std::string& path,
                                        const ImportOptions& options = {});

// The same records, streamed into `sink` as they are read (common/trace_sink.h), so the
// caller decides what to keep; the same detection and errors as ImportFile. Activities
// come in no particular time order (ImportFile sorts them).
absl::Status StreamFile(const std::string& path, TraceSink* sink,
                        const ImportOptions& options = {});

// What JoinNcuMetrics did: ncu_kernels rows read, matched joined onto trace kernels.
struct NcuJoinStats {
  int ncu_kernels = 0;
  int matched = 0;
  int unmatched_ncu = 0;    // ncu kernels with no trace kernel of that name left
  int trace_kernels = 0;    // kernels in the trace
};

// Reads traces taken while CUDA (or HIP) graphs were captured (PyTorch profiler / Kineto
// JSON; SGLang and vLLM write them per batch size or all in one file) into one set, for
// ImportOptions::graph_captures. Errors name the file: one that is no Kineto trace, or that
// holds no capture with a kernel launch, is refused.
absl::StatusOr<std::shared_ptr<const GraphCaptureSet>> ReadGraphCaptures(
    const std::vector<std::string>& paths, const ImportOptions& options = {});

// Joins per-kernel Nsight Compute metrics onto the kernels of `trace`: the i-th ncu row
// of a kernel name goes to the i-th launch of that name in the trace (start-time order).
// Names compare after normalisation (whitespace collapsed; demangled vs short names match
// on the function name before '(' or '<' when the full names differ). Sets
// KernelMetrics.tensor_pipe_pct / fma_pipe_pct / dram_throughput_pct / sm_throughput_pct
// when those metrics are present, every metric in KernelMetrics.raw, and source
// "ncu: <file>". Adds a collector warning when some rows did not match.
absl::Status JoinNcuMetrics(proto::Trace* trace, const std::string& ncu_csv_path,
                            NcuJoinStats* stats = nullptr,
                            const ImportOptions& options = {});

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_IMPORT_H_
