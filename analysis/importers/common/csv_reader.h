// RFC 4180 rows of CSV text, for the importers of CSV reports (Nsight Compute's pages,
// `nsys stats --format csv`): quoted fields with "" escapes, CR LF or LF line ends, blank
// lines skipped, invalid UTF-8 repaired.
#ifndef QPROF_ANALYSIS_IMPORTERS_COMMON_CSV_READER_H_
#define QPROF_ANALYSIS_IMPORTERS_COMMON_CSV_READER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace qprof::importers {

struct CsvRow {
  std::vector<std::string> fields;
  size_t line = 0;  // 1-based line where the row starts
};

class CsvReader {
 public:
  // Reads `text` from byte `pos`, which is on line `line` (1-based).
  CsvReader(std::string_view text, size_t pos, size_t line) : t_(text), pos_(pos), line_(line) {}

  // The next row; false at the end, or with `*error` set for an unterminated quote
  // ("truncated CSV: unterminated quote starting at line 12").
  bool Next(CsvRow* row, std::string* error);

  // Byte offset of the next row (the end of what was read).
  size_t pos() const { return pos_; }

 private:
  std::string_view t_;
  size_t pos_;
  size_t line_;
};

// The fields of one line of CSV (no embedded line breaks), for header detection.
std::vector<std::string> SplitCsvLine(std::string_view line);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_COMMON_CSV_READER_H_
