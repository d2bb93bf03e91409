#include "analysis/importers/common/csv_reader.h"

#include "absl/strings/str_cat.h"
#include "base/text.h"

namespace qprof::importers {

bool CsvReader::Next(CsvRow* row, std::string* error) {
  row->fields.clear();
  while (pos_ < t_.size() && (t_[pos_] == '\n' || t_[pos_] == '\r')) {
    if (t_[pos_] == '\n') ++line_;
    ++pos_;
  }
  if (pos_ >= t_.size()) return false;
  row->line = line_;
  std::string field;
  while (true) {
    if (pos_ < t_.size() && t_[pos_] == '"') {
      size_t quote_line = line_;
      ++pos_;
      while (true) {
        if (pos_ >= t_.size()) {
          *error = absl::StrCat("truncated CSV: unterminated quote starting at line ", quote_line);
          return false;
        }
        char c = t_[pos_++];
        if (c == '"') {
          if (pos_ < t_.size() && t_[pos_] == '"') {
            field += '"';
            ++pos_;
          } else {
            break;
          }
        } else {
          if (c == '\n') ++line_;
          field += c;
        }
      }
    }
    while (pos_ < t_.size() && t_[pos_] != ',' && t_[pos_] != '\n' && t_[pos_] != '\r') {
      field += t_[pos_++];
    }
    row->fields.push_back(Utf8Clean(field));
    field.clear();
    if (pos_ >= t_.size()) return true;
    char c = t_[pos_++];
    if (c == ',') continue;
    if (c == '\r' && pos_ < t_.size() && t_[pos_] == '\n') ++pos_;
    ++line_;
    return true;
  }
}

std::vector<std::string> SplitCsvLine(std::string_view line) {
  CsvReader reader(line, 0, 1);
  CsvRow row;
  std::string error;
  if (!reader.Next(&row, &error)) return {};
  return row.fields;
}

}  // namespace qprof::importers
