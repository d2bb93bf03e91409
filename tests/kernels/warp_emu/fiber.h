// Fibers for the warp emulation: every emulated GPU thread runs the kernel body on its own
// stack and gives control back to the block scheduler at each warp-collective instruction
// and barrier. A switch saves the callee-saved registers and the stack pointer (x86-64:
// 14 instructions, ~0.1 us); other CPUs use ucontext, whose swapcontext also saves the
// signal mask with a system call (~3 us: correct, 25x slower). Single OS thread: a
// scheduler and its fibers never run on two threads at once.
#ifndef QPROF_TESTS_KERNELS_WARP_EMU_FIBER_H_
#define QPROF_TESTS_KERNELS_WARP_EMU_FIBER_H_

#include <cstddef>
#include <memory>

namespace qprof::warp {

class Fiber {
 public:
  // A fiber with a stack of `stack_bytes` (and a guard page below it, so an overflow
  // faults instead of corrupting a neighbour).
  explicit Fiber(size_t stack_bytes);
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Prepares the fiber to start entry(arg) from the top of its stack on the next Resume
  // (a fiber can be restarted any number of times; its old frames are discarded, so they
  // must own nothing). When entry returns, the fiber switches back for the last time.
  void Start(void (*entry)(void*), void* arg);
  // Called from the scheduler: runs the fiber until it calls Yield (or finishes).
  void Resume();
  // Called from inside the fiber: back to the scheduler that resumed it.
  void Yield();

  struct Impl;  // opaque; public so that the fiber's first frame can name it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace qprof::warp

#endif  // QPROF_TESTS_KERNELS_WARP_EMU_FIBER_H_
