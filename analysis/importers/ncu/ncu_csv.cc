#include "analysis/importers/ncu/ncu_csv.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/importers/common/csv_reader.h"
#include "analysis/importers/common/import_util.h"

namespace qprof::importers {
namespace {

using Row = CsvRow;

int FieldIndex(const std::vector<std::string>& header, std::string_view name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

// "(128, 1, 1)" or "128, 1, 1" -> three numbers.
void ParseDim(std::string_view s, uint32_t out[3]) {
  int i = 0;
  uint64_t v = 0;
  bool in = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      v = std::min<uint64_t>(v * 10 + static_cast<uint64_t>(c - '0'), UINT32_MAX);
      in = true;
    } else if (in) {
      if (i < 3) out[i++] = static_cast<uint32_t>(v);
      v = 0;
      in = false;
    }
  }
  if (in && i < 3) out[i] = static_cast<uint32_t>(v);
}

uint64_t ParseU64(std::string_view s) {
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') break;
    if (v > UINT64_MAX / 10 - 10) return v;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// Columns that describe the launch, not metrics (raw page).
bool IsIdentityColumn(std::string_view c) {
  static constexpr std::string_view kColumns[] = {
      "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context",
      "Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name", "Function Name",
      "Demangled Name", "Estimated Speedup", "Estimated Speedup Type"};
  for (std::string_view k : kColumns) {
    if (c == k) return true;
  }
  return false;
}

bool IsPct(std::string_view name, std::string_view unit) {
  return unit == "%" || absl::StrContains(absl::string_view(name.data(), name.size()), "pct");
}

bool Starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Routes a metric to the named fields of the kernel. Raw metric names first, then the
// human names of the details page sections.
void Classify(NcuKernel* k, const std::string& name, std::string_view unit, double v) {
  if (IsPct(name, unit)) {
    if (!k->tensor_pipe_pct && (Starts(name, "sm__pipe_tensor_cycles_active") ||
                                Starts(name, "sm__pipe_tc_cycles_active") ||
                                Starts(name, "sm__pipe_tensor_op_hmma_cycles_active") ||
                                Starts(name, "sm__pipe_tensor_op_gmma_cycles_active") ||
                                Starts(name, "sm__pipe_tensor_op_imma_cycles_active"))) {
      k->tensor_pipe_pct = v;
    } else if (!k->fma_pipe_pct && (Starts(name, "sm__pipe_fma_cycles_active") ||
                                    Starts(name, "sm__pipe_fmaheavy_cycles_active"))) {
      k->fma_pipe_pct = v;
    } else if (!k->dram_pct && (Starts(name, "dram__throughput") || name == "DRAM Throughput")) {
      k->dram_pct = v;
    } else if (!k->sm_pct && (Starts(name, "sm__throughput") || name == "Compute (SM) Throughput" ||
                              name == "SM Throughput" || name == "Compute (SM) [%]")) {
      k->sm_pct = v;
    }
  }
  if (!k->duration_ns && (name == "gpu__time_duration.sum" || name == "Duration" ||
                          name == "gpu__time_duration")) {
    k->duration_ns = v;  // already ns (base units)
  }
}

// The counters of tensor-pipe work and DRAM bytes among a kernel's metrics (NcuKernel's
// tensor_count and dram_bytes), once every row of the kernel is read.
void SummariseCounts(NcuKernel* k) {
  double ops = 0, inst = 0, read = 0, write = 0, total = 0;
  bool has_ops = false, has_inst = false, has_read = false, has_write = false, has_total = false;
  std::string ops_names, inst_name;
  for (const auto& [name, v] : k->metrics) {
    if (!absl::EndsWith(name, ".sum")) continue;  // counts, not rates or percentages
    if (Starts(name, "sm__ops_path_tensor")) {
      ops += v;
      has_ops = true;
      absl::StrAppend(&ops_names, ops_names.empty() ? "" : " + ", name);
    } else if (Starts(name, "sm__inst_executed_pipe_tensor") ||
               Starts(name, "sm__inst_executed_pipe_tc")) {
      if (!has_inst || v > inst) inst_name = name;
      inst = has_inst ? std::max(inst, v) : v;
      has_inst = true;
    } else if (name == "dram__bytes_read.sum") {
      read = v, has_read = true;
    } else if (name == "dram__bytes_write.sum") {
      write = v, has_write = true;
    } else if (name == "dram__bytes.sum") {
      total = v, has_total = true;
    }
  }
  if (has_ops) {
    k->tensor_count = ops;
    k->tensor_count_metric = ops_names;
  } else if (has_inst) {
    k->tensor_count = inst;
    k->tensor_count_metric = inst_name;
  }
  if (has_total) {
    k->dram_bytes = total;
  } else if (has_read || has_write) {
    k->dram_bytes = read + write;
  }
}

}  // namespace

std::optional<double> NcuValueInBaseUnits(std::string_view value, std::string_view unit) {
  std::string digits;
  for (char c : value) {
    if (c == ',' || c == ' ') continue;  // thousands separators
    digits += c;
  }
  if (digits.empty() || digits == "n/a") return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return std::nullopt;
  // SI prefixes, as ncu prints them by default (decimal: 1 Kbyte = 1000 bytes).
  std::string_view u = unit;
  double scale = 1;
  auto prefix = [&](std::string_view base) -> bool {
    if (u.size() == base.size() + 1 && u.substr(1) == base) {
      switch (u[0]) {
        case 'K': case 'k': scale = 1e3; return true;
        case 'M': scale = 1e6; return true;
        case 'G': scale = 1e9; return true;
        case 'T': scale = 1e12; return true;
        case 'm': scale = 1e-3; return true;
        case 'u': scale = 1e-6; return true;
        case 'n': scale = 1e-9; return true;
      }
    }
    return false;
  };
  if (u == "nsecond" || u == "ns") return v;
  if (u == "usecond" || u == "us") return v * 1e3;
  if (u == "msecond" || u == "ms") return v * 1e6;
  if (u == "second" || u == "s") return v * 1e9;
  size_t slash = u.find('/');
  if (slash != std::string_view::npos) {
    std::string_view num = u.substr(0, slash);
    u = num;
    prefix("byte") || prefix("hz") || prefix("inst") || prefix("cycle");
    // rate per second: only the numerator's prefix applies
    return v * scale;
  }
  if (prefix("byte") || prefix("hz") || prefix("Hz") || prefix("cycle") || prefix("inst")) {
    return v * scale;
  }
  return v;
}

namespace {

// Where the header line starts and its line number: the first line with "Kernel Name" and
// "Metric Name" or "ID" (ncu prints ==PROF== lines and program output before it). npos when
// there is none.
std::pair<size_t, size_t> FindHeaderLine(std::string_view text) {
  size_t pos = 0, line = 1;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string_view l = text.substr(pos, eol == std::string_view::npos ? text.size() - pos : eol - pos);
    if (l.find("\"Kernel Name\"") != std::string_view::npos &&
        (l.find("\"Metric Name\"") != std::string_view::npos ||
         l.find("\"ID\"") != std::string_view::npos)) {
      return {pos, line};
    }
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
    ++line;
  }
  return {std::string_view::npos, 0};
}

}  // namespace

