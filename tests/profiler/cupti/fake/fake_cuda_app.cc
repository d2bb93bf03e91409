// A small "CUDA program" for `qprof record` end to end without a GPU: it calls cuInit and
// launches on the fake GPU of the stand-in driver, and logs what it launched, one line
// per GPU operation, so a test can hold the trace against it.
//
//   fake_cuda_app SCENARIO LOG [SCRIPT]
// Scenarios:
//   normal   two threads, two streams each, NVTX paths (and an NCCL-domain range),
//            copies, memsets, graph replays; exits normally
//   kill     launches until the streamed trace has a chunk on disk, then SIGKILL itself
//   sigterm  launches, then SIGTERM itself (default disposition: the process ends)
//   fork     launches, forks a worker that uses no CUDA and outlives the parent
//   fork-late  as fork, but only once the streamed trace file is open (the child must
//            leave the parent's file alone and write its own)
//   script   plays the script file given as a third argument, one operation a line:
//              push <name> | pop | kernel <name> | capture <stream> | instantiate <stream> |
//              replay <stream>   (kernels on stream 7 unless captured elsewhere)
//   capture  a serving loop: warm-up (eager and a graph replay), then cudaProfilerStart,
//            one step (eager kernels and a graph replay), cudaProfilerStop, more steps;
//            only the bracketed step is logged as "kernel"/"graph" (the rest as
//            "outside\t<name>"), then "done" at the end
//   capture-nvtx  the same, with the step inside an NVTX range "profile" instead
//   reset    launches, cudaDeviceReset, launches again on the new context
//   chdir    changes directory before cuInit, then launches
//   none     cuInit, launches nothing
//   nocuda   never initialises CUDA
// Log lines: "kernel\t<name>\t<stream>\t<tid>\t<nvtx path>", "memcpy\t...", "memset\t...",
// "graph\t<kernel>\t<stream>\t<tid>\t<nvtx path>" (one per graph kernel), and
// "nvtx\t<NVTX_INJECTION64_PATH or ->" once.
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <cudaProfiler.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/profiler/cupti/fake/fake_gpu_app_api.h"

namespace {

FILE* g_log = nullptr;
std::mutex g_log_mu;
thread_local std::vector<std::string> t_path;  // this thread's default-domain NVTX path

uint64_t Tid() { return static_cast<uint64_t>(syscall(SYS_gettid)); }

std::string Path() {
  std::string p;
  for (const std::string& n : t_path) p += (p.empty() ? "" : "/") + n;
  return p;
}

void Line(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  std::fprintf(g_log, "%s\n", line.c_str());
  std::fflush(g_log);
}

void Push(const char* name) {
  t_path.push_back(name);
  qprofFakeNvtxPush("", name);
}
void Pop() {
  t_path.pop_back();
  qprofFakeNvtxPop("");
}

void Kernel(const std::string& name, unsigned stream) {
  qprofFakeLaunchKernel(name.c_str(), stream, 3000);
  Line("kernel\t" + name + "\t" + std::to_string(stream) + "\t" + std::to_string(Tid()) + "\t" + Path());
}

// One thread's share of the "normal" workload.
void Worker(int w, int steps, int kernels_per_step) {
  Push("decode");
  for (int s = 0; s < steps; ++s) {
    const std::string step = "step " + std::to_string(s);
    Push(step.c_str());
    for (int k = 0; k < kernels_per_step; ++k) {
      Kernel(k % 3 == 0 ? "_Z8mma_gemmILi" + std::to_string(w) + "EEvv" : "rmsnorm_kernel",
             1 + 2 * w + (k % 2));
    }
    // A library's own range (NCCL's domain) must not change the application's path.
    qprofFakeNvtxPush("NCCL", "ncclAllReduce");
    Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1 + 2 * w);
    qprofFakeNvtxPop("NCCL");
    Pop();
  }
  const unsigned stream = 1 + 2 * w;
  qprofFakeMemcpy(1 /*HtoD*/, 1 << 20, stream);
  Line("memcpy\tMemcpy HtoD\t" + std::to_string(stream) + "\t" + std::to_string(Tid()) + "\t" + Path());
  qprofFakeMemset(4096, stream);
  Line("memset\tMemset\t" + std::to_string(stream) + "\t" + std::to_string(Tid()) + "\t" + Path());
  const char* graph[] = {"graph_rmsnorm", "graph_attn", "graph_moe"};
  for (int r = 0; r < 2; ++r) {
    qprofFakeGraphLaunch(graph, 3, stream);
    for (const char* g : graph) {
      Line(std::string("graph\t") + g + "\t" + std::to_string(stream) + "\t" + std::to_string(Tid()) + "\t" + Path());
    }
  }
  Pop();
}

void RunThreads(int steps, int kernels_per_step) {
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) threads.emplace_back(Worker, w, steps, kernels_per_step);
  for (auto& t : threads) t.join();
  qprofFakeSynchronize();
}

// Size of the largest streamed trace file in QPROF_OUT_DIR (0 if none).
long StreamedBytes() {
  const char* dir = std::getenv("QPROF_OUT_DIR");
  if (dir == nullptr) return 0;
  long best = 0;
  if (DIR* d = opendir(dir)) {
    while (dirent* e = readdir(d)) {
      if (std::strstr(e->d_name, ".qtrace.partial") == nullptr) continue;
      struct stat st;
      if (stat((std::string(dir) + "/" + e->d_name).c_str(), &st) == 0) best = std::max(best, static_cast<long>(st.st_size));
    }
    closedir(d);
  }
  return best;
}

