// ingest_bench [--import|--analyze|--json-floor|--json-dom] [--threads N] [--batch BYTES] FILE:
// reads one trace and prints wall time, CPU time, throughput over the file's size and the
// process's peak RSS (one file per run, so the peak belongs to that read). --import (the
// default) builds the whole trace (ImportFile, as `qprof import` does); --analyze streams it
// into the aggregation and finishes a Profile (IngestFile + AnalyzeState, as `qprof analyze`
// does); --json-floor is the least any reader of a Kineto JSON must do: simdjson On-Demand
// over the whole document on one thread, finding each event's "cat" and nothing else;
// --json-dom is a simdjson DOM parse of the whole document on one thread (every value
// materialised in simdjson's tape), the floor bench/ingest_bench.sh prints. The two JSON
// floors leave reading the file out of their times. Used by bench/ingest_bench.sh; not a test.
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
#include "simdjson.h"

namespace {

double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

// Events in the document and the bytes of their categories (so nothing is optimised away).
simdjson::error_code ScanCategories(const simdjson::padded_string& json, uint64_t* events,
                                    uint64_t* cat_bytes) {
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  SIMDJSON_TRY(parser.iterate(json).get(doc));
  simdjson::ondemand::array arr;
  SIMDJSON_TRY(doc["traceEvents"].get_array().get(arr));
  for (auto ev : arr) {
    simdjson::ondemand::object obj;
    SIMDJSON_TRY(ev.get_object().get(obj));
    ++*events;
    for (auto field : obj) {
      std::string_view key;
      SIMDJSON_TRY(field.unescaped_key().get(key));
      if (key != "cat") continue;
      std::string_view cat;
      SIMDJSON_TRY(field.value().get_string().get(cat));
      *cat_bytes += cat.size();
      break;
    }
  }
  return simdjson::SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  bool analyze = false, floor = false, dom = false;
  int threads = 0;
  size_t batch = 0;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--analyze") == 0) {
      analyze = true;
    } else if (std::strcmp(argv[i], "--import") == 0) {
      analyze = false;
    } else if (std::strcmp(argv[i], "--json-floor") == 0) {
      floor = true;
    } else if (std::strcmp(argv[i], "--json-dom") == 0) {
      floor = dom = true;
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
    fmt::print(stderr, "usage: ingest_bench [--import|--analyze|--json-floor|--json-dom] [--threads N] "
                       "[--batch BYTES] FILE\n");
    return 2;
  }
  qprof::importers::ImportOptions options;
  options.progress = false;
  options.threads = threads;
  options.batch_bytes = batch;
  auto t0 = std::chrono::steady_clock::now();
  std::string what;
  uint64_t kernels = 0;
  double cpu0 = 0;
  if (floor) {
    // Loaded first and left out of the times: the floor is the parse, not the read into a
    // freshly allocated buffer (whose page faults a streaming reader does not pay).
    simdjson::padded_string json;
    if (simdjson::padded_string::load(path).get(json) != simdjson::SUCCESS) {
      fmt::print(stderr, "ingest_bench: cannot read {}\n", path);
      return 1;
    }
    t0 = std::chrono::steady_clock::now();
    cpu0 = CpuSeconds();
    if (dom) {
      simdjson::dom::parser parser;
      simdjson::dom::element doc;
      simdjson::dom::array events;
      if (simdjson::error_code e = parser.parse(json).get(doc)) {
        fmt::print(stderr, "ingest_bench: {}: {}\n", path, simdjson::error_message(e));
        return 1;
      }
      if (doc["traceEvents"].get_array().get(events) == simdjson::SUCCESS) kernels = events.size();
      what = "parsed (DOM)";
    } else {
      uint64_t cat_bytes = 0;
      if (simdjson::error_code e = ScanCategories(json, &kernels, &cat_bytes)) {
        fmt::print(stderr, "ingest_bench: {}: {}\n", path, simdjson::error_message(e));
        return 1;
      }
      what = fmt::format("scanned ({} bytes of categories)", cat_bytes);
    }
  } else if (analyze) {
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
  double cpu = CpuSeconds() - cpu0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double mb = static_cast<double>(st.st_size) / 1e6;
  fmt::print("{}: {} {:.1f} MB in {:.3f} s wall = {:.0f} MB/s ({:.3f} s CPU); {} {}; "
             "peak RSS {:.1f} MB ({:.0f}% of the input)\n",
             path, what, mb, secs, mb / secs, cpu, kernels, floor ? "events" : "kernels",
             ru.ru_maxrss / 1e3,
             100.0 * ru.ru_maxrss * 1e3 / static_cast<double>(st.st_size));
  return 0;
}
