// The tensor-parallel failure paths without GPUs or NCCL (runtime/cuda/host/rank_group.h):
// fake ranks meet in a fake all-reduce that waits by polling, as the CUDA ranks wait on
// their streams. What must hold: a failed rank unblocks its peers without waiting for the
// deadline, a silent hang ends at the deadline, an asynchronous error aborts its rank,
// every abort runs on the thread that owns the communicator, a spent group refuses to run
// again, a worker that never returns is reported instead of waited for forever. Also the
// fault switch (QPROF_TP_FAULT) and where NCCL is looked for.
#include "runtime/cuda/host/rank_group.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/host/nccl_search.h"
#include "runtime/cuda/host/tp_fault.h"

namespace qprof::runtime::cuda {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Every rank arrives, then waits until all have (polling, like a rank waiting on its
// stream while an NCCL kernel spins for a peer).
struct FakeAllReduce {
  explicit FakeAllReduce(int n) : n(n) {}
  absl::Status Enter(RankGroup::Waiter& w) {
    arrived.fetch_add(1);
    while (arrived.load() < n) {
      absl::Status s = w.Poll();
      if (!s.ok()) return s;
      std::this_thread::sleep_for(milliseconds(1));
    }
    return absl::OkStatus();
  }
  int n;
  std::atomic<int> arrived{0};
};

// Records, per rank, the worker thread that ran the work and the threads that aborted.
struct Recorder {
  explicit Recorder(int n) : work_thread(n), abort_threads(n) {}
  std::mutex mu;
  std::vector<std::thread::id> work_thread;
  std::vector<std::vector<std::thread::id>> abort_threads;
  void Worked(int r) {
    std::lock_guard<std::mutex> l(mu);
    work_thread[r] = std::this_thread::get_id();
  }
  void Hook(RankGroup* g, int r) {
    g->SetHooks(r, {nullptr, [this, r] {
                      std::lock_guard<std::mutex> l(mu);
                      abort_threads[r].push_back(std::this_thread::get_id());
                    }});
  }
  // Every rank aborted exactly once, on the thread that ran its work.
  void ExpectEachAbortedOnceOnOwnThread() {
    std::lock_guard<std::mutex> l(mu);
    for (size_t r = 0; r < abort_threads.size(); ++r) {
      ASSERT_EQ(abort_threads[r].size(), 1u) << "rank " << r;
      EXPECT_EQ(abort_threads[r][0], work_thread[r]) << "rank " << r;
      EXPECT_NE(abort_threads[r][0], std::this_thread::get_id()) << "rank " << r;
    }
  }
};

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

TEST(RankGroupTest, HealthyStepsRunOnOnePersistentThreadPerRankAndNeverAbort) {
  RankGroup g(3, {});
  Recorder rec(3);
  for (int r = 0; r < 3; ++r) rec.Hook(&g, r);
  std::vector<std::thread::id> first;
  for (int step = 0; step < 3; ++step) {
    FakeAllReduce ar(3);
    ASSERT_TRUE(g.Run("step", [&](int r, RankGroup::Waiter& w) {
                   rec.Worked(r);
                   EXPECT_EQ(w.rank(), r);
                   return ar.Enter(w);
                 }).ok());
    if (step == 0) first = rec.work_thread;
    EXPECT_EQ(rec.work_thread, first) << "a rank changed threads at step " << step;
  }
  EXPECT_NE(first[0], first[1]);
  EXPECT_FALSE(g.aborted());
  for (const auto& a : rec.abort_threads) EXPECT_TRUE(a.empty());
}

TEST(RankGroupTest, FailedRankUnblocksItsPeersWhoAbortOnTheirOwnThreads) {
  // The deadline is far away: the peers must give up because rank 1 failed, not wait.
  RankGroup g(3, {milliseconds(60000), milliseconds(5000)});
  Recorder rec(3);
  for (int r = 0; r < 3; ++r) rec.Hook(&g, r);
  FakeAllReduce ar(3);
  const auto t0 = Clock::now();
  absl::Status s = g.Run("step 0", [&](int r, RankGroup::Waiter& w) {
    rec.Worked(r);
    if (r == 1) return absl::InternalError("injected fault");
    return ar.Enter(w);
  });
  EXPECT_LT(SecondsSince(t0), 30.0) << "peers waited for the deadline";
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_NE(std::string(s.message()).find("tp rank 1: step 0: injected fault"), std::string::npos)
      << s;
  EXPECT_TRUE(g.aborted());
  rec.ExpectEachAbortedOnceOnOwnThread();
  // The group is spent: the next step is refused, naming the first failure.
  bool ran = false;
  absl::Status again = g.Run("step 1", [&](int, RankGroup::Waiter&) {
    ran = true;
    return absl::OkStatus();
  });
  EXPECT_FALSE(ran);
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition) << again;
  EXPECT_NE(std::string(again.message()).find("tp rank 1: injected fault"), std::string::npos)
      << again;
}

TEST(RankGroupTest, SilentHangEndsAtTheDeadlineOnEveryRank) {
  RankGroup g(2, {milliseconds(300), milliseconds(5000)});
  Recorder rec(2);
  for (int r = 0; r < 2; ++r) rec.Hook(&g, r);
  FakeAllReduce ar(2);
  const auto t0 = Clock::now();
  absl::Status s = g.Run("step 4", [&](int r, RankGroup::Waiter& w) -> absl::Status {
    rec.Worked(r);
    if (r == 1) {  // the `hang` fault: launches nothing, reports nothing, only polls
      for (;;) {
        absl::Status p = w.Poll();
        if (!p.ok()) return p;
        std::this_thread::sleep_for(milliseconds(1));
      }
    }
    return ar.Enter(w);
  });
  EXPECT_GE(SecondsSince(t0), 0.3);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(std::string(s.message()).find("did not finish within 0.3 s"), std::string::npos) << s;
  rec.ExpectEachAbortedOnceOnOwnThread();
}

TEST(RankGroupTest, AsynchronousErrorAbortsItsRankAndThePeersFollow) {
  RankGroup g(2, {milliseconds(60000), milliseconds(5000)});
  Recorder rec(2);
  std::atomic<bool> broken{false};
  g.SetHooks(0, {[&broken]() -> absl::Status {
                   if (broken.load()) return absl::InternalError("NCCL async error: remote error");
                   return absl::OkStatus();
                 },
                 [&rec] {
                   std::lock_guard<std::mutex> l(rec.mu);
                   rec.abort_threads[0].push_back(std::this_thread::get_id());
                 }});
  rec.Hook(&g, 1);
  FakeAllReduce ar(3);  // never completes: only the async error ends the wait
  absl::Status s = g.Run("step 2", [&](int r, RankGroup::Waiter& w) {
    rec.Worked(r);
    if (r == 0) broken.store(true);
    return ar.Enter(w);
  });
  EXPECT_NE(std::string(s.message()).find("tp rank 0: step 2: NCCL async error"), std::string::npos)
      << s;
  rec.ExpectEachAbortedOnceOnOwnThread();
}

TEST(RankGroupTest, RanksThatFinishedBeforeAFailureAbortToo) {
  RankGroup g(2, {});
  Recorder rec(2);
  for (int r = 0; r < 2; ++r) rec.Hook(&g, r);
  absl::Status s = g.Run("step 7", [&](int r, RankGroup::Waiter&) {
    rec.Worked(r);
    return r == 1 ? absl::InternalError("late failure") : absl::OkStatus();
  });
  EXPECT_FALSE(s.ok());
  rec.ExpectEachAbortedOnceOnOwnThread();
}

TEST(RankGroupTest, WorkerThatNeverReturnsIsReportedNotAwaitedForever) {
  auto release = std::make_shared<std::atomic<bool>>(false);
  const auto t0 = Clock::now();
  {
    RankGroup g(2, {milliseconds(100), milliseconds(100)});
    // Rank 1 blocks without polling (captures only shared state: it outlives the test).
    absl::Status s = g.Run("step 0", [release](int r, RankGroup::Waiter&) {
      while (r == 1 && !release->load()) std::this_thread::sleep_for(milliseconds(5));
      return absl::OkStatus();
    });
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_NE(std::string(s.message()).find("1 rank(s) did not return"), std::string::npos) << s;
    EXPECT_TRUE(g.wedged());
    EXPECT_EQ(g.Run("step 1", [](int, RankGroup::Waiter&) { return absl::OkStatus(); }).code(),
              absl::StatusCode::kFailedPrecondition);
  }  // destroyed with rank 1 still inside its work: detached, not joined
  EXPECT_LT(SecondsSince(t0), 30.0);
  release->store(true);
}

TEST(TpFaultTest, ParsesTheSwitchAndRefusesNonsense) {
  auto f = ParseTpFault("1:2:fail", 2);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->Fires(TpFault::Kind::kFail, 1, 2));
  EXPECT_FALSE(f->Fires(TpFault::Kind::kFail, 1, 3));
  EXPECT_FALSE(f->Fires(TpFault::Kind::kFail, 0, 2));
  auto a = ParseTpFault("0:1:async", 4);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->Fires(TpFault::Kind::kAsync, 0, 5));  // from step 1 on
  EXPECT_FALSE(a->Fires(TpFault::Kind::kAsync, 0, 0));
  EXPECT_EQ(ParseTpFault("", 2)->kind, TpFault::Kind::kNone);
  EXPECT_EQ(ParseTpFault("0:0:hang", 2)->kind, TpFault::Kind::kHang);
  for (const char* bad : {"2:0:fail", "-1:0:fail", "0:x:fail", "0:0:explode", "0:0"}) {
    auto b = ParseTpFault(bad, 2);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(std::string(b.status().message()).find("QPROF_TP_FAULT"), std::string::npos);
  }
}

