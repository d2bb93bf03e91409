// ingest_bench [--import|--analyze] [--threads N] [--batch BYTES] FILE: reads one trace and prints wall
// time, CPU time, throughput over the file's size and the process's peak RSS (one file per
// run, so the peak belongs to that read). --import (the default) builds the whole trace
// (ImportFile, as `qprof import` does); --analyze streams it into the aggregation and
// finishes a Profile (IngestFile + AnalyzeState, as `qprof analyze` does). Used by
// bench/ingest_bench.sh; not a test.
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "analysis/analyze.h"
#include "analysis/importers/import.h"
#include "analysis/ingest.h"
#include "base/absl_fmt.h"
#include "fmt/core.h"

namespace {

double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  bool analyze = false;
  int threads = 0;
  size_t batch = 0;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--analyze") == 0) {
      analyze = true;
    } else if (std::strcmp(argv[i], "--import") == 0) {
      analyze = false;
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
      batch = static_cast<size_t>(std::atol(argv[++i]));
    } else {
      path = argv[i];
    }
  }
  struct stat st;
  if (path.empty() || ::stat(path.c_str(), &st) != 0) {
    fmt::print(stderr, "usage: ingest_bench [--import|--analyze] [--threads N] [--batch BYTES] FILE\n");
    return 2;
  }
  qprof::importers::ImportOptions options;
  options.progress = false;
  options.threads = threads;
  options.batch_bytes = batch;
  auto t0 = std::chrono::steady_clock::now();
  std::string what;
  uint64_t kernels = 0;
  if (analyze) {
    auto state = qprof::IngestFile(path, options);
    if (!state.ok()) {
      fmt::print(stderr, "ingest_bench: {}\n", state.status().message());
      return 1;
    }
    auto profile = qprof::AnalyzeState(*state, {});
    if (!profile.ok()) {
      fmt::print(stderr, "ingest_bench: {}\n", profile.status().message());
      return 1;
    }
    kernels = profile->totals().kernel_count();
    what = "analyzed";
  } else {
    auto trace = qprof::importers::ImportFile(path, options);
    if (!trace.ok()) {
      fmt::print(stderr, "ingest_bench: {}\n", trace.status().message());
      return 1;
    }
    for (const auto& a : trace->activities()) kernels += a.kind() == qprof::proto::ACTIVITY_KIND_KERNEL;
    what = "imported";
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = CpuSeconds();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double mb = static_cast<double>(st.st_size) / 1e6;
  fmt::print("{}: {} {:.1f} MB in {:.3f} s wall = {:.0f} MB/s ({:.3f} s CPU); {} kernels; "
             "peak RSS {:.1f} MB ({:.0f}% of the input)\n",
             path, what, mb, secs, mb / secs, cpu, kernels, ru.ru_maxrss / 1e3,
             100.0 * ru.ru_maxrss * 1e3 / static_cast<double>(st.st_size));
  return 0;
}
