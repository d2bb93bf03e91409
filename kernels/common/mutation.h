// Test-only mutation switch of the kernels' lane maps and register builders.
//
// The warp-emulation tests (tests/kernels/warp_emu) prove that they can fail: each is compiled once
// more per mutation with -DQPROF_MUTATION=QPROF_MUT_<NAME>, which plants one realistic
// layout bug in the header code the kernels and the tests share, and CI expects the
// corresponding tests to fail. Real builds never define QPROF_MUTATION, and device code
// refuses to compile with one, so a mutant can never reach a kernel library.
#ifndef QPROF_KERNELS_COMMON_MUTATION_H_
#define QPROF_KERNELS_COMMON_MUTATION_H_

#define QPROF_MUT_NONE 0
#define QPROF_MUT_SWAP_A_REGS 1        // swap A-fragment registers a1 and a2
#define QPROF_MUT_SCALE_LANE 2         // block-scale factors read from the next lane
#define QPROF_MUT_NO_KPERM 3           // drop the k permutation of the B operand
#define QPROF_MUT_LDMATRIX_BITS 4      // swap the two matrix-select bits of ldmatrix addresses

#ifndef QPROF_MUTATION
#define QPROF_MUTATION QPROF_MUT_NONE
#endif

#if QPROF_MUTATION != QPROF_MUT_NONE && defined(__CUDACC__)
#error "QPROF_MUTATION is a host test switch; kernels are never built mutated"
#endif

// True when the named mutation is compiled in, e.g. QPROF_MUTANT(SWAP_A_REGS).
#define QPROF_MUTANT(name) (QPROF_MUTATION == QPROF_MUT_##name)

#endif  // QPROF_KERNELS_COMMON_MUTATION_H_
