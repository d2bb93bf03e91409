// Launch contexts on every shared Kineto trace against a brute-force oracle computed from
// the raw file: for each kernel, the launch event with its correlation id, then every
// cpu_op / python_function / user_annotation event on that thread whose interval holds the
// launch time, outermost first (torch's module-call plumbing and "<built-in method" Python
// frames left out, at most the innermost kMaxFrames kept).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/importers/common/launch_context.h"
#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/raw_kineto.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

using testing_raw::RawEvent;

int64_t Ns(double us) { return std::llround(us * 1000.0); }

TEST(LaunchContextTestdata, EveryKernelMatchesTheBruteForceStack) {
  const auto files = testing::TestFiles("kineto", ".json.gz");
  if (files.empty()) GTEST_SKIP() << "no Kineto test data (../shared/testdata or QPROF_TESTDATA)";
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    testing_raw::RawTrace raw = testing_raw::ReadRaw(testing_raw::Gunzip(path));
    std::map<std::pair<int64_t, int64_t>, std::vector<const RawEvent*>> frames_by_thread;
    std::map<uint64_t, const RawEvent*> launch_by_corr;
    for (const RawEvent& e : raw.events) {
      if (e.cat == "cpu_op" || e.cat == "python_function" || e.cat == "user_annotation") {
        if (e.cat == "python_function" && LaunchContextBuilder::IsPlumbingFrame(e.name)) continue;
        frames_by_thread[{e.pid, e.tid}].push_back(&e);
      } else if ((e.cat == "cuda_runtime" || e.cat == "cuda_driver" || e.cat == "runtime") &&
                 e.correlation) {
        launch_by_corr[*e.correlation] = &e;
      }
    }
    // Expected frames per (device, stream, correlation) for kernels in time order.
    std::map<std::tuple<int64_t, int64_t, uint64_t>, std::vector<std::vector<std::string>>> want;
    std::vector<const RawEvent*> kernels;
    for (const RawEvent& e : raw.events) {
      if (e.cat == "kernel" && e.correlation) kernels.push_back(&e);
    }
    std::stable_sort(kernels.begin(), kernels.end(), [](auto* a, auto* b) { return a->ts < b->ts; });
    int with_stack = 0;
    for (const RawEvent* k : kernels) {
      std::vector<std::string> names;
      auto l = launch_by_corr.find(*k->correlation);
      if (l != launch_by_corr.end()) {
        const int64_t t = Ns(l->second->ts);
        std::vector<const RawEvent*> open;
        for (const RawEvent* f : frames_by_thread[{l->second->pid, l->second->tid}]) {
          if (Ns(f->ts) <= t && (!f->has_dur || t < Ns(f->ts) + Ns(f->dur))) open.push_back(f);
        }
        std::stable_sort(open.begin(), open.end(), [](auto* a, auto* b) {
          return Ns(a->ts) != Ns(b->ts) ? Ns(a->ts) < Ns(b->ts) : Ns(a->dur) > Ns(b->dur);
        });
        size_t from = open.size() > LaunchContextBuilder::kMaxFrames
                          ? open.size() - LaunchContextBuilder::kMaxFrames : 0;
        for (size_t i = from; i < open.size(); ++i) names.push_back(open[i]->name);
      }
      with_stack += !names.empty();
      want[{k->device, k->stream, *k->correlation}].push_back(std::move(names));
    }
    ImportOptions io;
    io.progress = false;
    auto trace = ImportFile(path, io);
    ASSERT_TRUE(trace.ok()) << trace.status();
    std::map<std::tuple<int64_t, int64_t, uint64_t>, size_t> used;
    int checked = 0, mismatched = 0;
    for (const proto::Activity& a : trace->activities()) {
      if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
      auto key = std::make_tuple(static_cast<int64_t>(a.device_id()),
                                 static_cast<int64_t>(a.stream_id()), a.correlation_id());
      auto it = want.find(key);
      if (it == want.end()) continue;
      size_t& u = used[key];
      ASSERT_LT(u, it->second.size());
      const auto& expected = it->second[u++];
      std::vector<std::string> got;
      const auto& tables = trace->header().launch_context_stats();
      std::vector<const proto::LaunchFrame*> frames;
      if (const uint32_t id = a.launch_context().stack(); id != 0) {
        for (uint32_t f : tables.stacks(static_cast<int>(id)).frames()) {
          frames.push_back(&tables.frames(static_cast<int>(f)));
        }
      }
      // GPU-side annotations only stand in where the CPU side has no frame.
      if (frames.empty() || frames[0]->kind() != "gpu_user_annotation") {
        for (const auto* f : frames) got.push_back(f->name());
      } else {
        EXPECT_TRUE(expected.empty()) << a.name();
        ++checked;
        continue;
      }
      if (got != expected && ++mismatched <= 3) {
        ADD_FAILURE() << a.name() << ": " << got.size() << " frames, expected "
                      << expected.size() << (got.empty() ? "" : "; innermost " + got.back())
                      << (expected.empty() ? "" : " vs " + expected.back());
      }
      ++checked;
    }
    EXPECT_EQ(mismatched, 0);
    std::printf("%s: %d kernels checked, %d with a CPU-side stack, %d distinct stacks\n",
                path.substr(path.rfind('/') + 1).c_str(), checked, with_stack,
                std::max(0, trace->header().launch_context_stats().stacks_size() - 1));
    if (!kernels.empty()) EXPECT_GT(checked, 0);
  }
}

}  // namespace
}  // namespace qprof::importers
