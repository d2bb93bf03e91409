// State shared by the parts of the warp emulation: the scheduler (warp_emu.cc), the host
// primitives (warp_host_ops.cc) and the inline-PTX interpreter (ptx_exec.cc).
#ifndef QPROF_TESTS_KERNELS_WARP_EMU_WARP_EMU_INTERNAL_H_
#define QPROF_TESTS_KERNELS_WARP_EMU_WARP_EMU_INTERNAL_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/cuda/warp_ops.h"
#include "tests/kernels/warp_emu/fiber.h"
#include "tests/kernels/warp_emu/global_race_model.h"
#include "tests/kernels/warp_emu/shared_mem_model.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {

using kernels::warp_host::PtxArg;

// One cp.async in flight: where it lands and the bytes it read at issue (zero-filled past
// src-size).
struct CpAsyncCopy {
  uint32_t off;
  uint32_t bytes;
  uint8_t data[16];
};

// The warp-collective operation a thread waits at.
struct WarpOp {
  enum class Kind : uint8_t { kNone, kPtx, kShfl, kBallot, kSyncWarp };
  Kind kind = Kind::kNone;
  const char* text = nullptr;  // kPtx: the inline-PTX text
  const PtxArg* outs = nullptr;
  size_t nouts = 0;
  const PtxArg* ins = nullptr;
  size_t nins = 0;
  uint32_t bits_in = 0, bits_out = 0;  // kShfl: the 32-bit value; kBallot: the predicate, the mask
  int shfl_mask = 0;                   // kShfl: lane xor mask
};

struct ThreadCtx {
  enum class Wait : uint8_t { kRunning, kCollective, kBarrier, kDone };
  int tid = 0, warp = 0, lane = 0;
  Wait wait = Wait::kRunning;
  WarpOp op;
  std::vector<CpAsyncCopy> uncommitted;       // issued since the last commit_group
  std::deque<std::vector<CpAsyncCopy>> groups;  // committed, oldest first
  std::unique_ptr<Fiber> fiber;
};

// One resident block: its threads, its shared memory and the ordering it has passed.
struct BlockRun {
  LaunchDims idx;
  uint32_t linear = 0;  // x + gx * (y + gy * z)
  SharedMemoryModel smem;
  uint32_t epoch = 0;  // barriers passed by the block
  std::vector<uint32_t> warp_syncs, warp_collectives;  // per warp: __syncwarp, collectives passed
  std::vector<ThreadCtx> thr;
  bool active = false;

  SharedMemoryModel::Accessor Access(const ThreadCtx& t) const {
    return {t.tid, t.warp, epoch, warp_syncs[t.warp], warp_collectives[t.warp]};
  }
};

struct WarpEmu::State {
  struct Buffer {
    uintptr_t lo, hi;
    std::string name;
  };
  std::vector<Buffer> globals;
  GlobalRaceModel races;
  int resident_blocks = 1;

  // The launch in progress.
  std::string kernel;
  LaunchDims grid;
  unsigned threads = 0;
  const std::function<void()>* body = nullptr;
  std::vector<std::unique_ptr<BlockRun>> slots;  // resident blocks
  BlockRun* blk = nullptr;                       // the block whose thread runs (or is checked)
  ThreadCtx* cur = nullptr;
  bool abort = false;

  int64_t errors = 0;
  std::vector<std::string> messages;  // the first kMaxMessages
  Counters counters;

  static constexpr size_t kMaxMessages = 12;
  // Records an error of the current thread (or of the block when no thread runs).
  void Error(const std::string& what);
  // An error after which the launch cannot go on (divergence, deadlock): stops it.
  void Fatal(const std::string& what);
  // The check of a primitive's global access; "" or why it is wrong (outside every
  // registered buffer, misaligned: the access must not happen).
  std::string CheckGlobal(const void* p, size_t bytes, size_t align) const;
  // Records a checked access for the race check (global_race_model.h); "" or the race it
  // makes with another block of the launch (the access itself is safe and happens).
  std::string RecordGlobal(const void* p, size_t bytes, bool write);
};

// The emulation this OS thread runs (set for the duration of a launch).
WarpEmu::State& CurrentEmu();

// Inline PTX (ptx_exec.cc): whether `text` is a warp-collective instruction; running a
// per-thread instruction for the current thread; running a collective for a whole warp
// whose 32 lanes wait at it.
bool PtxIsCollective(WarpEmu::State& s, const char* text);
void PtxExecThread(WarpEmu::State& s, ThreadCtx& t, const char* text, const PtxArg* outs, size_t nouts,
                   const PtxArg* ins, size_t nins);
void PtxExecWarp(WarpEmu::State& s, ThreadCtx* const* lanes);

}  // namespace qprof::warp

#endif  // QPROF_TESTS_KERNELS_WARP_EMU_WARP_EMU_INTERNAL_H_
