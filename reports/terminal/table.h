// A tiny aligned-text table for the terminal writer. Cells are plain text; a cell may carry
// an ANSI colour that is applied AFTER padding, so colour never disturbs alignment.
#ifndef QPROF_REPORTS_TERMINAL_TABLE_H_
#define QPROF_REPORTS_TERMINAL_TABLE_H_

#include <string>
#include <vector>

namespace qprof::reports {

struct Cell {
  std::string text;
  const char* color = nullptr;  // ANSI SGR sequence such as "\x1b[32m", or nullptr
};

class TextTable {
 public:
  enum Align { kLeft, kRight };
  struct Column {
    std::string title;
    Align align = kLeft;
    size_t max_width = 0;  // 0: no limit; longer text is shortened in the middle
  };

  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void AddRow(std::vector<Cell> cells) { rows_.push_back(std::move(cells)); }
  // Renders with two spaces between columns and an indent; `color` enables cell colours
  // and a dim header.
  std::string Render(bool color, const std::string& indent = "  ") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

// ANSI colour for a pipe class ("tensor" green, "simt" yellow, ...), nullptr if none.
const char* ClassColor(const std::string& cls);

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_TERMINAL_TABLE_H_
