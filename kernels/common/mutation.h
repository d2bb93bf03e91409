// Test-only mutation switch of the kernels (lane maps, register builders and kernel bodies,
// tensor-core and SIMT) and of the PTX warp model.
//
// The warp-emulation tests (tests/kernels/warp_emu) prove that they can fail: each is compiled
// once more per mutation with -DQPROF_MUTATION=QPROF_MUT_<NAME>, which plants one realistic
// bug in the code the kernels and the emulation share, and CI expects the corresponding
// tests to fail (tests/kernels/warp_emu/CMakeLists.txt). Real builds never define
// QPROF_MUTATION, and device code refuses to compile with one, so a mutant can never reach
// a kernel library.
#ifndef QPROF_KERNELS_COMMON_MUTATION_H_
#define QPROF_KERNELS_COMMON_MUTATION_H_

#define QPROF_MUT_NONE 0
#define QPROF_MUT_SWAP_A_REGS 1        // swap A-fragment registers a1 and a2
#define QPROF_MUT_SCALE_LANE 2         // block-scale factors read from the next lane
#define QPROF_MUT_NO_KPERM 3           // drop the k permutation of the B operand
#define QPROF_MUT_LDMATRIX_BITS 4      // swap the two matrix-select bits of ldmatrix addresses
// Bugs in kernel bodies and bindings (the code that used to be copied into the tests):
#define QPROF_MUT_MMA_ASM_SWAP 5       // mma.m16n8k16 asm binding lists a1 and a2 swapped
#define QPROF_MUT_FP4_ASM_SWAP 6       // block-scaled mma binding passes sfb as sfa and back
#define QPROF_MUT_SMEM_STRIDE 7        // tile rows staged with the unpadded shared stride
#define QPROF_MUT_UNPACK_SHIFT 8       // w4a16 takes FP4 bytes 2-3 of a word as (word >> 8)
#define QPROF_MUT_DROP_BARRIER 9       // a barrier dropped: after cp.async.wait (w4a16, MLA mma),
                                       // after staging (slot_gemv, SIMT MLA, indexer top-k),
                                       // the __syncwarp after the router's pick
#define QPROF_MUT_CP_ASYNC_WAIT 10     // cp.async.wait_group 2 where the stage needs 1
// A misreading shared by a kernel and the model (only the CuTe cross-check can see it):
#define QPROF_MUT_SHARED_SCALE_BYTES 11  // scale factor j in byte (n-1-j), kernel and model
// Bugs in the SIMT kernel bodies (slot_gemv, SIMT sparse MLA, indexer, router top-k):
#define QPROF_MUT_WARP_SUM_LANE 12     // a warp reduction's butterfly takes a wrong lane
#define QPROF_MUT_TIE_ORDER 13         // top-k ties go to the higher index instead of the lower
#define QPROF_MUT_TAIL_ELEMENT 14      // the last element of a loop (chunk, tile, token, expert)
                                       // is skipped

#ifndef QPROF_MUTATION
#define QPROF_MUTATION QPROF_MUT_NONE
#endif

#if QPROF_MUTATION != QPROF_MUT_NONE && defined(__CUDACC__)
#error "QPROF_MUTATION is a host test switch; kernels are never built mutated"
#endif

// True when the named mutation is compiled in, e.g. QPROF_MUTANT(SWAP_A_REGS).
#define QPROF_MUTANT(name) (QPROF_MUTATION == QPROF_MUT_##name)

#endif  // QPROF_KERNELS_COMMON_MUTATION_H_
