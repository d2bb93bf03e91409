// The warp primitives of the kernels: everything a kernel body does besides plain
// arithmetic (thread and block ids, block and warp barriers, warp shuffles and votes,
// shared-memory access, read-only and plain global loads and stores, cp.async, ldmatrix,
// mma.sync).
//
// One source, two meanings. Under nvcc every primitive is the instruction or intrinsic the
// kernels used before (inline, so the SASS does not change). Under a host compiler every
// primitive is declared here and implemented by the CPU warp emulation
// (tests/kernels/warp_emu), which runs the same kernel body for every thread of every
// block as a fiber, meets the threads of a warp at each warp-collective instruction and
// executes it with the PTX warp model, and checks every shared-memory access against the
// barriers and cp.async groups that should make it visible. So a kernel body written
// against these primitives (moe_w4a16_mma.cuh, moe_fp4_mma.cuh, sparse_mla_mma.cuh,
// gemm_mma.cuh, moe_group.cuh; the SIMT bodies moe_slot_gemv.cuh, sparse_mla_simt.cuh,
// indexer.cuh, router_topk.cuh) is both what nvcc compiles and what the CPU proves.
//
// Inline PTX goes through QPROF_PTX(text, (outputs), (inputs)) with one operand macro per
// constraint: nvcc sees `asm volatile(text : outputs : inputs)`; the host emulation parses
// the same text and binds %n to the same operand list, so the asm string and its operand
// order are checked too (an operand swap in a binding changes the emulated result).
//
// Host mode is for the emulation only: a host build that calls a primitive must link
// qprof_warp_emu (tests/kernels/warp_emu). No CUDA header is included outside nvcc.
#ifndef QPROF_KERNELS_COMMON_CUDA_WARP_OPS_H_
#define QPROF_KERNELS_COMMON_CUDA_WARP_OPS_H_

#include <stddef.h>
#include <stdint.h>

#include "kernels/common/reg_ops.h"  // QPROF_HDI, mutation.h

#if defined(__CUDACC__)
#define QPROF_WARP_FN __device__ __forceinline__
#else
#include <math.h>

#include <cstring>
#include <initializer_list>
#define QPROF_WARP_FN inline
#endif

// Inline PTX shared by both sides. Operand numbering is GCC's: outputs first, then inputs.
#define QPROF_PTX_LIST(...) __VA_ARGS__
#if defined(__CUDACC__)
#define QPROF_PTX(text, outs, ins) asm volatile(text : QPROF_PTX_LIST outs : QPROF_PTX_LIST ins)
#define QPROF_PTX_OUT_R(x) "=r"(x)
#define QPROF_PTX_INOUT_F(x) "+f"(x)
#define QPROF_PTX_IN_R(x) "r"(x)
#define QPROF_PTX_IN_H(x) "h"(x)
#define QPROF_PTX_IN_L(x) "l"(x)
#define QPROF_PTX_IMM(x) "n"(x)
#else
#define QPROF_PTX(text, outs, ins) \
  ::qprof::kernels::warp_host::ExecPtx(text, {QPROF_PTX_LIST outs}, {QPROF_PTX_LIST ins})
#define QPROF_PTX_OUT_R(x) ::qprof::kernels::warp_host::PtxArg::OutR(&(x))
#define QPROF_PTX_INOUT_F(x) ::qprof::kernels::warp_host::PtxArg::InOutF(&(x))
#define QPROF_PTX_IN_R(x) ::qprof::kernels::warp_host::PtxArg::InR(x)
#define QPROF_PTX_IN_H(x) ::qprof::kernels::warp_host::PtxArg::InH(x)
#define QPROF_PTX_IN_L(x) ::qprof::kernels::warp_host::PtxArg::InL(x)
#define QPROF_PTX_IMM(x) ::qprof::kernels::warp_host::PtxArg::Imm(x)
#endif

namespace qprof::kernels::cuda {

// Grid of a launch (dim3 without the CUDA headers), computed by the host-callable launch
// plans next to each kernel body and used by both the launchers and the emulation.
struct LaunchDims {
  unsigned x = 1, y = 1, z = 1;
};

}  // namespace qprof::kernels::cuda

