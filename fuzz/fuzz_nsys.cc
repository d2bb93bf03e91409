// Nsight Systems SQLite exports from arbitrary bytes (loaded with sqlite3_deserialize): the
// importer and the streamed analysis (launch join, NVTX index, pages cut or corrupt part
// way) must return a result or one error, never crash, and agree on the totals of an intact
// database. (A corrupt one may read differently: the analysis selects fewer columns, and
// SQLite reports a damaged record when a column it cannot decode is read.)
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/aggregate/accumulator.h"
#include "analysis/analyze.h"
#include "analysis/importers/nsys/nsys_importer.h"
#include "analysis/importers/nsys/sqlite_db.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto db = qprof::importers::SqliteDb::FromBytes(bytes, "fuzz.sqlite");
  if (!db.ok()) return 0;
  qprof::importers::ImportOptions options;
  options.progress = false;
  auto trace = qprof::importers::ImportNsysDb(&*db, "fuzz.sqlite", options);
  if (trace.ok()) {
    std::string serialized;
    if (!trace->SerializeToString(&serialized)) __builtin_trap();
  }
  auto db2 = qprof::importers::SqliteDb::FromBytes(bytes, "fuzz.sqlite");
  if (!db2.ok()) return 0;
  qprof::aggregate::ProfileState state;
  qprof::aggregate::TraceAccumulator acc(&state);
  absl::Status s = qprof::importers::StreamNsysDb(&*db2, "fuzz.sqlite", options, &acc);
  if (!s.ok() || !trace.ok() || trace->truncated() || state.traces[0].truncated) return 0;
  auto streamed = qprof::AnalyzeState(state, {});
  auto whole = qprof::Analyze({*trace}, {});
  if (streamed.ok() && whole.ok() &&
      streamed->totals().kernel_time_ns() != whole->totals().kernel_time_ns()) {
    __builtin_trap();
  }
  return 0;
}
