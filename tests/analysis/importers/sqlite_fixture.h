// Hand-made nsys exports for the importer tests: a SQLite file built from SQL text.
#ifndef QPROF_TESTS_ANALYSIS_IMPORTERS_SQLITE_FIXTURE_H_
#define QPROF_TESTS_ANALYSIS_IMPORTERS_SQLITE_FIXTURE_H_

#include <sqlite3.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers::testing {

// A fresh database `name` in the per-process temp dir, made by running `sql`.
inline std::string MakeDb(const std::string& name, const std::string& sql) {
  std::string path = WriteTemp(name, "");
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
  return path;
}

}  // namespace qprof::importers::testing

#endif  // QPROF_TESTS_ANALYSIS_IMPORTERS_SQLITE_FIXTURE_H_