#if !defined(__CUDACC__)
// Host declarations, implemented by the warp emulation (tests/kernels/warp_emu).
namespace qprof::kernels::warp_host {

// One operand of an inline-PTX statement: its constraint letter ('r' 32-bit, 'h' 16-bit,
// 'l' 64-bit, 'f' float, 'n' immediate), direction, value (inputs) or address (outputs).
struct PtxArg {
  enum class Dir : uint8_t { kIn, kOut, kInOut };
  Dir dir;
  char type;
  uint64_t value;
  void* ptr;
  static PtxArg OutR(uint32_t* p) { return {Dir::kOut, 'r', 0, p}; }
  static PtxArg InOutF(float* p) { return {Dir::kInOut, 'f', 0, p}; }
  static PtxArg InR(uint32_t v) { return {Dir::kIn, 'r', v, nullptr}; }
  static PtxArg InH(uint16_t v) { return {Dir::kIn, 'h', v, nullptr}; }
  static PtxArg InL(const void* p) { return {Dir::kIn, 'l', reinterpret_cast<uintptr_t>(p), nullptr}; }
  static PtxArg Imm(long long v) { return {Dir::kIn, 'n', static_cast<uint64_t>(v), nullptr}; }
};
void ExecPtx(const char* text, std::initializer_list<PtxArg> outs, std::initializer_list<PtxArg> ins);

unsigned ThreadIdxX();
unsigned BlockIdxX();
unsigned BlockIdxY();
unsigned BlockIdxZ();
unsigned BlockDimX();
void SyncThreads();
// __syncwarp() with the full mask: orders the warp's shared-memory accesses.
void SyncWarp();
float ShflXorF32(float v, int lane_mask);
uint32_t ShflXorU32(uint32_t v, int lane_mask);
// __ballot_sync(0xffffffff, pred): bit l set when lane l's predicate is true.
uint32_t Ballot(bool pred);
// Shared memory: a checked read (copies `bytes` into `out`) or write; `align` is the
// access's required alignment.
void SharedRead(const void* p, size_t bytes, size_t align, void* out);
void SharedWrite(void* p, size_t bytes, size_t align, const void* in);
uint32_t SharedAddr(const void* p);
void* StaticShared(const void* key, size_t bytes, size_t align);
unsigned char* DynamicShared();
// Global memory accessed through a primitive: checked against the buffers the emulation
// registered and for alignment. False (error recorded) when the caller must not copy.
bool GlobalAccess(const void* p, size_t bytes, size_t align, bool write);

}  // namespace qprof::kernels::warp_host
#endif

