// The block scheduler of the warp emulation (see warp_emu.h).
#include "tests/kernels/warp_emu/warp_emu.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tests/kernels/warp_emu/warp_emu_internal.h"

namespace qprof::warp {
namespace {

// Stack per emulated thread: a kernel body's frame is a few KB; sanitizer and -O0 frames
// are larger. Pages are reserved, not committed, until touched.
constexpr size_t kFiberStackBytes = 256 * 1024;

thread_local WarpEmu::State* g_emu = nullptr;

void ThreadMain(void* arg) {
  ThreadCtx* t = static_cast<ThreadCtx*>(arg);
  (*CurrentEmu().body)();
  t->wait = ThreadCtx::Wait::kDone;
}

const char* WaitName(const ThreadCtx& t) {
  switch (t.wait) {
    case ThreadCtx::Wait::kRunning: return "running";
    case ThreadCtx::Wait::kBarrier: return "__syncthreads";
    case ThreadCtx::Wait::kDone: return "exited";
    case ThreadCtx::Wait::kCollective:
      switch (t.op.kind) {
        case WarpOp::Kind::kShfl: return "shfl.sync";
        case WarpOp::Kind::kBallot: return "vote.sync.ballot";
        case WarpOp::Kind::kSyncWarp: return "__syncwarp";
        default: return t.op.text;
      }
  }
  return "?";
}

bool SameOp(const WarpOp& a, const WarpOp& b) {
  if (a.kind != b.kind) return false;
  return a.kind != WarpOp::Kind::kPtx || a.text == b.text || std::strcmp(a.text, b.text) == 0;
}

// Where the lanes of warp w wait, as "lanes 0-15: X; lanes 16-31: Y".
std::string DescribeWarp(const BlockRun& blk, int w) {
  std::string out;
  int start = 0;
  for (int l = 1; l <= 32; ++l) {
    const ThreadCtx& a = blk.thr[32 * w + start];
    if (l < 32) {
      const ThreadCtx& b = blk.thr[32 * w + l];
      if (a.wait == b.wait && (a.wait != ThreadCtx::Wait::kCollective || SameOp(a.op, b.op))) continue;
    }
    absl::StrAppend(&out, out.empty() ? "" : "; ", "lanes ", start, "-", l - 1, ": ", WaitName(a));
    start = l;
  }
  return out;
}

}  // namespace

WarpEmu::State& CurrentEmu() { return *g_emu; }

void WarpEmu::State::Error(const std::string& what) {
  ++errors;
  if (messages.size() >= kMaxMessages) return;
  std::string where = kernel;
  if (blk != nullptr) absl::StrAppend(&where, " block (", blk->idx.x, ",", blk->idx.y, ",", blk->idx.z, ")");
  if (cur != nullptr) absl::StrAppend(&where, " thread ", cur->tid, " (warp ", cur->warp, " lane ", cur->lane, ")");
  messages.push_back(absl::StrCat(where, ": ", what));
}

void WarpEmu::State::Fatal(const std::string& what) {
  Error(what);
  abort = true;
}

std::string WarpEmu::State::RecordGlobal(const void* p, size_t bytes, bool write) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  for (size_t i = 0; i < globals.size() && blk != nullptr; ++i) {
    const Buffer& b = globals[i];
    if (a >= b.lo && a + bytes <= b.hi) return races.Access(i, b.hi - b.lo, b.name, a - b.lo, bytes, blk->linear, write);
  }
  return "";
}

std::string WarpEmu::State::CheckGlobal(const void* p, size_t bytes, size_t align) const {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (align > 1 && a % align != 0) {
    return absl::StrCat("global access of ", bytes, " bytes at ", absl::Hex(a), " is not ", align,
                        "-byte aligned");
  }
  for (const Buffer& b : globals) {
    if (a >= b.lo && a + bytes <= b.hi) return "";
  }
  return absl::StrCat("global access of ", bytes, " bytes at ", absl::Hex(a),
                      " is outside every buffer the test registered (", globals.size(), " buffers)");
}

WarpEmu::WarpEmu() : state_(new State) {}
WarpEmu::~WarpEmu() = default;

void WarpEmu::AddGlobal(const void* p, size_t bytes, const std::string& name) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  state_->globals.push_back({lo, lo + bytes, name});
}

int64_t WarpEmu::error_count() const { return state_->errors; }

