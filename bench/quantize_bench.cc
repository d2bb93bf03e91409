// Throughput of the MXFP4/NVFP4 block quantizers and dequantizers on this machine's CPU
// (measured, wall clock, best of N repetitions to shed noise from other processes).
//
//   bench_quantize [ROWS COLS] [REPS]      default 4096 x 4096 F32 (64 MiB), 5 reps
//
// MB/s counts F32 bytes: input read for quantize, output written for dequantize (the
// targets in issue 2 are >= 500 MB/s and >= 2 GB/s per core). Runs with 1 thread (the
// per-core figure) and with 2 threads (what `qprof quantize` uses).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>

#include "kernels/formats/mxfp4.h"
#include "kernels/formats/nvfp4.h"

namespace {

using Clock = std::chrono::steady_clock;

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Best wall time and best process CPU time over `reps` runs. On a shared machine the wall
// time includes waiting for a core; CPU seconds (all threads) give the per-core rate.
struct Timing {
  double wall = 1e30;
  double cpu = 1e30;
};

template <typename Fn>
Timing Best(int reps, Fn&& fn) {
  Timing best;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    const double c0 = CpuSeconds();
    fn();
    best.cpu = std::min(best.cpu, CpuSeconds() - c0);
    best.wall = std::min(best.wall, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

void Print(const char* format, int threads, double mb, Timing q, Timing d) {
  std::printf("%-7s %-8d %5.0f | %5.0f MB/s      %5.0f | %5.0f MB/s\n", format, threads,
              mb / q.wall, mb / q.cpu, mb / d.wall, mb / d.cpu);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t rows = argc > 2 ? std::atoll(argv[1]) : 4096;
  const int64_t cols = argc > 2 ? std::atoll(argv[2]) : 4096;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  std::vector<float> x(rows * cols), y(rows * cols);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  for (auto& v : x) v = normal(rng);
  const double mb = x.size() * 4.0 / 1e6;
  std::printf("bench_quantize: [%lld, %lld] F32 = %.1f MB, best of %d (measured)\n",
              static_cast<long long>(rows), static_cast<long long>(cols), mb, reps);
  std::printf("%-7s %-8s %-22s %-22s\n", "format", "threads", "quantize wall | per core",
              "dequantize wall | per core");
  for (int threads : {1, 2}) {
    qprof::fp4::Mxfp4Matrix mx;
    const Timing q_mx = Best(reps, [&] {
      mx = *qprof::fp4::QuantizeMxfp4(x.data(), rows, cols, "bench", threads);
    });
    const Timing d_mx = Best(reps, [&] { qprof::fp4::DequantizeMxfp4(mx, y.data(), threads); });
    Print("mxfp4", threads, mb, q_mx, d_mx);
    qprof::fp4::Nvfp4Matrix nv;
    const Timing q_nv = Best(reps, [&] {
      const float amax = *qprof::fp4::AbsMaxFinite(x.data(), rows, cols, "bench", threads);
      nv = *qprof::fp4::QuantizeNvfp4WithScale2(x.data(), rows, cols,
                                                qprof::fp4::Nvfp4Scale2ForAmax(amax), "bench",
                                                threads);
    });
    const Timing d_nv = Best(reps, [&] { qprof::fp4::DequantizeNvfp4(nv, y.data(), threads); });
    Print("nvfp4", threads, mb, q_nv, d_nv);
  }
  return 0;
}
