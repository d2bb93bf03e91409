// Kineto / Chrome trace JSON, plain or gzip, from arbitrary bytes: must return a trace or
// one error, never crash, hang or leak; an imported trace must serialize.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/importers/kineto/kineto_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qprof::importers::ImportOptions options;
  options.progress = false;
  auto trace = qprof::importers::ImportKinetoJsonBytes(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", options);
  if (trace.ok()) {
    std::string bytes;
    if (!trace->SerializeToString(&bytes)) __builtin_trap();  // invalid UTF-8 leaked through
  }
  return 0;
}
