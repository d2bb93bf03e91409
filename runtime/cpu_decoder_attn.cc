// The attention operations of the CPU decoder that are not plain projections or norms:
// rope, the KV append, the indexer and the sparse MLA.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/common_cpu.h"
#include "kernels/mla/mla_cpu.h"
#include "runtime/cpu_decoder.h"

namespace qprof::runtime {

absl::Status CpuDecoder::Rope(const StepLaunch& l, profiler::HostCollector* col) {
  const int B = batch_, dqk = c_.d_qk(), dv = c_.kv_lora_rank, R = c_.rope_dim;
  // Two launches like the CUDA backend's: the query heads, then the one latent key.
  const bool query = l.op == StepOp::kRopeQ;
  const int heads = query ? c_.n_heads : 1;
  if (l.shape.at("heads") != heads) {
    return absl::InternalError(absl::StrCat("decode step ", StepOpName(l.op), ": described ",
                                            l.shape.at("heads"), " heads, model ", heads));
  }
  kernels::RopeParams p{B, heads, R, dqk, heads * dqk, c_.rope_theta, positions_.data(),
                        (query ? q_.data() : kv_new_.data()) + dv};
  return Run(col, l.kernel_id, l.shape, [&] { return kernels::RopeCpu(p); });
}

absl::Status CpuDecoder::KvAppend(const StepLaunch& l, profiler::HostCollector* col) {
  const int dqk = c_.d_qk(), Di = c_.index_head_dim;
  const uint32_t layer = l.layer;
  return Run(col, l.kernel_id, l.shape, [&] {
    for (int b = 0; b < batch_; ++b) {
      int64_t r = int64_t{b} * stride_ + positions_[b];
      kernels::FloatToBf16N(&kv_new_[size_t(b) * dqk], dqk, &kv_[layer][r * dqk]);
      kernels::FloatToBf16N(&ik_[size_t(b) * Di], Di, &ikey_[layer][r * Di]);
      lens_[b] = positions_[b] + 1;
    }
    return absl::OkStatus();
  });
}

absl::Status CpuDecoder::Indexer(const StepLaunch& l, profiler::HostCollector* col) {
  const int B = batch_;
  int64_t ctx = 0, sel_total = 0;
  for (int b = 0; b < B; ++b) ctx += lens_[b];
  std::vector<int32_t> counts(B);
  kernels::IndexerParams ip;
  ip.batch = B;
  ip.index_heads = c_.index_n_heads;
  ip.index_dim = c_.index_head_dim;
  ip.index_topk = c_.index_topk;
  ip.window = c_.window;
  ip.kv_seq_stride = stride_;
  ip.out_topk = out_topk_;
  ip.q = iq_.data();
  ip.head_weights = iw_.data();
  ip.keys = ikey_[l.layer].data();
  ip.seq_lens = lens_.data();
  ip.scores = scores_.data();
  ip.indices = indices_.data();
  ip.counts = counts.data();
  ip.pool = pool_;
  const int64_t t0 = profiler::HostNowNs();
  RETURN_IF_ERROR(kernels::IndexerTopkCpu(ip));
  const int64_t t1 = profiler::HostNowNs();
  for (int b = 0; b < B; ++b) sel_total += counts[b];
  // The data-dependent keys with this step's values: known only after the call.
  kernels::KernelShape shape = l.shape;
  shape["context"] = (ctx + B / 2) / B;
  selected_ = (sel_total + B / 2) / B;
  shape["selected"] = selected_;
  Record(col, l.kernel_id, shape, t0, t1);
  return absl::OkStatus();
}

absl::Status CpuDecoder::SparseMla(const StepLaunch& l, profiler::HostCollector* col) {
  const int dqk = c_.d_qk();
  kernels::SparseMlaParams mp;
  mp.batch = batch_;
  mp.heads = c_.n_heads;
  mp.d_v = c_.kv_lora_rank;
  mp.d_qk = dqk;
  mp.topk = out_topk_;
  mp.kv_seq_stride = stride_;
  mp.softmax_scale = 1.0f / std::sqrt(static_cast<float>(dqk));
  mp.q = q_.data();
  mp.kv = kv_[l.layer].data();
  mp.seq_lens = lens_.data();
  mp.indices = indices_.data();
  mp.out = attn_.data();
  mp.pool = pool_;
  kernels::KernelShape shape = l.shape;
  shape["selected"] = selected_;  // what the indexer of this layer selected
  return Run(col, l.kernel_id, shape, [&] { return kernels::SparseMlaDecodeCpu(mp); },
             "sparse_mla_decode_cpu");
}

}  // namespace qprof::runtime
