// decode_bench: CPU decode throughput of the bundled model (not a test).
//
// First runs the default `qprof run --backend cpu --model small --format both` workload
// (batch 16, 8 steps, context 256) and reports its wall time and peak RSS (getrusage, so it
// is measured before anything larger runs in this process). Then, for tiny and small, both
// formats, both MoE paths (slot_gemv, grouped) and batch 1, 16, 64: decode tokens/s and the
// share of time in the experts. Weights are built once per (model, format); every number is
// a host CPU measurement (steady clock) on this machine, under whatever load it carries.
//
// Usage: decode_bench [--quick]   (--quick: tiny only, fewer steps)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "kernels/common/thread_pool.h"
#include "runtime/cpu_decoder.h"
#include "runtime/model_weights.h"
#include "runtime/plan.h"
#include "runtime/run.h"

namespace {

using namespace qprof;

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double LoadAverage() {
  double l[1] = {0};
  return getloadavg(l, 1) == 1 ? l[0] : -1;
}

int DefaultRun() {
  auto t0 = std::chrono::steady_clock::now();
  double decode = 0;
  for (const char* fmt : {"mxfp4", "nvfp4"}) {
    runtime::RunOptions o;  // the defaults of `qprof run`
    o.model = "small";
    o.format = fmt;
    auto r = runtime::RunDecode(o);
    if (!r.ok()) {
      std::fprintf(stderr, "default run failed: %s\n", std::string(r.status().message()).c_str());
      return 1;
    }
    decode += r->trace.header().run().wall_time_ns() * 1e-9;
  }
  auto t1 = std::chrono::steady_clock::now();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("default run (small, both formats, batch 16, 8 steps, context 256): "
              "%.1f s wall (%.1f s decode), peak RSS %.0f MiB, load average %.1f\n",
              Seconds(t0, t1), decode, ru.ru_maxrss / 1024.0, LoadAverage());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (!quick && DefaultRun() != 0) return 1;
  kernels::ThreadPool pool(0);
  std::printf("threads %d, load average %.1f\n", pool.size(), LoadAverage());
  std::printf("%-6s %-6s %-10s %5s %10s %8s\n", "model", "format", "moe path", "batch",
              "tokens/s", "experts%");
  std::vector<std::string> models = {"tiny"};
  if (!quick) models.push_back("small");
  for (const std::string& model : models) {
    const runtime::ModelArch c = *runtime::PresetArch(model);
    for (auto fmt : {kernels::Fp4Format::kMxfp4, kernels::Fp4Format::kNvfp4}) {
      auto w = runtime::MakeSyntheticWeights(c, fmt, 0, 1, &pool);
      if (!w.ok()) return 1;
      for (bool grouped : {false, true}) {
        for (int batch : {1, 16, 64}) {
          const int steps = quick ? 2 : (model == "tiny" ? 8 : (batch == 64 ? 2 : 4));
          runtime::DecoderOptions o;
          o.context_lengths = runtime::ContextLengths(256, batch);
          o.max_steps = steps + 1;
          o.moe_kernel_id = std::string(grouped ? "moe.w4a16_mma." : "moe.slot_gemv.") +
                            kernels::FormatName(fmt);
          o.mla_kernel_id = "attn.sparse_mla.simt";
          runtime::CpuDecoder d(*w, o, &pool);
          if (!d.Init().ok()) return 1;
          std::vector<int32_t> tokens(batch, 1), next;
          std::vector<float> logits;
          // One warm-up step (first touch of the caches and weights).
          if (!d.Step(0, tokens, nullptr, &logits, &next).ok()) return 1;
          profiler::HostCollector col(pool.size());
          (void)col.Start();
          auto t0 = std::chrono::steady_clock::now();
          for (int s = 1; s <= steps; ++s) {
            if (!d.Step(s, next, &col, &logits, &next).ok()) return 1;
          }
          auto t1 = std::chrono::steady_clock::now();
          (void)col.Stop();
          proto::Trace t;
          (void)col.Flush(&t);
          double experts = 0, total = 0;
          for (const auto& a : t.activities()) {
            double ns = a.end_ns() - a.start_ns();
            total += ns;
            if (a.attribution().role() == "moe.experts") experts += ns;
          }
          std::printf("%-6s %-6s %-10s %5d %10.1f %7.1f%%\n", model.c_str(),
                      kernels::FormatName(fmt), grouped ? "grouped" : "slot_gemv", batch,
                      batch * steps / Seconds(t0, t1), total > 0 ? 100 * experts / total : 0);
          std::fflush(stdout);
        }
      }
    }
  }
  return 0;
}
