// Nsight Compute CSV (`ncu --csv --page details` or `--page raw`) -> one record per profiled
// kernel launch, in the order ncu profiled them.
//
// The file may start with a preamble (==PROF== lines, the program's own output); the header
// is the first line with a "Kernel Name" field and a "Metric Name" field (details page: one
// row per metric, grouped by "ID") or an "ID" field (raw page: one row per kernel, metric
// names as columns, then a units row). Values may carry thousands separators ("1,234.5")
// and scaled units ("Kbyte", "usecond", "Gbyte/second"); values are stored in base units
// (bytes, ns, bytes/s; "%" as is), keyed by the metric name as printed.
#ifndef QPROF_ANALYSIS_IMPORTERS_NCU_NCU_CSV_H_
#define QPROF_ANALYSIS_IMPORTERS_NCU_NCU_CSV_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace qprof::importers {

struct NcuKernel {
  std::string id;
  std::string name;
  uint32_t pid = 0;
  uint32_t device = 0;
  uint64_t stream = 0;
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  std::vector<std::pair<std::string, double>> metrics;  // base units
  std::optional<double> duration_ns;
  std::optional<double> tensor_pipe_pct, fma_pipe_pct, dram_pct, sm_pct;
};

struct NcuReport {
  bool raw_page = false;
  std::vector<NcuKernel> kernels;
};

// Parses CSV text; `label` names errors ("<label>: row 12 has 5 fields, the header 15").
absl::StatusOr<NcuReport> ParseNcuCsv(std::string_view text, const std::string& label);

// "1,234.5" with unit "Kbyte" -> 1234500. nullopt for "n/a", "" and non-numbers.
std::optional<double> NcuValueInBaseUnits(std::string_view value, std::string_view unit);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NCU_NCU_CSV_H_