TEST(TpEnvironmentTest, ReadsTheDiagnosticSwitches) {
  std::map<std::string, std::string> vars;
  auto get = [&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  auto none = ReadTpEnvironment(get, 2);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->devices.empty());
  EXPECT_FALSE(none->host_all_reduce);
  EXPECT_EQ(none->timeout_ms, 60000);
  vars = {{"QPROF_TP_DEVICES", "0,0"}, {"QPROF_TP_ALLREDUCE", "host"},
          {"QPROF_TP_TIMEOUT_S", "2.5"}, {"QPROF_TP_FAULT", "1:3:hang"}};
  auto env = ReadTpEnvironment(get, 2);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->devices, (std::vector<int>{0, 0}));
  EXPECT_TRUE(env->host_all_reduce);
  EXPECT_EQ(env->timeout_ms, 2500);
  EXPECT_TRUE(env->fault.Fires(TpFault::Kind::kHang, 1, 3));
  for (auto [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"QPROF_TP_DEVICES", "0"}, {"QPROF_TP_DEVICES", "0,x"}, {"QPROF_TP_ALLREDUCE", "mpi"},
           {"QPROF_TP_TIMEOUT_S", "0"}, {"QPROF_TP_FAULT", "5:0:fail"}}) {
    vars = {{name, value}};
    auto bad = ReadTpEnvironment(get, 2);
    ASSERT_FALSE(bad.ok()) << name << "=" << value;
    EXPECT_NE(std::string(bad.status().message()).find(name), std::string::npos) << bad.status();
  }
}

