#include "kernels/registry/work_models.h"

#include <algorithm>
#include <string>

#include "proto/vocabulary.h"

namespace qprof::kernels {
namespace {

constexpr double kAct = 2.0;  // BF16 activations / KV entries

double Get(const KernelShape& s, const char* key, double fallback = 0) {
  auto it = s.find(key);
  return it == s.end() ? fallback : static_cast<double>(it->second);
}

proto::WorkModel Make(double weight, double kv, double act, double flops,
                      std::string_view pipe) {
  proto::WorkModel w;
  w.set_weight_bytes(weight);
  w.set_kv_bytes(kv);
  w.set_activation_bytes(act);
  w.set_bytes(weight + kv + act);
  w.set_flops(flops);
  w.set_compute_pipe(std::string(pipe));
  return w;
}

}  // namespace

double BitsPerWeight(const std::string& format) {
  if (format == "mxfp4") return 4.0 + 8.0 / 32.0;  // E2M1 + one UE8M0 per 32
  if (format == "nvfp4") return 4.0 + 8.0 / 16.0;  // E2M1 + one E4M3 per 16
  if (format == "bf16" || format == "fp16") return 16.0;
  if (format == "fp8" || format == "int8") return 8.0;
  if (format == "fp32") return 32.0;
  return 0.0;
}

double ExpertWeightBytes(const std::string& format, double dim, double inter) {
  double bytes = 3.0 * inter * dim * BitsPerWeight(format) / 8.0;
  if (format == "nvfp4") bytes += 2 * 4.0;  // weight_scale_2 of W13 and of W2
  return bytes;
}

proto::WorkModel MoeWork(const KernelShape& s, const std::string& format, bool reuse,
                         const std::string& compute_pipe) {
  double tokens = Get(s, "tokens"), topk = Get(s, "topk"), experts = Get(s, "experts");
  double dim = Get(s, "dim"), inter = Get(s, "inter");
  // "slots": the (token, slot) pairs this launch computes when fewer than tokens * topk
  // (a tensor-parallel rank computes only the slots routed to its own experts).
  double slots = Get(s, "slots", tokens * topk);
  double unique = Get(s, "unique_experts", std::min(experts, slots));
  double reads = reuse ? unique : slots;  // expert weight reads
  double weight = reads * ExpertWeightBytes(format, dim, inter);
  // x in, out accumulated (read + write), SwiGLU hidden written and read per slot,
  // routing ids and weights.
  double act = tokens * dim * kAct * 3 + slots * inter * kAct * 2 + slots * 8;
  // gate + up + down: 3 GEMVs of inter x dim per slot, 2 FLOPs per multiply-add.
  double flops = 2.0 * slots * 3.0 * inter * dim;
  proto::WorkModel w = Make(weight, 0, act, flops, compute_pipe);
  w.set_decode_ops(reads * 3.0 * inter * dim);  // FP4 elements decoded
  return w;
}

proto::WorkModel SparseMlaWork(const KernelShape& s, const std::string& compute_pipe) {
  double b = Get(s, "batch"), h = Get(s, "heads"), sel = Get(s, "selected");
  double dqk = Get(s, "d_qk", 576), dv = Get(s, "d_v", 512);
  double kv = b * sel * dqk * kAct;  // one latent KV head shared by all query heads
  double act = b * h * (dqk + dv) * kAct + b * sel * 4;  // q, out, indices
  double flops = 2.0 * b * h * sel * (dqk + dv);  // QK^T over d_qk, PV over d_v
  return Make(0, kv, act, flops, compute_pipe);
}

proto::WorkModel IndexerWork(const KernelShape& s) {
  double b = Get(s, "batch"), ctx = Get(s, "context"), hi = Get(s, "index_heads");
  double di = Get(s, "index_dim"), sel = Get(s, "selected");
  double kv = b * ctx * di * kAct;
  double act = b * hi * (di + 1) * kAct + b * ctx * 4 + b * sel * 4;  // q, w, scores, ids
  double flops = 2.0 * b * ctx * hi * di + 3.0 * b * ctx * hi;  // dots, relu*w+sum
  return Make(0, kv, act, flops, compute_pipe::kSimtFp32);
}

proto::WorkModel KvAppendWork(const KernelShape& s) {
  double b = Get(s, "batch"), dqk = Get(s, "d_qk", 576), di = Get(s, "index_dim");
  double bytes = b * (dqk + di) * kAct * 2;  // read the new rows, write them to the caches
  return Make(0, 0, bytes, 0, compute_pipe::kNone);
}

proto::WorkModel DenseGemmWork(const KernelShape& s) {
  double m = Get(s, "m"), n = Get(s, "n"), k = Get(s, "k");
  return Make(n * k * 2.0, 0, (m * k + m * n) * kAct, 2.0 * m * n * k,
              compute_pipe::kTensorBf16);
}

proto::WorkModel RmsNormWork(const KernelShape& s) {
  double r = Get(s, "rows"), c = Get(s, "cols");
  // square-accumulate, then scale and multiply: ~4 FLOPs per element.
  return Make(c * 2.0, 0, 2.0 * r * c * kAct, 4.0 * r * c, compute_pipe::kSimtFp32);
}

proto::WorkModel RopeWork(const KernelShape& s) {
  double r = Get(s, "rows"), h = Get(s, "heads"), d = Get(s, "rope_dim");
  // per pair: 4 multiplies + 2 adds (sin/cos from a table).
  return Make(0, 0, 2.0 * r * h * d * kAct, 3.0 * r * h * d, compute_pipe::kSimtFp32);
}

proto::WorkModel RouterWork(const KernelShape& s) {
  double t = Get(s, "tokens"), e = Get(s, "experts"), d = Get(s, "dim"), k = Get(s, "topk");
  // gate projection (BF16 weight), sigmoid, top-k selection, renormalisation.
  return Make(e * d * 2.0, 0, t * d * kAct + t * k * 8, 2.0 * t * e * d + 4.0 * t * e,
              compute_pipe::kSimtFp32);
}

proto::WorkModel EmbeddingWork(const KernelShape& s) {
  double r = Get(s, "rows"), d = Get(s, "dim");
  return Make(r * d * 2.0, 0, r * d * kAct + r * 4, 0, compute_pipe::kNone);
}

proto::WorkModel ArgmaxWork(const KernelShape& s) {
  double r = Get(s, "rows"), c = Get(s, "cols");
  return Make(0, 0, r * c * 4.0 + r * 4, r * c, compute_pipe::kSimtFp32);
}

proto::WorkModel AllReduceWork(const KernelShape& s) {
  double bytes = Get(s, "bytes"), ranks = Get(s, "ranks", 1);
  // Ring all-reduce: each rank sends and receives 2 (r-1)/r of the message.
  double moved = ranks > 1 ? 2.0 * (ranks - 1) / ranks * bytes : 0;
  proto::WorkModel w = Make(0, 0, moved, bytes * (ranks > 1 ? (ranks - 1) / ranks : 0),
                            compute_pipe::kNone);
  w.set_comm_bytes(bytes);
  return w;
}

}  // namespace qprof::kernels
