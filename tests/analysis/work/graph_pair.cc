#include "tests/analysis/work/graph_pair.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/aggregate/partial.h"
#include "analysis/analyze.h"
#include "analysis/ceilings/ceilings.h"
#include "analysis/importers/import.h"
#include "analysis/ingest.h"
#include "analysis/replay_layers.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace qprof::testing {
namespace {

struct Json {
  std::vector<std::string> events;
  void Add(const std::string& cat, const std::string& name, int pid, int tid, double ts,
           double dur, const std::string& args = "") {
    events.push_back(absl::StrCat("{\"ph\": \"X\", \"cat\": \"", cat, "\", \"name\": \"", name,
                                  "\", \"pid\": ", pid, ", \"tid\": ", tid, ", \"ts\": ", ts,
                                  ", \"dur\": ", dur,
                                  args.empty() ? "" : ", \"args\": {" + args + "}", "}"));
  }
  std::string Doc(bool rocm) const {
    const std::string props =
        rocm ? R"([{"id": 0, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992, "computeMajor": 9, "computeMinor": 4, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 64, "sharedMemPerBlock": 65536, "numSms": 304, "maxSharedMemoryPerMultiProcessor": 65536}])"
             : R"([{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045477376, "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132, "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472}])";
    return absl::StrCat("{\"schemaVersion\": 1, \"deviceProperties\": ", props,
                        ", \"traceEvents\": [\n", absl::StrJoin(events, ",\n"), "\n]}");
  }
};

// A file in this process's temporary folder.
std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("qprof_graph_pair_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path p = dir / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p.string();
}

std::string Geometry(uint32_t grid) {
  return absl::StrCat("\"grid\": [", grid, ", 1, 1], \"block\": [256, 1, 1]");
}

}  // namespace

std::string CaptureTraceJson(const std::vector<PlanCapture>& captures, bool rocm) {
  const std::string api = rocm ? "hip" : "cuda";
  Json j;
  int corr = 100;
  double t = 100;
  for (const PlanCapture& c : captures) {
    size_t launches = 0;
    for (const PlanOp& op : c.ops) launches += op.kernels.size();
    const double len = 20.0 * static_cast<double>(launches + c.ops.size()) + 40;
    j.Add("user_annotation",
          c.names_batch ? absl::StrCat("capture_", c.batch, "_DECODE") : "graph_capture", 7, 7, t,
          len);
    j.Add("cuda_runtime", api + "StreamBeginCapture", 7, 7, t + 1, 2,
          absl::StrCat("\"correlation\": ", ++corr));
    double at = t + 10;
    for (const PlanOp& op : c.ops) {
      const double op_len = 20.0 * static_cast<double>(op.kernels.size()) + 10;
      std::string args = absl::StrCat("\"Input Dims\": ", op.dims, ", \"Input type\": ", op.types);
      if (!op.concrete.empty()) absl::StrAppend(&args, ", \"Concrete Inputs\": ", op.concrete);
      j.Add("cpu_op", op.op, 7, 7, at, op_len, args);
      double k_at = at + 3;
      for (const PlanKernel& k : op.kernels) {
        j.Add("cuda_runtime", rocm ? "hipLaunchKernel" : "cudaLaunchKernel", 7, 7, k_at, 4,
              absl::StrCat(rocm ? "\"kernel\": \"" + k.name + "\", " : "", "\"correlation\": ",
                           ++corr, rocm ? ", " + Geometry(k.grid) : ""));
        k_at += 20;
      }
      at += op_len + 10;
    }
    j.Add("cuda_runtime", api + "StreamEndCapture", 7, 7, t + len - 5, 2,
          absl::StrCat("\"correlation\": ", ++corr));
    t += len + 50;
  }
  return j.Doc(rocm);
}

std::string ReplayTraceJson(const std::vector<PlanCapture>& captures,
                            const std::vector<PlanReplay>& replays, bool rocm) {
  Json j;
  double t = 10000;
  int corr = 5000;
  for (const PlanReplay& r : replays) {
    const PlanCapture& c = captures[r.capture];
    size_t launches = 0;
    for (const PlanOp& op : c.ops) launches += op.kernels.size();
    const double len = 10.0 * static_cast<double>(launches) + 60;
    if (r.step_range) {
      j.Add("user_annotation", absl::StrCat("step[DECODE bs=", c.batch, "]"), 7, 7, t, len);
    }
    j.Add("cuda_runtime", rocm ? "hipGraphLaunch" : "cudaGraphLaunch", 7, 7, t + 2, 8,
          absl::StrCat("\"correlation\": ", ++corr));
    // Kernels start in call order, 10 us apart, each 8 us long (one stream's never overlap).
    double at = t + 20;
    for (const PlanOp& op : c.ops) {
      for (const PlanKernel& k : op.kernels) {
        j.Add("kernel", k.name, 0, static_cast<int>(k.stream), at, 8,
              absl::StrCat("\"device\": 0, \"stream\": ", k.stream, ", \"correlation\": ", corr,
                           ", ", Geometry(k.grid)));
        at += 10;
      }
    }
    t += len + 100;
  }
  return j.Doc(rocm);
}

Analysed AnalyseReplay(const std::string& tag, const std::string& replay_json,
                       const std::string& capture_json, const std::string& config_json,
                       uint32_t batch, uint32_t tp) {
  Analysed out;
  importers::ImportOptions o;
  o.progress = false;
  o.threads = 1;
  if (!capture_json.empty()) {
    const std::string cap =
        WriteTemp("graph_capture_" + tag + ".json", capture_json);
    auto set = importers::ReadGraphCaptures({cap}, o);
    EXPECT_TRUE(set.ok()) << set.status();
    if (!set.ok()) return out;
    o.graph_captures = *set;
  }
  AnalyzeOptions ao;
  if (!config_json.empty()) {
    auto m = ceilings::ParseModelConfig(config_json, tag + "/config.json");
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) return out;
    ao.model = *m;
    // A config that does not describe its layers (no heads) models nothing, as in qprof.
    auto layers = LayerModelFor(*m->shape, batch, tp);
    if (layers.ok()) o.layer_model = *layers;
  }
  const std::string rep = WriteTemp("graph_replay_" + tag + ".json", replay_json);
  auto state = IngestFile(rep, o);
  EXPECT_TRUE(state.ok()) << state.status();
  if (!state.ok()) return out;
  auto profile = AnalyzeState(*state, ao);
  EXPECT_TRUE(profile.ok()) << profile.status();
  if (!profile.ok()) return out;
  auto back = aggregate::FromPartial(aggregate::ToPartial(*state), "partial");
  EXPECT_TRUE(back.ok());
  if (back.ok()) {
    auto merged = AnalyzeState(*back, ao);
    std::string diff;
    google::protobuf::util::MessageDifferencer d;
    d.ReportDifferencesToString(&diff);
    EXPECT_TRUE(merged.ok() && d.Compare(*profile, *merged))
        << "a partial of the state must analyse the same: " << diff.substr(0, 2000);
  }
  out.profile = *profile;
  out.join = state->traces[0].header.launch_context_stats().graph_capture();
  return out;
}

}  // namespace qprof::testing
