// Nsight Compute CSV (details and raw pages) from arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/importers/ncu/ncu_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto trace = qprof::importers::ImportNcuCsvText(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.csv");
  if (trace.ok()) {
    std::string bytes;
    if (!trace->SerializeToString(&bytes)) __builtin_trap();
  }
  return 0;
}
