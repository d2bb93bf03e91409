#include "reports/terminal/table.h"

#include <algorithm>

#include "reports/common/format.h"

namespace qprof::reports {

const char* ClassColor(const std::string& cls) {
  if (cls == "tensor") return "\x1b[32m";   // green
  if (cls == "simt") return "\x1b[33m";     // yellow
  if (cls == "comm") return "\x1b[34m";     // blue
  if (cls == "memory") return "\x1b[35m";   // magenta
  if (cls == "other") return "\x1b[90m";    // grey
  return nullptr;
}

std::string TextTable::Render(bool color, const std::string& indent) const {
  std::vector<size_t> width(columns_.size(), 0);
  auto text_of = [&](size_t c, const std::string& s) {
    return columns_[c].max_width ? Ellipsize(s, columns_[c].max_width) : s;
  };
  for (size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].title.size();
  for (const auto& row : rows_) {
    for (size_t c = 0; c < columns_.size() && c < row.size(); ++c) {
      width[c] = std::max(width[c], text_of(c, row[c].text).size());
    }
  }
  auto pad = [&](size_t c, const std::string& s) {
    std::string t = text_of(c, s);
    std::string fill(width[c] - std::min(width[c], t.size()), ' ');
    return columns_[c].align == kRight ? fill + t : t + fill;
  };
  std::string out;
  auto line = [&](const std::vector<Cell>& cells, bool header) {
    std::string l = indent;
    if (header && color) l += "\x1b[2m";
    for (size_t c = 0; c < columns_.size(); ++c) {
      Cell cell = c < cells.size() ? cells[c] : Cell{};
      std::string padded = pad(c, cell.text);
      if (c + 1 == columns_.size() && columns_[c].align == kLeft) {
        while (!padded.empty() && padded.back() == ' ') padded.pop_back();
      }
      if (color && cell.color && !header) {
        l += cell.color + padded + "\x1b[0m";
      } else {
        l += padded;
      }
      if (c + 1 < columns_.size()) l += "  ";
    }
    if (header && color) l += "\x1b[0m";
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  std::vector<Cell> header;
  for (const auto& col : columns_) header.push_back({col.title});
  line(header, true);
  for (const auto& row : rows_) line(row, false);
  return out;
}

}  // namespace qprof::reports
