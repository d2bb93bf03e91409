#include "analysis/importers/import.h"

#include "analysis/importers/common/graph_capture.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/importers/common/graph_capture.h"
#include "analysis/importers/input_hints.h"
#include "analysis/importers/kineto/kineto_importer.h"
#include "analysis/importers/ncu/ncu_importer.h"
#include "analysis/importers/nsys/nsys_importer.h"
#include "analysis/importers/nsys_stats/nsys_stats_csv.h"
#include "analysis/importers/qtrace/qtrace_importer.h"
#include "analysis/occupancy/annotate.h"
#include "base/status_macros.h"

namespace qprof::importers {
namespace {

// How much of the head detection looks at: enough for an ncu preamble of a few hundred
// lines of program output before the CSV header.
constexpr size_t kDetectBytes = 64 * 1024;

bool LooksLikeNcuCsv(std::string_view head) {
  // The header row: quoted "Kernel Name" plus "Metric Name" (details page) or "ID" (raw).
  size_t pos = head.find("\"Kernel Name\"");
  if (pos == std::string_view::npos) return false;
  size_t line_start = head.rfind('\n', pos);
  line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
  size_t line_end = head.find('\n', pos);
  std::string_view line = head.substr(line_start, line_end == std::string_view::npos
                                                      ? std::string_view::npos
                                                      : line_end - line_start);
  return line.find("\"Metric Name\"") != std::string_view::npos ||
         line.find("\"ID\"") != std::string_view::npos;
}

}  // namespace

const char* InputKindName(InputKind kind) {
  switch (kind) {
    case InputKind::kQtrace: return "qtrace";
    case InputKind::kNsysSqlite: return "nsys-sqlite";
    case InputKind::kKinetoJson: return "kineto-json";
    case InputKind::kNcuCsv: return "ncu-csv";
    case InputKind::kNsysStatsCsv: return "nsys-stats-csv";
    case InputKind::kUnknown: break;
  }
  return "unknown";
}

InputKind DetectInputKindFromBytes(const std::string& head) {
  std::string_view h(head);
  if (absl::StartsWith(absl::string_view(head), "QPROFTR1")) return InputKind::kQtrace;
  if (h.size() >= 16 && std::memcmp(h.data(), "SQLite format 3\0", 16) == 0) {
    return InputKind::kNsysSqlite;
  }
  if (h.size() >= 2 && static_cast<unsigned char>(h[0]) == 0x1f &&
      static_cast<unsigned char>(h[1]) == 0x8b) {
    return InputKind::kKinetoJson;  // gzip: the Kineto importer checks what is inside
  }
  size_t i = 0;
  if (h.size() >= 3 && h.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // UTF-8 BOM
  while (i < h.size() && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r')) ++i;
  if (i < h.size() && (h[i] == '{' || h[i] == '[')) return InputKind::kKinetoJson;
  if (LooksLikeNcuCsv(h)) return InputKind::kNcuCsv;
  if (LooksLikeNsysStatsCsv(h)) return InputKind::kNsysStatsCsv;
  return InputKind::kUnknown;
}

absl::StatusOr<InputKind> DetectInputKind(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    }
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open"));
  }
  std::string head(kDetectBytes, '\0');
  size_t n = std::fread(head.data(), 1, head.size(), f);
  std::fclose(f);
  head.resize(n);
  return DetectInputKindFromBytes(head);
}

namespace {

absl::StatusOr<InputKind> CheckInput(const std::string& path, const ImportOptions& options) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a trace"));
  }
  if (st.st_size == 0) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
  if (options.max_input_bytes > 0 && static_cast<uint64_t>(st.st_size) > options.max_input_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", st.st_size,
                                                   " bytes is over the input limit of ",
                                                   options.max_input_bytes, " bytes"));
  }
  ASSIGN_OR_RETURN(InputKind kind, DetectInputKind(path));
  // An Nsight report (.nsys-rep, .ncu-rep) gets the export command that makes what qprof
  // reads; any other file the list of kinds qprof reads.
  if (kind == InputKind::kUnknown) return absl::InvalidArgumentError(UnreadableInputMessage(path));
  return kind;
}

// Graph captures pair with the kernels of Kineto replays; an nsys export carries its own
// graph nodes (--cuda-graph-trace=node) and other inputs have no replays to pair.
absl::Status CheckGraphCaptures(const std::string& path, InputKind kind,
                                const ImportOptions& options) {
  if (options.graph_captures == nullptr || kind == InputKind::kKinetoJson) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": --graph-capture pairs the graph replays of PyTorch profiler (Kineto) traces; this "
            "is ", InputKindName(kind),
      kind == InputKind::kNsysSqlite
          ? " (an nsys export recorded with --cuda-graph-trace=node joins its graph nodes itself)"
          : ""));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const GraphCaptureSet>> ReadGraphCaptures(
    const std::vector<std::string>& paths, const ImportOptions& options) {
  auto set = std::make_shared<GraphCaptureSet>();
  ImportOptions o = options;
  o.graph_captures = nullptr;
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(InputKind kind, CheckInput(path, o));
    if (kind != InputKind::kKinetoJson) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": graph captures are read from PyTorch profiler (Kineto) traces; this is ",
          InputKindName(kind)));
    }
    RETURN_IF_ERROR(ReadKinetoGraphCaptures(path, o, set.get()));
  }
  return std::shared_ptr<const GraphCaptureSet>(std::move(set));
}

absl::StatusOr<proto::Trace> ImportFile(const std::string& path, const ImportOptions& options) {
  ASSIGN_OR_RETURN(InputKind kind, CheckInput(path, options));
  RETURN_IF_ERROR(CheckGraphCaptures(path, kind, options));
  absl::StatusOr<proto::Trace> trace = absl::InternalError("unreachable");
  switch (kind) {
    case InputKind::kQtrace: trace = ImportQtrace(path, options); break;
    case InputKind::kNsysSqlite: trace = ImportNsysSqlite(path, options); break;
    case InputKind::kKinetoJson: trace = ImportKinetoJson(path, options); break;
    case InputKind::kNcuCsv: trace = ImportNcuCsv(path, options); break;
    case InputKind::kNsysStatsCsv: {
      TraceBuilder builder;
      absl::Status st = StreamNsysStatsCsv(path, &builder);
      trace = st.ok() ? absl::StatusOr<proto::Trace>(builder.Take()) : st;
      break;
    }
    case InputKind::kUnknown: break;
  }
  // Occupancy and waves of every launch with a launch configuration (Activity.occupancy).
  if (trace.ok()) occupancy::AnnotateOccupancy(&*trace);
  return trace;
}

absl::Status StreamFile(const std::string& path, TraceSink* sink, const ImportOptions& options) {
  ASSIGN_OR_RETURN(InputKind kind, CheckInput(path, options));
  RETURN_IF_ERROR(CheckGraphCaptures(path, kind, options));
  switch (kind) {
    case InputKind::kQtrace: return StreamQtrace(path, options, sink);
    case InputKind::kNsysSqlite: return StreamNsysSqlite(path, options, sink);
    case InputKind::kKinetoJson: return StreamKinetoJson(path, options, sink);
    case InputKind::kNcuCsv: {
      // Nsight Compute CSVs are small (one row per metric of a few profiled kernels).
      ASSIGN_OR_RETURN(proto::Trace trace, ImportNcuCsv(path, options));
      FeedTrace(trace, sink);
      return absl::OkStatus();
    }
    case InputKind::kNsysStatsCsv: return StreamNsysStatsCsv(path, sink);
    case InputKind::kUnknown: break;
  }
  return absl::InternalError("unreachable");
}

}  // namespace qprof::importers