absl::StatusOr<NcuReport> ParseNcuCsv(std::string_view text, const std::string& label) {
  const auto [header_pos, header_line] = FindHeaderLine(text);
  if (header_pos == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, ": not an Nsight Compute CSV (no header row with \"Kernel Name\" and "
               "\"Metric Name\" or \"ID\")"));
  }
  CsvReader reader(text, header_pos, header_line);
  Row header, row;
  std::string error;
  reader.Next(&header, &error);
  const auto& h = header.fields;
  const int id = FieldIndex(h, "ID"), name = FieldIndex(h, "Kernel Name"),
            pid = FieldIndex(h, "Process ID"), device = FieldIndex(h, "Device"),
            stream = FieldIndex(h, "Stream"), grid = FieldIndex(h, "Grid Size"),
            block = FieldIndex(h, "Block Size"), metric = FieldIndex(h, "Metric Name"),
            unit = FieldIndex(h, "Metric Unit"), value = FieldIndex(h, "Metric Value");
  NcuReport report;
  report.raw_page = metric < 0;
  if (!report.raw_page && value < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": line ", header.line, ": \"Metric Name\" without \"Metric Value\""));
  }
  auto field = [](const Row& r, int i) -> std::string_view {
    return i >= 0 && static_cast<size_t>(i) < r.fields.size() ? std::string_view(r.fields[static_cast<size_t>(i)])
                                                                : std::string_view();
  };
  const int cc = FieldIndex(h, "CC");
  auto fill_identity = [&](const Row& r, NcuKernel* k) {
    k->id = std::string(field(r, id));
    k->name = std::string(field(r, name));
    k->pid = static_cast<uint32_t>(ParseU64(field(r, pid)));
    k->device = static_cast<uint32_t>(ParseU64(field(r, device)));
    k->stream = ParseU64(field(r, stream));
    ParseDim(field(r, grid), k->grid);
    ParseDim(field(r, block), k->block);
    k->cc = std::string(field(r, cc));
  };
  // Details page: the fields a row must have, up to "Metric Value"; the rule columns after
  // it may be left off.
  const size_t min_fields = report.raw_page ? h.size() : static_cast<size_t>(value) + 1;
  std::vector<std::string> units;  // raw page
  std::map<std::string, size_t> by_id;  // details page: ID -> kernel
  bool first = true;
  while (reader.Next(&row, &error)) {
    if (row.fields.size() == 1 && row.fields[0].empty()) continue;
    // ncu appends program output after the table sometimes: a line that does not look like
    // CSV at all is skipped.
    if (row.fields.size() == 1 && h.size() > 1) continue;
    // ncu leaves the empty rule columns after "Metric Value" off a metric row (16 fields
    // under a 20-field header); any other field count is a malformed row.
    if (row.fields.size() > h.size() || row.fields.size() < min_fields) {
      return absl::InvalidArgumentError(absl::StrCat(label, ": line ", row.line, " has ",
                                                     row.fields.size(), " fields, the header ",
                                                     h.size()));
    }
    row.fields.resize(h.size());
    if (report.raw_page) {
      if (first) {
        first = false;
        // The units row: no ID and no kernel name.
        if (field(row, id).empty() && field(row, name).empty()) {
          units = row.fields;
          continue;
        }
      }
      NcuKernel k;
      fill_identity(row, &k);
      for (size_t i = 0; i < h.size(); ++i) {
        if (IsIdentityColumn(h[i])) continue;
        std::string_view u = i < units.size() ? std::string_view(units[i]) : std::string_view();
        auto v = NcuValueInBaseUnits(row.fields[i], u);
        if (!v) continue;
        k.metrics.emplace_back(h[i], *v);
        Classify(&k, h[i], u, *v);
      }
      report.kernels.push_back(std::move(k));
    } else {
      std::string key(field(row, id));
      if (key.empty()) key = absl::StrCat(std::string(field(row, name)), "#", report.kernels.size());
      auto [it, inserted] = by_id.try_emplace(key, report.kernels.size());
      if (inserted) {
        report.kernels.emplace_back();
        fill_identity(row, &report.kernels.back());
      }
      NcuKernel& k = report.kernels[it->second];
      std::string mname(field(row, metric));
      auto v = NcuValueInBaseUnits(field(row, value), field(row, unit));
      if (!v) continue;
      k.metrics.emplace_back(mname, *v);
      Classify(&k, mname, field(row, unit), *v);
    }
  }
  if (!error.empty()) return absl::DataLossError(absl::StrCat(label, ": ", error));
  for (NcuKernel& k : report.kernels) SummariseCounts(&k);
  return report;
}

}  // namespace qprof::importers
