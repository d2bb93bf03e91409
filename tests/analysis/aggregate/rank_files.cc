#include "tests/analysis/aggregate/rank_files.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>

#include "base/text.h"
#include "fmt/format.h"

namespace qprof::testing {
namespace {

bool IsComm(const std::string& name) { return name.find("nccl") != std::string::npos; }

const char* Category(proto::ActivityKind k) {
  switch (k) {
    case proto::ACTIVITY_KIND_KERNEL: return "kernel";
    case proto::ACTIVITY_KIND_MEMCPY: return "gpu_memcpy";
    case proto::ACTIVITY_KIND_MEMSET: return "gpu_memset";
    default: return nullptr;
  }
}

// Microseconds with three decimals: exactly the nanoseconds.
std::string Micros(int64_t ns) { return fmt::format("{}.{:03d}", ns / 1000, ns % 1000); }

int64_t Slowed(const proto::Activity& a, double factor) {
  int64_t d = a.end_ns() - a.start_ns();
  if (a.kind() != proto::ACTIVITY_KIND_KERNEL || IsComm(a.name())) return d;
  return static_cast<int64_t>(std::llround(static_cast<double>(d) * factor));
}

}  // namespace

std::string SharedTestData() {
  if (const char* env = std::getenv("QPROF_TESTDATA"); env && *env) {
    if (std::filesystem::is_directory(env)) return env;
  }
  auto p = std::filesystem::path(QPROF_SOURCE_DIR) / ".." / "shared" / "testdata";
  return std::filesystem::is_directory(p) ? p.lexically_normal().string() : "";
}

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             fmt::format("qprof_{}_{}", name, static_cast<long>(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::vector<std::string> WriteRankSet(const proto::Trace& source, const std::string& dir,
                                      int ranks, int slow, double factor) {
  std::vector<std::string> paths;
  for (int r = 0; r < ranks; ++r) {
    const double f = r == slow ? factor : 1.0;
    const int64_t shift = int64_t{r} * 1'000'000'000;
    std::map<std::pair<uint32_t, uint64_t>, int64_t> delay;  // per stream: how late it runs
    std::string out = fmt::format(
        "{{\"schemaVersion\": 1, \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, "
        "\"world_size\": {}}}, \"traceEvents\": [",
        r, ranks);
    bool first = true;
    uint64_t corr = 1;
    for (const proto::Activity& a : source.activities()) {
      const char* cat = Category(a.kind());
      if (cat == nullptr) continue;
      int64_t& late = delay[{a.device_id(), a.stream_id()}];
      const int64_t d = Slowed(a, f);
      const int64_t start = a.start_ns() + late + shift;
      late += d - (a.end_ns() - a.start_ns());
      out += fmt::format(
          "{}\n{{\"ph\": \"X\", \"cat\": \"{}\", \"name\": {}, \"pid\": {}, \"tid\": {}, "
          "\"ts\": {}, \"dur\": {}, \"args\": {{\"device\": {}, \"stream\": {}, "
          "\"correlation\": {}}}}}",
          first ? "" : ",", cat, JsonQuote(a.name()), a.device_id(), a.stream_id(),
          Micros(start), Micros(d), a.device_id(), a.stream_id(), corr++);
      first = false;
    }
    out += "\n]}\n";
    std::string path = fmt::format("{}/rank{}.json", dir, r);
    std::ofstream(path, std::ios::binary) << out;
    paths.push_back(path);
  }
  return paths;
}

uint64_t ComputeNs(const proto::Trace& source, double factor) {
  uint64_t total = 0;
  for (const proto::Activity& a : source.activities()) {
    if (a.kind() == proto::ACTIVITY_KIND_KERNEL && !IsComm(a.name())) {
      total += static_cast<uint64_t>(Slowed(a, factor));
    }
  }
  return total;
}

}  // namespace qprof::testing
