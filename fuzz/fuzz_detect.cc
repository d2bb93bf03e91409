// The whole ImportFile path (detection, then whichever importer the bytes pick) on a file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "analysis/importers/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/qprof_fuzz_detect_" + std::to_string(getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  qprof::importers::ImportOptions options;
  options.progress = false;
  auto trace = qprof::importers::ImportFile(path, options);
  (void)trace;
  std::remove(path.c_str());
  return 0;
}
