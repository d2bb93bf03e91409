// Shared memory of one emulated block, with a shadow state per byte that decides whether an
// access is ordered by the barriers and cp.async completions a GPU guarantees.
//
// The model is sequential: the threads of a block run one after another between barriers,
// so the order the emulation happens to use proves nothing. What it checks instead is the
// happens-before relation the kernel relies on. Per byte it keeps the last writer (and the
// barrier epoch in which the write became visible to that writer), the readers since the
// last barrier, and whether a cp.async is still filling it. Epoch = number of
// __syncthreads the block has passed. Then:
//  - a read of a byte a cp.async is still filling is an error (the issuing thread has not
//    waited for its group: cp.async.wait_group);
//  - a read of a byte nobody wrote is an error (uninitialised shared memory);
//  - a read of another thread's write from the same epoch is an error (no barrier between
//    them: on a GPU the read may see the old value);
//  - a write over a byte another thread read or wrote in the same epoch is an error (the
//    double-buffer hazard: refilling a buffer before every thread finished with it).
// A cp.async's bytes become the issuing thread's write when its group completes (in the
// epoch of the wait), so other threads need a barrier after the wait, as on the GPU.
//
// Within a warp, two more orderings count (the SIMT kernels exchange data between the lanes
// of a warp through shared memory):
//  - __syncwarp orders every access of the warp's lanes before it with every access after
//    it (bar.warp.sync guarantees memory ordering among the participating threads);
//  - a warp-collective instruction (shfl.sync, vote.sync, mma, ldmatrix) is an execution
//    barrier of the warp: every lane reaches it before any lane goes on. It orders a lane's
//    read before it with another lane's write after it (the read has been performed: the
//    warp issues its instructions in order and the collective waits for all lanes), but not
//    a write before it with a read after it: that needs __syncwarp, as the CUDA
//    programming guide asks.
// Per warp the block keeps two counters (warp barriers passed, collectives passed); each
// byte records the counters of its last writer's and readers' warp.
#ifndef QPROF_TESTS_KERNELS_WARP_EMU_SHARED_MEM_MODEL_H_
#define QPROF_TESTS_KERNELS_WARP_EMU_SHARED_MEM_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qprof::warp {

class SharedMemoryModel {
 public:
  // Per-block limits: 227 KiB with the opt-in on sm_90/sm_100 (sm_120: 99 KiB); 48 KiB of
  // static __shared__ variables.
  static constexpr size_t kCapacity = 227 * 1024;
  static constexpr size_t kStaticLimit = 48 * 1024;
  static constexpr int kAnyWarpReader = -2;  // several readers, or a warp-collective read

  // Who accesses, and what ordering it has passed: block barriers (epoch), and its warp's
  // __syncwarp and warp-collective counts.
  struct Accessor {
    int tid;  // or kAnyWarpReader (a warp-collective read)
    int warp;
    uint32_t epoch, warp_syncs, warp_collectives;
  };

  SharedMemoryModel();

  // A new block: no allocation but the dynamic region (`dynamic_bytes`, 16-byte aligned at
  // offset 0), every byte unwritten. Returns "" or why the launch cannot run.
  std::string Reset(size_t dynamic_bytes);
  // The block's static variable for `key` (allocated on first use, like one __shared__
  // variable). Past the static limit `*error` is set (the variable is still allocated);
  // null only when the block's shared memory is exhausted.
  void* Static(const void* key, size_t bytes, size_t align, std::string* error);
  unsigned char* Dynamic() { return mem_.data(); }

  // The shared-window offset of [p, p + bytes), or "" -> error when it is not inside one
  // allocation or not aligned to `align`.
  std::string Locate(const void* p, size_t bytes, size_t align, uint32_t* off) const;
  std::string LocateOffset(uint32_t off, size_t bytes, size_t align) const;
  const uint8_t* At(uint32_t off) const { return mem_.data() + off; }

  // Checked accesses. Each returns "" or the first violation; the data moves either way.
  std::string Read(const Accessor& a, uint32_t off, size_t bytes, void* out);
  std::string Write(const Accessor& a, uint32_t off, size_t bytes, const void* in);
  // cp.async: issue marks the bytes as being filled by `a.tid` (checked like a write); land
  // stores the data and makes it a write of `a` (the thread at its wait_group).
  std::string CpAsyncIssue(const Accessor& a, uint32_t off, size_t bytes);
  void CpAsyncLand(const Accessor& a, uint32_t off, const uint8_t* data, size_t bytes);

 private:
  struct Region {
    uint32_t off, bytes;
    const void* key;  // null: the dynamic region
  };
  struct ByteState {
    int16_t writer = -1;       // -1: never written
    int16_t reader = -1;       // -1: none since r_epoch; kAnyWarpReader: several
    int16_t reader_warp = -1;  // the readers' warp since r_epoch; -2: several warps
    uint8_t pending = 0;       // a cp.async is filling it
    uint32_t w_epoch = 0, r_epoch = 0;
    uint32_t w_syncs = 0;                 // writer's warp: __syncwarp count at the write
    uint32_t r_syncs = 0, r_colls = 0;    // readers' warp: counts at the latest read
  };
  std::string Describe(uint32_t off) const;
  // Whether an earlier write of `s` is ordered before an access by `a`.
  static bool WriteOrdered(const ByteState& s, const Accessor& a);
  // Whether the earlier reads of `s` are ordered before a write by `a`.
  static bool ReadsOrdered(const ByteState& s, const Accessor& a);
  void Grow(uint32_t top);  // the shadow covers [0, top)

  std::vector<uint8_t> mem_;
  std::vector<ByteState> shadow_;
  std::vector<Region> regions_;
  uint32_t top_ = 0;  // next free offset
  uint32_t static_bytes_ = 0;
};

}  // namespace qprof::warp

#endif  // QPROF_TESTS_KERNELS_WARP_EMU_SHARED_MEM_MODEL_H_
