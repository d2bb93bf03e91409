#include "kernels/registry/launch_shapes.h"

#include <algorithm>
#include <string>

namespace qprof::kernels {
namespace {

int64_t Dim(const KernelShape& s, const char* key, int64_t fallback = 0) {
  auto it = s.find(key);
  return it == s.end() ? fallback : it->second;
}

int64_t CeilDiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

proto::LaunchShape Shape(std::string kernel, int64_t blocks, int threads, double in_flight,
                         int64_t dyn_smem, const char* source) {
  proto::LaunchShape l;
  l.set_cuda_kernel(std::move(kernel));
  l.set_blocks(static_cast<uint64_t>(std::max<int64_t>(blocks, 0)));
  l.set_threads_per_block(static_cast<uint32_t>(threads));
  l.set_bytes_in_flight_per_thread(in_flight);
  l.set_dynamic_shared_bytes(static_cast<uint32_t>(std::max<int64_t>(dyn_smem, 0)));
  l.set_source(source);
  return l;
}

// moe_slot_gemv.cuh: W13 (gate+up, the larger of the two GEMVs) launches
// (ceil(inter / (8 warps x 3 features)), tokens x topk) blocks of 256 threads; under tensor
// parallelism the slots routed to other ranks' experts exit at once, so the working blocks
// are those of the rank's slots ("slots" in the shape when the plan gives it). Every lane
// issues kSlotGemvRowsPerWarp = 6 row loads of 16 bytes before the first use; x is staged
// in dim/32 x 36 floats of dynamic shared memory.
proto::LaunchShape SlotGemv(const std::string& fmt, const KernelShape& s) {
  const int64_t slots = Dim(s, "slots", Dim(s, "tokens") * Dim(s, "topk"));
  return Shape("qprof_moe_slot_gemv_" + fmt + "_w13", CeilDiv(Dim(s, "inter"), 24) * slots, 256,
               6 * 16.0, Dim(s, "dim") / 32 * 36 * 4,
               "kernels/moe/cuda/moe_slot_gemv.cuh: W13 grid (inter/24, slots) x 256 threads, 6 "
               "x 16-byte loads in flight per lane");
}

// moe_w4a16_mma.cuh: gemm1 launches (inter / 32, active experts) blocks of 128 threads;
// blocks of experts no token chose exit at once, so the working blocks are per touched
// expert. One cp.async stage per lane: 4 x 16 B of weights plus 4 x 16 B of activations,
// double-buffered (the next stage is in flight while one is consumed).
proto::LaunchShape W4a16(const std::string& fmt, const KernelShape& s) {
  const int64_t experts = Dim(s, "unique_experts", Dim(s, "experts"));
  return Shape("qprof_moe_w4a16_mma_" + fmt + "_w13", Dim(s, "inter") / 32 * experts, 128,
               8 * 16.0, 0,
               "kernels/moe/cuda/moe_w4a16_mma.cuh: gemm1 grid (inter/32, experts) x 128 "
               "threads, one cp.async stage of 8 x 16 B per thread in flight");
}

// moe_fp4_mma.cuh: gemm1 grid (inter / 32, active experts) x 128 threads; the k64 loop is
// unrolled twice, each step loading 4 x 4 B of weights and 2 x 2 x 4 B of activations per
// thread.
proto::LaunchShape Fp4Mma(const std::string& fmt, const KernelShape& s) {
  const int64_t experts = Dim(s, "unique_experts", Dim(s, "experts"));
  return Shape("qprof_moe_fp4_mma_" + fmt + "_w13", Dim(s, "inter") / 32 * experts, 128,
               2 * (16.0 + 16.0), 0,
               "kernels/moe/cuda/moe_fp4_mma.cuh: gemm1 grid (inter/32, experts) x 128 threads, "
               "k64 loop unrolled twice: 2 x 32 B of loads in flight per thread");
}

// sparse_mla_simt.cu: grid (ceil(heads / 8), batch) x 256 threads; the KV tile is staged
// with one 16-byte load per loop iteration, converted and stored before the next (one load
// in flight per thread).
proto::LaunchShape SparseMlaSimt(const KernelShape& s) {
  return Shape("qprof_attn_sparse_mla_simt", CeilDiv(Dim(s, "heads"), 8) * Dim(s, "batch"), 256,
               16.0, 0,
               "kernels/mla/cuda/sparse_mla_simt.cu: grid (heads/8, batch) x 256 threads, one "
               "16-byte KV load in flight per thread");
}

// sparse_mla_mma.cu: grid (ceil(heads / 16), batch, splits) x 128 threads; splits aim at
// two blocks per SM, at most 64 and at most half the 32-token tiles. Each cp.async tile is
// 32 x 72 pieces of 16 B over 128 threads = 18 per thread, one tile ahead.
proto::LaunchShape SparseMlaMma(const KernelShape& s) {
  const int64_t tiles = CeilDiv(Dim(s, "selected"), 32);
  proto::LaunchShape l = Shape(
      "qprof_attn_sparse_mla_mma", CeilDiv(Dim(s, "heads"), 16) * Dim(s, "batch"), 128, 18 * 16.0,
      16 * 1168 + 2 * 32 * 1168 + 16 * 33 * 4 + 2 * 32 * 4,
      "kernels/mla/cuda/sparse_mla_mma.cu: grid (heads/16, batch, splits) x 128 threads, "
      "splits for 2 blocks per SM (<= 64, <= tiles/2), 18 x 16 B cp.async per thread in flight");
  l.set_split_blocks_per_sm(2);
  l.set_max_splits(static_cast<uint32_t>(std::clamp<int64_t>(tiles / 2, 1, 64)));
  return l;
}

// common_kernels.cu: the dense GEMMs launch ceil(n / 64) blocks of 128 threads (4 warps x
// 16 rows); the k loop is unrolled twice with two 16-byte weight loads per step.
proto::LaunchShape DenseGemm(const std::string& kernel, const KernelShape& s) {
  return Shape(kernel, CeilDiv(Dim(s, "n"), 64), 128, 2 * 2 * 16.0, 0,
               "kernels/common/cuda/common_kernels.cu: grid n/64 x 128 threads, k loop "
               "unrolled twice with 2 x 16-byte weight loads");
}

}  // namespace

void AttachLaunchShapes(KernelRegistry& r) {
  for (std::string fmt : {"mxfp4", "nvfp4"}) {
    r.SetLaunch("moe.slot_gemv." + fmt, [fmt](const KernelShape& s) { return SlotGemv(fmt, s); });
    r.SetLaunch("moe.w4a16_mma." + fmt, [fmt](const KernelShape& s) { return W4a16(fmt, s); });
    r.SetLaunch("moe.fp4_mma." + fmt, [fmt](const KernelShape& s) { return Fp4Mma(fmt, s); });
  }
  r.SetLaunch("attn.sparse_mla.simt", SparseMlaSimt);
  r.SetLaunch("attn.sparse_mla.mma", SparseMlaMma);
  r.SetLaunch("gemm.dense", [](const KernelShape& s) { return DenseGemm("qprof_gemm_dense", s); });
  r.SetLaunch("gemm.lm_head", [](const KernelShape& s) { return DenseGemm("qprof_gemm_lm_head", s); });
}

}  // namespace qprof::kernels