namespace qprof::kernels::cuda {

// Register helpers shared with host code (kernels/common/reg_ops.h).
using reg::Bf16BitsToFloat;
using reg::BytePerm;
using reg::DecodeE2M1Quad;
using reg::FloatToBf16Bits;
using reg::Hmul2Bf16;
using reg::PackBf16x2;

// Vector types of the kernels' wide loads and stores (CUDA's uint4 ... under nvcc).
#if defined(__CUDACC__)
using U32x4 = uint4;
using U32x2 = uint2;
using F32x4 = float4;
using F32x2 = float2;
#else
struct alignas(16) U32x4 {
  uint32_t x, y, z, w;
};
struct alignas(8) U32x2 {
  uint32_t x, y;
};
struct alignas(16) F32x4 {
  float x, y, z, w;
};
struct alignas(8) F32x2 {
  float x, y;
};
#endif

#if defined(__CUDACC__)

QPROF_WARP_FN unsigned ThreadIdxX() { return threadIdx.x; }
QPROF_WARP_FN unsigned BlockIdxX() { return blockIdx.x; }
QPROF_WARP_FN unsigned BlockIdxY() { return blockIdx.y; }
QPROF_WARP_FN unsigned BlockIdxZ() { return blockIdx.z; }
QPROF_WARP_FN unsigned BlockDimX() { return blockDim.x; }
QPROF_WARP_FN void SyncThreads() { __syncthreads(); }
QPROF_WARP_FN void SyncWarp() { __syncwarp(); }
QPROF_WARP_FN float ShflXor(float v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }
QPROF_WARP_FN int ShflXor(int v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }
QPROF_WARP_FN unsigned Ballot(bool pred) { return __ballot_sync(0xffffffffu, pred); }
QPROF_WARP_FN int Popc(unsigned v) { return __popc(v); }
QPROF_WARP_FN int MinI(int a, int b) { return min(a, b); }

template <typename T>
QPROF_WARP_FN T LdShared(const void* p) {
  return *reinterpret_cast<const T*>(p);
}
template <typename T>
QPROF_WARP_FN void StShared(void* p, T v) {
  *reinterpret_cast<T*>(p) = v;
}
QPROF_WARP_FN uint32_t SharedAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// A block's static shared variable of type T (kTag tells apart two of the same type).
template <typename T, int kTag = 0>
QPROF_WARP_FN T& SharedStatic() {
  __shared__ T s;
  return s;
}
// The launch's dynamic shared memory (16-byte aligned).
QPROF_WARP_FN unsigned char* DynamicShared() {
  extern __shared__ uint4 qprof_dynamic_smem[];
  return reinterpret_cast<unsigned char*>(qprof_dynamic_smem);
}
// Read-only-path global load (LDG.CONSTANT); `p` aligned to sizeof(T).
template <typename T>
QPROF_WARP_FN T Ldg(const void* p) {
  return __ldg(reinterpret_cast<const T*>(p));
}
// Plain global vector load / store; `p` aligned to sizeof(T).
template <typename T>
QPROF_WARP_FN T LdGlobal(const void* p) {
  return *reinterpret_cast<const T*>(p);
}
template <typename T>
QPROF_WARP_FN void StGlobal(void* p, T v) {
  *reinterpret_cast<T*>(p) = v;
}

#else  // host: the warp emulation

inline unsigned ThreadIdxX() { return warp_host::ThreadIdxX(); }
inline unsigned BlockIdxX() { return warp_host::BlockIdxX(); }
inline unsigned BlockIdxY() { return warp_host::BlockIdxY(); }
inline unsigned BlockIdxZ() { return warp_host::BlockIdxZ(); }
inline unsigned BlockDimX() { return warp_host::BlockDimX(); }
inline void SyncThreads() { warp_host::SyncThreads(); }
inline void SyncWarp() { warp_host::SyncWarp(); }
inline float ShflXor(float v, int lane_mask) { return warp_host::ShflXorF32(v, lane_mask); }
inline int ShflXor(int v, int lane_mask) {
  return static_cast<int>(warp_host::ShflXorU32(static_cast<uint32_t>(v), lane_mask));
}
inline unsigned Ballot(bool pred) { return warp_host::Ballot(pred); }
inline int Popc(unsigned v) { return __builtin_popcount(v); }
inline int MinI(int a, int b) { return a < b ? a : b; }

template <typename T>
inline T LdShared(const void* p) {
  T v;
  warp_host::SharedRead(p, sizeof(T), alignof(T), &v);
  return v;
}
template <typename T>
inline void StShared(void* p, T v) {
  warp_host::SharedWrite(p, sizeof(T), alignof(T), &v);
}
inline uint32_t SharedAddr(const void* p) { return warp_host::SharedAddr(p); }
template <typename T, int kTag = 0>
inline T& SharedStatic() {
  static const char key = 0;  // one per (T, kTag), as one __shared__ variable per kernel
  return *static_cast<T*>(warp_host::StaticShared(&key, sizeof(T), alignof(T)));
}
inline unsigned char* DynamicShared() { return warp_host::DynamicShared(); }
template <typename T>
inline T Ldg(const void* p) {
  T v{};
  if (warp_host::GlobalAccess(p, sizeof(T), alignof(T), false)) std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
inline T LdGlobal(const void* p) {
  return Ldg<T>(p);
}
template <typename T>
inline void StGlobal(void* p, T v) {
  if (warp_host::GlobalAccess(p, sizeof(T), alignof(T), true)) std::memcpy(p, &v, sizeof(T));
}

#endif

// Butterfly reductions over the 32 lanes (every lane gets the result).
QPROF_WARP_FN float WarpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
#if QPROF_MUTANT(WARP_SUM_LANE)  // body mutation: the first step pairs lane l with l ^ 8, not l ^ 16
    v += ShflXor(v, o == 16 ? 8 : o);
#else
    v += ShflXor(v, o);
#endif
  }
  return v;
}
QPROF_WARP_FN float WarpMax(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, ShflXor(v, o));
  return v;
}

