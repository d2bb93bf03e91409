// ingest_bench FILE: imports one trace with ImportFile and prints wall time, throughput
// over the file's size, activities and the process's peak RSS (one file per run, so the
// peak belongs to that import). Used by bench/ingest_bench.sh; not a test.
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "analysis/importers/import.h"
#include "base/absl_fmt.h"
#include "fmt/core.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: ingest_bench FILE\n");
    return 2;
  }
  std::string path = argv[1];
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    fmt::print(stderr, "ingest_bench: {}: no such file\n", path);
    return 2;
  }
  qprof::importers::ImportOptions options;
  options.progress = false;
  auto t0 = std::chrono::steady_clock::now();
  auto trace = qprof::importers::ImportFile(path, options);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!trace.ok()) {
    fmt::print(stderr, "ingest_bench: {}\n", trace.status().message());
    return 1;
  }
  int64_t kernels = 0;
  for (const auto& a : trace->activities()) kernels += a.kind() == qprof::proto::ACTIVITY_KIND_KERNEL;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double mb = static_cast<double>(st.st_size) / 1e6;
  // CPU time next to wall time: on a shared machine the wall clock includes waiting.
  double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
  fmt::print("{}: {} {:.1f} MB in {:.3f} s wall = {:.0f} MB/s ({:.3f} s CPU = {:.0f} MB/s); "
             "{} activities ({} kernels); peak RSS {:.0f} MB ({:.0f}% of the input)\n",
             path, trace->header().source_kind(), mb, secs, mb / secs, cpu, mb / cpu,
             trace->activities_size(), kernels, ru.ru_maxrss / 1e3,
             100.0 * ru.ru_maxrss * 1e3 / static_cast<double>(st.st_size));
  return 0;
}
