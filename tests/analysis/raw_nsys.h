// Oracles read straight from a raw nsys SQLite export, for tests that check the analyzer
// against the tables it imported (never against the analyzer itself).
#ifndef QPROF_TESTS_ANALYSIS_RAW_NSYS_H_
#define QPROF_TESTS_ANALYSIS_RAW_NSYS_H_

#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace qprof::testing_raw {

// $QPROF_TESTDATA, else ../shared/testdata next to the source tree (tests skip when the
// files they need are not there).
inline std::string TestDataDir() {
  if (const char* env = std::getenv("QPROF_TESTDATA"); env && *env) return env;
  return std::string(QPROF_SOURCE_DIR) + "/../shared/testdata";
}

// One number from a query on the raw export (NaN when it returns no row).
inline double Query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
  double v = NAN;
  if (st && sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_double(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

// The comm role as the analyzer assigns it, computed from the raw tables: NCCL kernels by
// name, and every kernel whose launch call ran inside an all-to-all NVTX range on the
// launching thread (DeepSpeed's AllToAll4D packs its buffers with elementwise and cat
// kernels there: launch-context rule "*alltoall*", analysis/classify/context_rules.cc).
inline std::string CommKernels() {
  return "SELECT k.start AS s, k.end AS e FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds sn "
         "ON sn.id = k.shortName LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = "
         "k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24) WHERE sn.value LIKE "
         "'ncclDevKernel%' OR EXISTS (SELECT 1 FROM NVTX_EVENTS n LEFT JOIN StringIds t ON "
         "t.id = n.textId WHERE n.globalTid = r.globalTid AND n.start <= r.start AND (n.end IS "
         "NULL OR r.start < n.end) AND lower(coalesce(n.text, t.value)) GLOB '*alltoall*')";
}

inline double CommPerCall(const std::string& path) {
  return Query(path, "WITH c AS (" + CommKernels() +
                         ") SELECT CAST(SUM(e - s) AS REAL) / COUNT(*) FROM c");
}

}  // namespace qprof::testing_raw

#endif  // QPROF_TESTS_ANALYSIS_RAW_NSYS_H_
