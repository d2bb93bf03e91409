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
// Rows are stepped one at a time; nothing holds a copy of a whole table but the output.
#ifndef QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_IMPORTER_H_
#define QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_IMPORTER_H_

#include <string>

#include "absl/status/statusor.h"
#include "analysis/importers/import.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

absl::StatusOr<proto::Trace> ImportNsysSqlite(const std::string& path,
                                              const ImportOptions& options);

class SqliteDb;
// The same from an open database (the fuzzer loads one from bytes); `path` names it.
absl::StatusOr<proto::Trace> ImportNsysDb(SqliteDb* db, const std::string& path,
                                          const ImportOptions& options);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_IMPORTER_H_
