// The block scheduler of the warp emulation (see warp_emu.h).
#include "tests/kernels/warp_emu/warp_emu.h"

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
    case ThreadCtx::Wait::kCollective: return t.op.kind == WarpOp::Kind::kShfl ? "shfl.sync" : t.op.text;
  }
  return "?";
}

bool SameOp(const WarpOp& a, const WarpOp& b) {
  if (a.kind != b.kind) return false;
  return a.kind != WarpOp::Kind::kPtx || a.text == b.text || std::strcmp(a.text, b.text) == 0;
}

// Where the lanes of warp w wait, as "lanes 0-15: X; lanes 16-31: Y".
std::string DescribeWarp(const WarpEmu::State& s, int w) {
  std::string out;
  int start = 0;
  for (int l = 1; l <= 32; ++l) {
    const ThreadCtx& a = s.thr[32 * w + start];
    if (l < 32) {
      const ThreadCtx& b = s.thr[32 * w + l];
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
  std::string where = absl::StrCat(kernel, " block (", block.x, ",", block.y, ",", block.z, ")");
  if (cur != nullptr) absl::StrAppend(&where, " thread ", cur->tid, " (warp ", cur->warp, " lane ", cur->lane, ")");
  messages.push_back(absl::StrCat(where, ": ", what));
}

void WarpEmu::State::Fatal(const std::string& what) {
  Error(what);
  abort = true;
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

namespace {

// Runs one block to completion (or until a fatal error).
void RunBlock(WarpEmu::State& s, size_t dynamic_smem) {
  s.epoch = 0;
  s.cur = nullptr;
  const std::string smem_error = s.smem.Reset(dynamic_smem);
  if (!smem_error.empty()) return s.Fatal(smem_error);
  for (unsigned i = 0; i < s.threads; ++i) {
    ThreadCtx& t = s.thr[i];
    t.wait = ThreadCtx::Wait::kRunning;
    t.op = WarpOp{};
    t.uncommitted.clear();
    t.groups.clear();
    t.fiber->Start(&ThreadMain, &t);
  }
  const int warps = static_cast<int>(s.threads / 32);
  for (;;) {
    for (unsigned i = 0; i < s.threads; ++i) {
      ThreadCtx& t = s.thr[i];
      if (t.wait != ThreadCtx::Wait::kRunning) continue;
      s.cur = &t;
      t.fiber->Resume();  // until it waits at a collective or a barrier, or exits
      s.cur = nullptr;
      if (s.abort) return;
    }
    bool progressed = false;
    int done = 0, at_barrier = 0;
    for (int w = 0; w < warps; ++w) {
      ThreadCtx* lanes[32];
      int coll = 0, exited = 0;
      for (int l = 0; l < 32; ++l) {
        lanes[l] = &s.thr[32 * w + l];
        coll += lanes[l]->wait == ThreadCtx::Wait::kCollective;
        exited += lanes[l]->wait == ThreadCtx::Wait::kDone;
        at_barrier += lanes[l]->wait == ThreadCtx::Wait::kBarrier;
      }
      done += exited;
      if (coll == 0) continue;
      if (coll + exited == 32 && exited > 0) {
        return s.Fatal(absl::StrCat("warp ", w, " reaches a warp-collective instruction with exited lanes (",
                                    DescribeWarp(s, w), ")"));
      }
      if (coll < 32) continue;  // the rest wait at a barrier: resolved below or a deadlock
      for (int l = 1; l < 32; ++l) {
        if (!SameOp(lanes[0]->op, lanes[l]->op)) {
          return s.Fatal(absl::StrCat("warp ", w, " diverges at a warp-collective instruction (",
                                      DescribeWarp(s, w), ")"));
        }
      }
      if (lanes[0]->op.kind == WarpOp::Kind::kShfl) {
        for (int l = 0; l < 32; ++l) {
          const int src = l ^ (lanes[l]->op.shfl_mask & 31);
          lanes[l]->op.shfl_out = lanes[src]->op.shfl_in;
        }
      } else {
        PtxExecWarp(s, lanes);
        if (s.abort) return;
      }
      for (int l = 0; l < 32; ++l) lanes[l]->wait = ThreadCtx::Wait::kRunning;
      ++s.counters.warp_collectives;
      progressed = true;
    }
    if (done == static_cast<int>(s.threads)) return;
    if (!progressed && at_barrier > 0 && at_barrier + done == static_cast<int>(s.threads)) {
      for (unsigned i = 0; i < s.threads; ++i) {
        if (s.thr[i].wait == ThreadCtx::Wait::kBarrier) s.thr[i].wait = ThreadCtx::Wait::kRunning;
      }
      ++s.epoch;
      ++s.counters.barriers;
      progressed = true;
    }
    if (!progressed) {
      std::string where;
      for (int w = 0; w < warps; ++w) absl::StrAppend(&where, "\n    warp ", w, ": ", DescribeWarp(s, w));
      return s.Fatal(absl::StrCat("deadlock: no barrier or warp collective can complete", where));
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
  s.block = {};
  s.cur = nullptr;
  s.abort = false;
  if (threads == 0 || threads > 1024 || threads % 32 != 0) {
    s.Error(absl::StrCat("block of ", threads, " threads: the emulation runs 1-D blocks of whole warps, at most 1024"));
    return false;
  }
  while (s.thr.size() < threads) {
    s.thr.emplace_back();
    ThreadCtx& t = s.thr.back();
    t.fiber = std::make_unique<Fiber>(kFiberStackBytes);
  }
  for (unsigned i = 0; i < threads; ++i) {
    s.thr[i].tid = static_cast<int>(i);
    s.thr[i].warp = static_cast<int>(i / 32);
    s.thr[i].lane = static_cast<int>(i % 32);
  }
  s.threads = threads;
  s.body = &body;
  State* const outer = g_emu;
  g_emu = &s;
  for (unsigned z = 0; z < grid.z && !s.abort; ++z) {
    for (unsigned y = 0; y < grid.y && !s.abort; ++y) {
      for (unsigned x = 0; x < grid.x && !s.abort; ++x) {
        s.block = {x, y, z};
        RunBlock(s, dynamic_smem);
        ++s.counters.blocks;
      }
    }
  }
  g_emu = outer;
  s.body = nullptr;
  return s.errors == errors_before;
}

}  // namespace qprof::warp
