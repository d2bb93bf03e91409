#include "tests/kernels/warp_emu/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__x86_64__)
// qprof_fiber_switch(save, load): pushes the System V callee-saved registers, stores the
// stack pointer in *save, loads `load` and pops the other context's registers; `ret`
// continues where that context switched out (or, for a new fiber, enters its trampoline).
extern "C" void qprof_fiber_switch(void** save, void* load);
asm(R"(
  .text
  .globl qprof_fiber_switch
  .type qprof_fiber_switch, @function
qprof_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size qprof_fiber_switch, .-qprof_fiber_switch
)");
#endif

namespace qprof::warp {

struct Fiber::Impl {
  char* mapping = nullptr;
  size_t mapping_bytes = 0;
  char* stack_lo = nullptr;  // usable stack: [stack_lo, stack_lo + stack_bytes)
  size_t stack_bytes = 0;
  void (*entry)(void*) = nullptr;
  void* arg = nullptr;
  bool fresh = false;  // started, not yet resumed
#if defined(__x86_64__)
  void* fiber_sp = nullptr;
  void* sched_sp = nullptr;
#else
  ucontext_t fiber_ctx;
  ucontext_t sched_ctx;
#endif
  // AddressSanitizer bookkeeping of the two stacks (unused otherwise).
  void* sched_fake = nullptr;
  void* fiber_fake = nullptr;
  const void* sched_lo = nullptr;
  size_t sched_size = 0;

  void SwitchToFiber();
  void SwitchToScheduler(bool final_exit);
  void FinishSwitchIntoFiber();
};

namespace {

thread_local Fiber::Impl* g_starting = nullptr;  // the fiber entering its trampoline

}  // namespace

void Fiber::Impl::FinishSwitchIntoFiber() {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(fiber_fake, &sched_lo, &sched_size);
#endif
}

void Fiber::Impl::SwitchToFiber() {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_start_switch_fiber(&sched_fake, stack_lo, stack_bytes);
#endif
#if defined(__x86_64__)
  qprof_fiber_switch(&sched_sp, fiber_sp);
#else
  swapcontext(&sched_ctx, &fiber_ctx);
#endif
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(sched_fake, nullptr, nullptr);
#endif
}

void Fiber::Impl::SwitchToScheduler(bool final_exit) {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_start_switch_fiber(final_exit ? nullptr : &fiber_fake, sched_lo, sched_size);
#else
  (void)final_exit;
#endif
#if defined(__x86_64__)
  qprof_fiber_switch(&fiber_sp, sched_sp);
#else
  swapcontext(&fiber_ctx, &sched_ctx);
#endif
  FinishSwitchIntoFiber();
}

namespace {

// First frame of every fiber: runs the entry, then hands control back for good.
void Trampoline() {
  Fiber::Impl* f = g_starting;
  g_starting = nullptr;
  f->FinishSwitchIntoFiber();
  f->entry(f->arg);
  f->SwitchToScheduler(/*final_exit=*/true);
  std::fprintf(stderr, "qprof warp emulation: a finished fiber was resumed\n");
  std::abort();
}

}  // namespace

Fiber::Fiber(size_t stack_bytes) : impl_(new Impl) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  stack_bytes = (stack_bytes + page - 1) / page * page;
  impl_->mapping_bytes = stack_bytes + page;
  void* m = mmap(nullptr, impl_->mapping_bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    std::perror("qprof warp emulation: fiber stack");
    std::abort();
  }
  impl_->mapping = static_cast<char*>(m);
  mprotect(impl_->mapping, page, PROT_NONE);  // guard page: an overflow faults
  impl_->stack_lo = impl_->mapping + page;
  impl_->stack_bytes = stack_bytes;
}

Fiber::~Fiber() {
#if defined(__SANITIZE_ADDRESS__)
  ASAN_UNPOISON_MEMORY_REGION(impl_->stack_lo, impl_->stack_bytes);
#endif
  munmap(impl_->mapping, impl_->mapping_bytes);
}

void Fiber::Start(void (*entry)(void*), void* arg) {
  impl_->entry = entry;
  impl_->arg = arg;
#if defined(__SANITIZE_ADDRESS__)
  // Frames of the previous run never returned (an ended or abandoned body): their
  // redzones are still poisoned.
  ASAN_UNPOISON_MEMORY_REGION(impl_->stack_lo, impl_->stack_bytes);
#endif
#if defined(__x86_64__)
  // A new stack as qprof_fiber_switch leaves one: six zero registers, then the address
  // `ret` jumps to (the trampoline), then a null return address for the trampoline, so
  // that it starts with the ABI's alignment (rsp + 8 a multiple of 16).
  const uintptr_t top = reinterpret_cast<uintptr_t>(impl_->stack_lo + impl_->stack_bytes) & ~uintptr_t{15};
  void** sp = reinterpret_cast<void**>(top);
  *--sp = nullptr;
  *--sp = reinterpret_cast<void*>(&Trampoline);
  for (int r = 0; r < 6; ++r) *--sp = nullptr;
  impl_->fiber_sp = sp;
#else
  getcontext(&impl_->fiber_ctx);
  impl_->fiber_ctx.uc_stack.ss_sp = impl_->stack_lo;
  impl_->fiber_ctx.uc_stack.ss_size = impl_->stack_bytes;
  impl_->fiber_ctx.uc_link = nullptr;
  makecontext(&impl_->fiber_ctx, &Trampoline, 0);
#endif
  impl_->fiber_fake = nullptr;
  impl_->fresh = true;
}

void Fiber::Resume() {
  if (impl_->fresh) {
    impl_->fresh = false;
    g_starting = impl_.get();  // read by the trampoline
  }
  impl_->SwitchToFiber();
}

void Fiber::Yield() { impl_->SwitchToScheduler(/*final_exit=*/false); }

}  // namespace qprof::warp