std::string WarpEmu::ErrorReport() const {
  std::string out = absl::StrCat(state_->errors, " emulation errors");
  for (const std::string& m : state_->messages) absl::StrAppend(&out, "\n  ", m);
  if (state_->errors > static_cast<int64_t>(state_->messages.size())) absl::StrAppend(&out, "\n  ...");
  return out;
}

WarpEmu::Counters WarpEmu::counters() const { return state_->counters; }

void WarpEmu::set_resident_blocks(int n) { state_->resident_blocks = n < 1 ? 1 : n; }

namespace {

// Starts block `idx` of the launch in `b`: fresh shared memory, every thread at the top.
void StartBlock(WarpEmu::State& s, BlockRun& b, LaunchDims idx, size_t dynamic_smem) {
  b.idx = idx;
  b.linear = idx.x + s.grid.x * (idx.y + s.grid.y * idx.z);
  b.epoch = 0;
  b.active = true;
  const int warps = static_cast<int>(s.threads / 32);
  b.warp_syncs.assign(warps, 0);
  b.warp_collectives.assign(warps, 0);
  ++s.counters.blocks;
  s.blk = &b;
  s.cur = nullptr;
  const std::string smem_error = b.smem.Reset(dynamic_smem);
  if (!smem_error.empty()) return s.Fatal(smem_error);
  while (b.thr.size() < s.threads) {
    b.thr.emplace_back();
    b.thr.back().fiber = std::make_unique<Fiber>(kFiberStackBytes);
  }
  for (unsigned i = 0; i < s.threads; ++i) {
    ThreadCtx& t = b.thr[i];
    t.tid = static_cast<int>(i);
    t.warp = static_cast<int>(i / 32);
    t.lane = static_cast<int>(i % 32);
    t.wait = ThreadCtx::Wait::kRunning;
    t.op = WarpOp{};
    t.uncommitted.clear();
    t.groups.clear();
    t.fiber->Start(&ThreadMain, &t);
  }
}

// Executes the collective all 32 lanes of a warp wait at.
void RunCollective(WarpEmu::State& s, BlockRun& b, int w, ThreadCtx* const* lanes) {
  switch (lanes[0]->op.kind) {
    case WarpOp::Kind::kShfl:
      for (int l = 0; l < 32; ++l) lanes[l]->op.bits_out = lanes[l ^ (lanes[l]->op.shfl_mask & 31)]->op.bits_in;
      break;
    case WarpOp::Kind::kBallot: {
      uint32_t mask = 0;
      for (int l = 0; l < 32; ++l) mask |= (lanes[l]->op.bits_in != 0 ? 1u : 0u) << l;
      for (int l = 0; l < 32; ++l) lanes[l]->op.bits_out = mask;
      break;
    }
    case WarpOp::Kind::kSyncWarp:
      ++b.warp_syncs[w];
      break;
    default:
      PtxExecWarp(s, lanes);
  }
  ++b.warp_collectives[w];
}

enum class Step { kBarrier, kDone, kStop };

// Runs block `b` until every live thread waits at a barrier (opened, so that the threads go
// on at the block's next step), every thread has exited, or a fatal error.
Step RunUntilBarrier(WarpEmu::State& s, BlockRun& b) {
  s.blk = &b;
  const int warps = static_cast<int>(s.threads / 32);
  for (;;) {
    for (unsigned i = 0; i < s.threads; ++i) {
      ThreadCtx& t = b.thr[i];
      if (t.wait != ThreadCtx::Wait::kRunning) continue;
      s.cur = &t;
      t.fiber->Resume();  // until it waits at a collective or a barrier, or exits
      s.cur = nullptr;
      if (s.abort) return Step::kStop;
    }
    bool progressed = false;
    int done = 0, at_barrier = 0;
    for (int w = 0; w < warps; ++w) {
      ThreadCtx* lanes[32];
      int coll = 0, exited = 0;
      for (int l = 0; l < 32; ++l) {
        lanes[l] = &b.thr[32 * w + l];
        coll += lanes[l]->wait == ThreadCtx::Wait::kCollective;
        exited += lanes[l]->wait == ThreadCtx::Wait::kDone;
        at_barrier += lanes[l]->wait == ThreadCtx::Wait::kBarrier;
      }
      done += exited;
      if (coll == 0) continue;
      if (coll + exited == 32 && exited > 0) {
        s.Fatal(absl::StrCat("warp ", w, " reaches a warp-collective instruction with exited lanes (",
                             DescribeWarp(b, w), ")"));
        return Step::kStop;
      }
      if (coll < 32) continue;  // the rest wait at a barrier: resolved below or a deadlock
      for (int l = 1; l < 32; ++l) {
        if (!SameOp(lanes[0]->op, lanes[l]->op)) {
          s.Fatal(absl::StrCat("warp ", w, " diverges at a warp-collective instruction (", DescribeWarp(b, w), ")"));
          return Step::kStop;
        }
      }
      RunCollective(s, b, w, lanes);
      if (s.abort) return Step::kStop;
      for (int l = 0; l < 32; ++l) lanes[l]->wait = ThreadCtx::Wait::kRunning;
      ++s.counters.warp_collectives;
      progressed = true;
    }
    if (done == static_cast<int>(s.threads)) return Step::kDone;
    if (!progressed && at_barrier > 0 && at_barrier + done == static_cast<int>(s.threads)) {
      for (unsigned i = 0; i < s.threads; ++i) {
        if (b.thr[i].wait == ThreadCtx::Wait::kBarrier) b.thr[i].wait = ThreadCtx::Wait::kRunning;
      }
      ++b.epoch;
      ++s.counters.barriers;
      return Step::kBarrier;
    }
    if (!progressed) {
      std::string where;
      for (int w = 0; w < warps; ++w) absl::StrAppend(&where, "\n    warp ", w, ": ", DescribeWarp(b, w));
      s.Fatal(absl::StrCat("deadlock: no barrier or warp collective can complete", where));
      return Step::kStop;
    }
  }
}

// Runs every block of the grid, up to `resident_blocks` at once: each resident block runs
// until its threads wait at a barrier (or exit), then the next one (round robin); a
// finished block's slot takes the next block of the grid (x fastest, then y, then z).
void RunGrid(WarpEmu::State& s, size_t dynamic_smem) {
  const uint64_t total = static_cast<uint64_t>(s.grid.x) * s.grid.y * s.grid.z;
  uint64_t next = 0;
  auto index = [&](uint64_t i) {
    return LaunchDims{static_cast<unsigned>(i % s.grid.x), static_cast<unsigned>((i / s.grid.x) % s.grid.y),
                      static_cast<unsigned>(i / (static_cast<uint64_t>(s.grid.x) * s.grid.y))};
  };
  const size_t resident = static_cast<size_t>(std::min<uint64_t>(s.resident_blocks, total));
  while (s.slots.size() < resident) s.slots.push_back(std::make_unique<BlockRun>());
  for (size_t i = 0; i < resident; ++i) {
    StartBlock(s, *s.slots[i], index(next++), dynamic_smem);
    if (s.abort) return;
  }
  size_t live = resident;
  while (live > 0 && !s.abort) {
    for (size_t i = 0; i < resident && !s.abort; ++i) {
      BlockRun& b = *s.slots[i];
      if (!b.active) continue;
      const Step step = RunUntilBarrier(s, b);
      if (step == Step::kStop) return;
      if (step == Step::kBarrier) continue;
      b.active = false;
      if (next < total) {
        StartBlock(s, b, index(next++), dynamic_smem);
      } else {
        --live;
      }
    }
  }
}

}  // namespace

bool WarpEmu::Launch(const std::string& kernel, LaunchDims grid, unsigned threads, size_t dynamic_smem,
                     const std::function<void()>& body) {
  State& s = *state_;
  const int64_t errors_before = s.errors;
  s.kernel = kernel;
  s.grid = grid;
  s.blk = nullptr;
  s.cur = nullptr;
  s.abort = false;
  if (threads == 0 || threads > 1024 || threads % 32 != 0) {
    s.Error(absl::StrCat("block of ", threads, " threads: the emulation runs 1-D blocks of whole warps, at most 1024"));
    return false;
  }
  s.threads = threads;
  s.body = &body;
  s.races.Reset();
  State* const outer = g_emu;
  g_emu = &s;
  if (grid.x > 0 && grid.y > 0 && grid.z > 0) RunGrid(s, dynamic_smem);
  g_emu = outer;
  s.body = nullptr;
  s.blk = nullptr;
  // Fibers left suspended by a fatal error are restarted by the next launch.
  for (auto& b : s.slots) b->active = false;
  return s.errors == errors_before;
}

}  // namespace qprof::warp
