// Nsight Compute CSV (`ncu --csv --page details` or `--page raw`) -> one record per profiled
// kernel launch, in the order ncu profiled them.
//
// The file may start with a preamble (==PROF== lines, the program's own output); the header
// is the first line with a "Kernel Name" field and a "Metric Name" field (details page: one
// row per metric, grouped by "ID") or an "ID" field (raw page: one row per kernel, metric
// names as columns, then a units row). Values may carry thousands separators ("1,234.5")
// and scaled units ("Kbyte", "usecond", "Gbyte/second"); values are stored in base units
// (bytes, ns, bytes/s; "%" as is), keyed by the metric name as printed.
//
// Rows as ncu writes them: the details page carries rule columns after "Metric Value"
// ("Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated
// Speedup") that only rule rows fill; metric rows leave the empty trailing fields off (16
// fields under a 20-field header). A row shorter than the header reads its missing trailing
// fields as empty; a longer one is an error. Rows without a metric name (rule rows) carry
// no value.
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
  std::string cc;  // the "CC" column: compute capability "12.0" ("" when absent)
  std::vector<std::pair<std::string, double>> metrics;  // base units
  std::optional<double> duration_ns;
  std::optional<double> tensor_pipe_pct, fma_pipe_pct, dram_pct, sm_pct;
  // Tensor-pipe work counted (KernelMetrics.tensor_count): the operations of every
  // sm__ops_path_tensor_* counter summed (the paths are disjoint), else the largest
  // sm__inst_executed_pipe_tensor* / _tc instruction counter (they nest: all >= op_hmma).
  std::optional<double> tensor_count;
  std::string tensor_count_metric;
  // dram__bytes_read.sum + dram__bytes_write.sum (or dram__bytes.sum), bytes.
  std::optional<double> dram_bytes;
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
