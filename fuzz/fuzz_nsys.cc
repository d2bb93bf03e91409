// Nsight Systems SQLite exports from arbitrary bytes (loaded with sqlite3_deserialize).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/importers/nsys/nsys_importer.h"
#include "analysis/importers/nsys/sqlite_db.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto db = qprof::importers::SqliteDb::FromBytes(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.sqlite");
  if (!db.ok()) return 0;
  qprof::importers::ImportOptions options;
  options.progress = false;
  auto trace = qprof::importers::ImportNsysDb(&*db, "fuzz.sqlite", options);
  if (trace.ok()) {
    std::string bytes;
    if (!trace->SerializeToString(&bytes)) __builtin_trap();
  }
  return 0;
}
