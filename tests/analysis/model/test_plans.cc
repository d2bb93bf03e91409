#include "tests/analysis/model/test_plans.h"

#include "analysis/model/formulas.h"

namespace qprof::model::testing {

proto::DecodePlan MoeLayerPlan(int batch, bool slot_path, int tp) {
  constexpr int kExperts = 64, kTopk = 4;
  constexpr double kParams = 3.0 * 512 * 1024;       // w1, w3, w2 of one expert
  constexpr double kWeightBytes = kParams * 4.25 / 8;  // MXFP4
  proto::DecodePlan plan;
  plan.set_model("hand");
  plan.set_format("mxfp4");
  plan.set_moe_backend(slot_path ? "slot_gemv" : "w4a16_mma");
  plan.set_batch(batch);
  plan.set_tp(tp);
  plan.set_layers(1);
  double reads = slot_path ? static_cast<double>(batch) * kTopk
                           : ExpectedUniqueExperts(kExperts, kTopk, batch);
  double act = batch * 1024.0 * 2 * 2;
  double useful_flops = 2.0 * batch * kTopk * kParams;
  proto::PlannedKernel* attn = AddKernel(plan, "attn.test", "attn.sparse_mla", "simt",
                                         "simt_fp32", batch * 64.0 * 576 * 2,
                                         batch * 2.0 * 64 * 576 * 16,
                                         "decode/step 0/layer 0/attn");
  attn->mutable_work()->set_kv_bytes(batch * 64.0 * 576 * 2);
  proto::PlannedKernel* moe = AddKernel(
      plan, slot_path ? "moe.slot_gemv.mxfp4" : "moe.w4a16_mma.mxfp4", "moe.experts",
      slot_path ? "simt" : "tensor", slot_path ? "simt_fp32" : "tensor_bf16",
      reads * kWeightBytes + act, useful_flops, "decode/step 0/layer 0/moe");
  moe->mutable_work()->set_weight_bytes(reads * kWeightBytes);
  moe->mutable_work()->set_activation_bytes(act);
  moe->mutable_work()->set_decode_ops(reads * kParams);  // elements decoded
  (*moe->mutable_shape())["tokens"] = batch;
  (*moe->mutable_shape())["experts"] = kExperts;
  (*moe->mutable_shape())["topk"] = kTopk;
  proto::PlannedKernel* ar = AddKernel(plan, "comm.all_reduce", "comm", "comm", "none",
                                       batch * 1024.0 * 2, 0, "decode/step 0/layer 0/moe");
  ar->mutable_work()->set_comm_bytes(batch * 1024.0 * 2);
  return plan;
}

}  // namespace qprof::model::testing
