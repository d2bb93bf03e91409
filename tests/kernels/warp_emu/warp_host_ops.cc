// The host side of kernels/common/cuda/warp_ops.h: each primitive a kernel body calls, for
// the emulated thread that calls it.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/common/cuda/warp_ops.h"
#include "tests/kernels/warp_emu/warp_emu_internal.h"

namespace qprof::kernels::warp_host {

using warp::CurrentEmu;
using warp::ThreadCtx;
using warp::WarpEmu;
using warp::WarpOp;

namespace {

ThreadCtx& Cur() { return *CurrentEmu().cur; }

// Parks the current thread until the scheduler resumes it.
void Wait(ThreadCtx::Wait why) {
  ThreadCtx& t = Cur();
  t.wait = why;
  t.fiber->Yield();
}

}  // namespace

unsigned ThreadIdxX() { return static_cast<unsigned>(Cur().tid); }
unsigned BlockIdxX() { return CurrentEmu().blk->idx.x; }
unsigned BlockIdxY() { return CurrentEmu().blk->idx.y; }
unsigned BlockIdxZ() { return CurrentEmu().blk->idx.z; }
unsigned BlockDimX() { return CurrentEmu().threads; }

void SyncThreads() { Wait(ThreadCtx::Wait::kBarrier); }

void SyncWarp() {
  ThreadCtx& t = Cur();
  t.op = WarpOp{};
  t.op.kind = WarpOp::Kind::kSyncWarp;
  Wait(ThreadCtx::Wait::kCollective);
}

uint32_t ShflXorU32(uint32_t v, int lane_mask) {
  ThreadCtx& t = Cur();
  t.op = WarpOp{};
  t.op.kind = WarpOp::Kind::kShfl;
  t.op.bits_in = v;
  t.op.shfl_mask = lane_mask;
  Wait(ThreadCtx::Wait::kCollective);
  return t.op.bits_out;
}

float ShflXorF32(float v, int lane_mask) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  b = ShflXorU32(b, lane_mask);
  std::memcpy(&v, &b, 4);
  return v;
}

uint32_t Ballot(bool pred) {
  ThreadCtx& t = Cur();
  t.op = WarpOp{};
  t.op.kind = WarpOp::Kind::kBallot;
  t.op.bits_in = pred ? 1u : 0u;
  Wait(ThreadCtx::Wait::kCollective);
  return t.op.bits_out;
}

void SharedRead(const void* p, size_t bytes, size_t align, void* out) {
  WarpEmu::State& s = CurrentEmu();
  ++s.counters.shared_reads;
  uint32_t off = 0;
  std::string err = s.blk->smem.Locate(p, bytes, align, &off);
  if (!err.empty()) {
    s.Error(err);
    std::memset(out, 0, bytes);
    return;
  }
  err = s.blk->smem.Read(s.blk->Access(Cur()), off, bytes, out);
  if (!err.empty()) s.Error(err);
}

void SharedWrite(void* p, size_t bytes, size_t align, const void* in) {
  WarpEmu::State& s = CurrentEmu();
  uint32_t off = 0;
  std::string err = s.blk->smem.Locate(p, bytes, align, &off);
  if (!err.empty()) return s.Error(err);
  err = s.blk->smem.Write(s.blk->Access(Cur()), off, bytes, in);
  if (!err.empty()) s.Error(err);
}

uint32_t SharedAddr(const void* p) {
  WarpEmu::State& s = CurrentEmu();
  const uint8_t* b = static_cast<const uint8_t*>(p);
  const uint8_t* base = s.blk->smem.Dynamic();
  if (b < base || b >= base + warp::SharedMemoryModel::kCapacity) {
    s.Error("__cvta_generic_to_shared of a pointer outside the block's shared memory");
    return 0xFFFFFFFFu;
  }
  return static_cast<uint32_t>(b - base);
}

void* StaticShared(const void* key, size_t bytes, size_t align) {
  WarpEmu::State& s = CurrentEmu();
  std::string err;
  void* p = s.blk->smem.Static(key, bytes, align, &err);
  if (!err.empty()) s.Error(err);
  if (p == nullptr) {
    std::fprintf(stderr, "qprof warp emulation: %s\n", err.c_str());
    std::abort();  // nowhere to put the variable: the body cannot run
  }
  return p;
}

unsigned char* DynamicShared() { return CurrentEmu().blk->smem.Dynamic(); }

bool GlobalAccess(const void* p, size_t bytes, size_t align, bool write) {
  WarpEmu::State& s = CurrentEmu();
  const std::string err = s.CheckGlobal(p, bytes, align);
  if (!err.empty()) {
    s.Error(absl::StrCat(write ? "store: " : "load: ", err));
    return false;
  }
  const std::string race = s.RecordGlobal(p, bytes, write);  // an error, but the access happens
  if (!race.empty()) s.Error(race);
  return true;
}

void ExecPtx(const char* text, std::initializer_list<PtxArg> outs, std::initializer_list<PtxArg> ins) {
  WarpEmu::State& s = CurrentEmu();
  ThreadCtx& t = Cur();
  if (!warp::PtxIsCollective(s, text)) {
    warp::PtxExecThread(s, t, text, outs.begin(), outs.size(), ins.begin(), ins.size());
    return;
  }
  // The operand lists live in this frame until the warp's collective has run.
  t.op = WarpOp{};
  t.op.kind = WarpOp::Kind::kPtx;
  t.op.text = text;
  t.op.outs = outs.begin();
  t.op.nouts = outs.size();
  t.op.ins = ins.begin();
  t.op.nins = ins.size();
  Wait(ThreadCtx::Wait::kCollective);
}

}  // namespace qprof::kernels::warp_host