void Outside(const std::string& name) {
  qprofFakeLaunchKernel(name.c_str(), 7, 3000);
  Line("outside\t" + name);
}

// A serving engine: only the bracketed step is what the trace must hold.
int ServeWithCaptureRange(bool nvtx) {
  const char* graph[] = {"graph_rmsnorm", "graph_attn", "graph_moe"};
  Push("serve");
  for (int i = 0; i < 20; ++i) Outside("warmup_kernel");
  qprofFakeGraphLaunch(graph, 3, 7);  // captured, instantiated and replayed outside
  for (const char* g : graph) Line(std::string("outside\t") + g);
  if (nvtx) {
    Push("profile");
  } else {
    cuProfilerStart();
  }
  Push("step 1");
  for (int k = 0; k < 5; ++k) Kernel(k % 2 ? "rmsnorm_kernel" : "_Z8mma_gemmILi0EEvv", 7);
  qprofFakeGraphLaunch(graph, 3, 7);
  for (const char* g : graph) {
    Line(std::string("graph\t") + g + "\t7\t" + std::to_string(Tid()) + "\t" + Path());
  }
  Pop();
  if (nvtx) {
    Pop();
  } else {
    cuProfilerStop();
  }
  Line("stopped");
  for (int i = 0; i < 20; ++i) Outside("after_kernel");
  qprofFakeSynchronize();
  usleep(300 * 1000);  // a server keeps running: the trace is finished meanwhile
  Pop();
  Line("done");
  return 0;
}

// The "script" scenario: a decode loop as a list of operations (the test writes it from
// the decoder's own launch list). Kernels run on stream 7, the stream captured too.
int PlayScript(const char* path) {
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return 3;
  char line[1024];
  uint64_t exec = 0;
  unsigned capture_stream = 7;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    std::string l(line);
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
    const size_t space = l.find(' ');
    const std::string op = l.substr(0, space);
    const std::string arg = space == std::string::npos ? "" : l.substr(space + 1);
    if (op == "push") {
      Push(arg.c_str());
    } else if (op == "pop") {
      Pop();
    } else if (op == "kernel") {
      qprofFakeLaunchKernelGrid(arg.c_str(), capture_stream, 0, 3000);
    } else if (op == "capture") {
      capture_stream = static_cast<unsigned>(std::atoi(arg.c_str()));
      qprofFakeBeginCapture(capture_stream);
    } else if (op == "instantiate") {
      exec = qprofFakeEndCaptureAndInstantiate(capture_stream);
      capture_stream = 7;
    } else if (op == "replay") {
      qprofFakeLaunchGraphExec(exec, static_cast<unsigned>(std::atoi(arg.c_str())));
    }
  }
  std::fclose(f);
  qprofFakeSynchronize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s SCENARIO LOG [SCRIPT]\n", argv[0]);
    return 2;
  }
  const std::string scenario = argv[1];
  g_log = std::fopen(argv[2], "w");
  if (g_log == nullptr) return 3;
  if (scenario == "nocuda") return 0;
  if (scenario == "chdir" && chdir("/") != 0) return 4;
  cuInit(0);
  const char* nvtx = std::getenv("NVTX_INJECTION64_PATH");
  Line(std::string("nvtx\t") + (nvtx != nullptr ? nvtx : "-"));
  if (scenario == "none") return 0;
  if (scenario == "normal" || scenario == "chdir") {
    RunThreads(/*steps=*/5, /*kernels_per_step=*/600);  // several 1 MiB buffers per thread
    return 0;
  }
  if (scenario == "capture" || scenario == "capture-nvtx") {
    return ServeWithCaptureRange(scenario == "capture-nvtx");
  }
  if (scenario == "reset") {
    for (int i = 0; i < 50; ++i) Kernel("before_reset", 1);
    qprofFakeDeviceReset();
    for (int i = 0; i < 50; ++i) Kernel("after_reset", 1);
    qprofFakeSynchronize();
    return 0;
  }
  if (scenario == "kill" || scenario == "sigterm") {
    Push("decode");
    const long header_only = StreamedBytes();
    for (int round = 0; round < 200; ++round) {  // until a chunk is on disk (<= ~20 s)
      for (int i = 0; i < 500; ++i) Kernel("step_kernel", 1);
      qprofFakeSynchronize();
      if (scenario == "sigterm") break;
      usleep(100 * 1000);
      if (StreamedBytes() > std::max(header_only, 4096L)) break;
    }
    Line(scenario == "kill" ? "killing" : "terminating");
    raise(scenario == "kill" ? SIGKILL : SIGTERM);
    return 5;  // not reached
  }
  if (scenario == "script") return argc == 4 ? PlayScript(argv[3]) : 2;
  if (scenario == "fork" || scenario == "fork-late") {
    for (int i = 0; i < 100; ++i) Kernel("parent_before_fork", 1);
    if (scenario == "fork-late") {
      // Until the trace file is open: the header is written with the first chunk.
      qprofFakeSynchronize();
      for (int i = 0; i < 200 && StreamedBytes() == 0; ++i) usleep(50 * 1000);
    }
    const pid_t parent = getpid();
    const pid_t child = fork();
    if (child == 0) {
      // The worker: no CUDA here (not allowed after fork). It outlives the parent, then
      // exits normally, running atexit handlers.
      Line("child\t" + std::to_string(getpid()));
      for (int i = 0; i < 500 && getppid() == parent; ++i) usleep(10 * 1000);
      std::exit(0);
    }
    for (int i = 0; i < 100; ++i) Kernel("parent_after_fork", 1);
    qprofFakeSynchronize();
    return 0;
  }
  std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
  return 2;
}
