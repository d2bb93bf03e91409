// Nsight Systems SQLite export (`nsys export --type sqlite`) -> proto::Trace.
//
// Tables and columns are looked up by name (PRAGMA table_info) because nsys creates
// tables lazily and changes columns across schema versions; every table may be absent.
// Read: CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET (activities), StringIds (names:
// demangledName, else a `name` text column, shortName, mangledName), _RUNTIME (launching
// thread and time, joined on (process, correlationId): correlation ids restart in every
// process), NVTX_EVENTS (eventType 59 push/pop ranges give kernel paths; 60 start/end
// ranges are kept as ranges; name = COALESCE(text, StringIds[textId])), TARGET_INFO_GPU
// (devices; when absent, devices are the ids seen, named "unknown").
// globalTid/globalPid encode pid = (g >> 24) & 0xFFFFFF, tid = g & 0xFFFFFF.
// Streaming: rows are stepped one at a time and handed to a TraceSink with their path
// resolved; only the columns used are selected; launches are joined while both tables
// stream (launch_join.h), with an exact SQL join when the tables are too far out of
// correlation order. Memory is the strings, devices and NVTX ranges, never the activity or
// runtime rows. A database cut short yields the rows read before the cut, with the table
// and row where reading stopped as Trace.truncation_detail and a collector warning.
#ifndef QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_IMPORTER_H_
#define QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_IMPORTER_H_

#include <string>

#include "absl/status/statusor.h"
#include "analysis/importers/common/trace_sink.h"
#include "analysis/importers/import.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

absl::StatusOr<proto::Trace> ImportNsysSqlite(const std::string& path,
                                              const ImportOptions& options);

class SqliteDb;
// The same from an open database (the fuzzer loads one from bytes); `path` names it.
absl::StatusOr<proto::Trace> ImportNsysDb(SqliteDb* db, const std::string& path,
                                          const ImportOptions& options);

// Streaming forms: records go to `sink` (importers/common/trace_sink.h) as they are read.
absl::Status StreamNsysSqlite(const std::string& path, const ImportOptions& options,
                              TraceSink* sink);
absl::Status StreamNsysDb(SqliteDb* db, const std::string& path, const ImportOptions& options,
                          TraceSink* sink);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_IMPORTER_H_
