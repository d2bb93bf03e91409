// The CPU warp emulation: runs a kernel body (written against kernels/common/cuda/warp_ops.h)
// for every thread of every block of a launch, as the GPU would, and checks what a
// sequential model can check.
//
// Execution. Each thread of a block is a fiber (fiber.h). A thread runs until it reaches
// a warp-collective instruction (mma.sync, ldmatrix, shfl.sync) or a barrier; when all 32
// lanes of a warp wait at the same collective, the PTX warp model (ptx_warp_model.h)
// executes it with every lane's operands; when every live thread waits at the barrier,
// the barrier opens. Blocks run one after another, or (set_resident_blocks) several at
// once, interleaved at their barriers. A warp whose lanes wait at different collectives, a
// collective that an exited lane misses, a barrier some thread never reaches: each is
// reported and ends the launch.
//
// Checks (each violation is an error of the launch):
//  - shared memory (shared_mem_model.h): every access inside an allocation and aligned; a
//    read of bytes nobody wrote; a read of bytes a cp.async is still filling (no completed
//    cp.async.wait_group covers them); a read of another thread's write, or a write over
//    another thread's read or write, with no barrier in between;
//  - shared memory within a warp: __syncwarp orders the warp's accesses, a warp-collective
//    instruction orders a read before it with a write after it (shared_mem_model.h);
//  - global memory reached through a primitive (cp.async sources, ld.global.nc, __ldg,
//    LdGlobal / StGlobal): inside a buffer the test registered with AddGlobal, aligned to
//    the access width, and no byte written by one block of a launch and read or written by
//    another (global_race_model.h). Plain loads and stores of a body are not seen;
//  - inline PTX: only the instructions the model knows, operands of the right kind
//    (a read of a write-only "=r" operand is an error), warp-uniform selectors.
//
// What it cannot check: timing (when a cp.async really lands, overlap, speed), the tensor
// cores' internal summation order and precision, HMUL2's handling of subnormal results,
// __expf's last bits: see docs/kernels.md.
#ifndef QPROF_TESTS_KERNELS_WARP_EMU_WARP_EMU_H_
#define QPROF_TESTS_KERNELS_WARP_EMU_WARP_EMU_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/cuda/warp_ops.h"

namespace qprof::warp {

using kernels::cuda::LaunchDims;

class WarpEmu {
 public:
  WarpEmu();
  ~WarpEmu();

  // Global memory the kernels may touch through the warp primitives.
  void AddGlobal(const void* p, size_t bytes, const std::string& name);
  template <typename T>
  void AddGlobal(const std::vector<T>& v, const std::string& name) {
    AddGlobal(v.data(), v.size() * sizeof(T), name);
  }

  // How many blocks of a launch are resident at once (default 1: one after another). With
  // n > 1 the first n blocks start together; each runs until all its live threads wait at
  // a barrier (or have exited), then the next resident block runs (round robin), and a
  // finished block's place goes to the next block of the grid. A kernel whose blocks
  // communicate through global memory then sees other blocks' writes mid-run, as on a GPU
  // with several blocks per SM or several SMs, so such a race changes its results (it is
  // also reported by the race check above, which does not depend on the order).
  void set_resident_blocks(int n);

  // Runs body() as every thread of every block of `grid`, `threads` threads per block
  // (1-D blocks), with `dynamic_smem` bytes of dynamic shared memory. Returns true when
  // the launch recorded no error.
  bool Launch(const std::string& kernel, LaunchDims grid, unsigned threads, size_t dynamic_smem,
              const std::function<void()>& body);

  // Errors of all launches so far: the first few messages and the total count.
  int64_t error_count() const;
  std::string ErrorReport() const;
  // Work done so far (for the tests' log lines).
  // ldmatrix_extra_wavefronts: shared-memory bank conflicts of ldmatrix. Each 8x8 matrix
  // is one 128-byte wavefront when its 8 row addresses fall in 8 different 16-byte bank
  // groups ((address / 16) % 8); every repeat of a group costs one more.
  struct Counters {
    int64_t blocks = 0, warp_collectives = 0, barriers = 0, cp_async_bytes = 0, shared_reads = 0;
    int64_t ldmatrix = 0, ldmatrix_extra_wavefronts = 0;
  };
  Counters counters() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace qprof::warp

#endif  // QPROF_TESTS_KERNELS_WARP_EMU_WARP_EMU_H_
