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

double ExpertWeightBytes(const std::string& format, double dim, double inter) {
  double bytes = 3.0 * inter * dim * format::BitsPerWeight(format) / 8.0;
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

WorkFn MoePart(const std::string& format, bool reuse, const std::string& compute_pipe,
               unsigned terms) {
  return [=](const KernelShape& s) {
    const double tokens = Get(s, "tokens"), topk = Get(s, "topk"), experts = Get(s, "experts");
    const double dim = Get(s, "dim"), inter = Get(s, "inter");
    const double slots = Get(s, "slots", tokens * topk);
    const double unique = Get(s, "unique_experts", std::min(experts, slots));
    const double reads = reuse ? unique : slots;
    // MoeWork's terms: an expert's bytes are 3 * inter * dim weights (+ one FP32 tensor
    // scale per matrix for NVFP4); W13 holds 2/3 of them, W2 1/3.
    const double matrix = inter * dim * format::BitsPerWeight(format) / 8.0;
    const double scale2 = format == "nvfp4" ? 4.0 : 0.0;
    double weight = 0, act = 0, flops = 0, decode = 0;
    if (terms & kMoeIds) act += slots * 8;
    if (terms & kMoeInput) act += tokens * dim * kAct;
    if (terms & kMoeGateUp) {
      weight += reads * (2.0 * matrix + scale2);
      act += slots * inter * kAct;
      flops += 2.0 * slots * 2.0 * inter * dim;
      decode += reads * 2.0 * inter * dim;
    }
    if (terms & kMoeDown) {
      weight += reads * (matrix + scale2);
      flops += 2.0 * slots * inter * dim;
      decode += reads * inter * dim;
    }
    if (terms & kMoeHiddenRead) act += slots * inter * kAct;
    if (terms & kMoeOutput) act += tokens * dim * kAct * 2;
    proto::WorkModel w = Make(weight, 0, act, flops, compute_pipe);
    w.set_decode_ops(decode);
    return w;
  };
}

WorkFn RouterPart(bool gate) {
  return [gate](const KernelShape& s) {
    const double t = Get(s, "tokens"), e = Get(s, "experts"), d = Get(s, "dim");
    const double k = Get(s, "topk");
    return gate ? Make(e * d * 2.0, 0, t * d * kAct, 2.0 * t * e * d, compute_pipe::kSimtFp32)
                : Make(0, 0, t * k * 8, 4.0 * t * e, compute_pipe::kSimtFp32);
  };
}

WorkFn IndexerPart(bool score) {
  return [score](const KernelShape& s) {
    const double b = Get(s, "batch"), ctx = Get(s, "context"), hi = Get(s, "index_heads");
    const double di = Get(s, "index_dim"), sel = Get(s, "selected");
    if (score) {
      return Make(0, b * ctx * di * kAct, b * hi * (di + 1) * kAct,
                  2.0 * b * ctx * hi * di + 3.0 * b * ctx * hi, compute_pipe::kSimtFp32);
    }
    return Make(0, 0, b * ctx * 4 + b * sel * 4, 0, compute_pipe::kSimtFp32);
  };
}

WorkFn SparseMlaPart(const std::string& compute_pipe, bool output_only) {
  return [compute_pipe, output_only](const KernelShape& s) {
    const double b = Get(s, "batch"), h = Get(s, "heads"), sel = Get(s, "selected");
    const double dqk = Get(s, "d_qk", 576), dv = Get(s, "d_v", 512);
    if (output_only) return Make(0, 0, b * h * dv * kAct, 0, compute_pipe);
    return Make(0, b * sel * dqk * kAct, b * h * dqk * kAct + b * sel * 4,
                2.0 * b * h * sel * (dqk + dv), compute_pipe);
  };
}

proto::WorkModel SumWork(const std::vector<proto::WorkModel>& parts) {
  proto::WorkModel w;
  double most_flops = -1;
  for (const proto::WorkModel& p : parts) {
    if (p.flops() > most_flops) {  // the pipe that does most of the arithmetic
      most_flops = p.flops();
      w.set_compute_pipe(p.compute_pipe());
    }
    w.set_bytes(w.bytes() + p.bytes());
    w.set_flops(w.flops() + p.flops());
    w.set_weight_bytes(w.weight_bytes() + p.weight_bytes());
    w.set_kv_bytes(w.kv_bytes() + p.kv_bytes());
    w.set_activation_bytes(w.activation_bytes() + p.activation_bytes());
    w.set_comm_bytes(w.comm_bytes() + p.comm_bytes());
    w.set_decode_ops(w.decode_ops() + p.decode_ops());
  }
  return w;
}

}  // namespace qprof::kernels