// 16-byte load through the read-only (non-coherent) path; `p` must be 16-byte aligned.
QPROF_WARP_FN U32x4 LdgNc128(const void* p) {
  U32x4 v;
  QPROF_PTX("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];",
            (QPROF_PTX_OUT_R(v.x), QPROF_PTX_OUT_R(v.y), QPROF_PTX_OUT_R(v.z), QPROF_PTX_OUT_R(v.w)),
            (QPROF_PTX_IN_L(p)));
  return v;
}

// cp.async of 16 bytes global -> shared; src_bytes < 16 zero-fills the rest (0 = all zero,
// used for rows past the end so that no uninitialised shared memory reaches an MMA).
QPROF_WARP_FN void CpAsync16(void* smem, const void* gmem, int src_bytes) {
  const uint32_t s = SharedAddr(smem);
  QPROF_PTX("cp.async.cg.shared.global [%0], [%1], 16, %2;", (),
            (QPROF_PTX_IN_R(s), QPROF_PTX_IN_L(gmem), QPROF_PTX_IN_R(src_bytes)));
}
// cp.async of 8 bytes through L1 (.ca: .cg only takes 16).
QPROF_WARP_FN void CpAsync8(void* smem, const void* gmem) {
  const uint32_t s = SharedAddr(smem);
  QPROF_PTX("cp.async.ca.shared.global [%0], [%1], 8;", (), (QPROF_PTX_IN_R(s), QPROF_PTX_IN_L(gmem)));
}
QPROF_WARP_FN void CpAsyncCommit() { QPROF_PTX("cp.async.commit_group;", (), ()); }
// Waits until at most kPending of this thread's committed groups are still in flight. The
// data is then visible to this thread only; other threads need a barrier after it.
template <int kPending>
QPROF_WARP_FN void CpAsyncWait() {
  QPROF_PTX("cp.async.wait_group %0;", (), (QPROF_PTX_IMM(kPending)));
}

// D = A * B + D, m16n8k16, A row-major BF16 (4 regs), B col-major BF16 (2 regs), FP32 acc.
// Fragment layout (g = lane / 4, t = lane % 4): a0 = A[g][2t..2t+1], a1 = A[g+8][2t..],
// a2 = A[g][2t+8..], a3 = A[g+8][2t+8..]; b0 = B[2t..2t+1][g], b1 = B[2t+8..][g];
// d0,d1 = D[g][2t..2t+1], d2,d3 = D[g+8][2t..2t+1].
QPROF_WARP_FN void MmaBf16m16n8k16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if QPROF_MUTANT(MMA_ASM_SWAP)  // body mutation: a1 and a2 bound in the wrong order
  QPROF_PTX("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
            "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};",
            (QPROF_PTX_INOUT_F(d[0]), QPROF_PTX_INOUT_F(d[1]), QPROF_PTX_INOUT_F(d[2]), QPROF_PTX_INOUT_F(d[3])),
            (QPROF_PTX_IN_R(a[0]), QPROF_PTX_IN_R(a[2]), QPROF_PTX_IN_R(a[1]), QPROF_PTX_IN_R(a[3]),
             QPROF_PTX_IN_R(b0), QPROF_PTX_IN_R(b1)));
#else
  QPROF_PTX("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
            "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};",
            (QPROF_PTX_INOUT_F(d[0]), QPROF_PTX_INOUT_F(d[1]), QPROF_PTX_INOUT_F(d[2]), QPROF_PTX_INOUT_F(d[3])),
            (QPROF_PTX_IN_R(a[0]), QPROF_PTX_IN_R(a[1]), QPROF_PTX_IN_R(a[2]), QPROF_PTX_IN_R(a[3]),
             QPROF_PTX_IN_R(b0), QPROF_PTX_IN_R(b1)));
#endif
}

// ldmatrix.x4.trans: lane l gives the shared address of row l % 8 of 8x8 matrix l / 8;
// register i receives matrix i transposed (elements (2(l%4), l/4) and (2(l%4)+1, l/4)).
QPROF_WARP_FN void LdmatrixX4Trans(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  QPROF_PTX("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];",
            (QPROF_PTX_OUT_R(r0), QPROF_PTX_OUT_R(r1), QPROF_PTX_OUT_R(r2), QPROF_PTX_OUT_R(r3)),
            (QPROF_PTX_IN_R(addr)));
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_COMMON_CUDA_WARP_OPS_H_