TEST(NcclSearchTest, EnvironmentWinsElseLibraryPathToolkitAndWheels) {
  EXPECT_EQ(NcclLibraryCandidates("/x/libnccl.so.2", "/usr/local/cuda/lib", nullptr),
            std::vector<std::string>{"/x/libnccl.so.2"});
  // A Python environment holding the nvidia-nccl-cu13 wheel's layout.
  const std::string venv = ::testing::TempDir() + "/qprof_nccl_venv";
  const std::string lib = venv + "/lib/python3.12/site-packages/nvidia/nccl/lib";
  std::filesystem::create_directories(lib);
  std::FILE* f = std::fopen((lib + "/libnccl.so.2").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  auto c = NcclLibraryCandidates("", "/usr/local/cuda/lib", venv.c_str());
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(c[0], "libnccl.so.2");
  EXPECT_EQ(c[1], "/usr/local/cuda/lib/libnccl.so.2");
  EXPECT_NE(std::find(c.begin(), c.end(), "/usr/local/cuda/lib64/libnccl.so.2"), c.end());
  EXPECT_NE(std::find(c.begin(), c.end(), lib + "/libnccl.so.2"), c.end());
  std::filesystem::remove_all(venv);
}

}  // namespace
}  // namespace qprof::runtime::cuda
