// Hand-built decode plans for the model's tests: small, with work models whose bytes and
// FLOPs are written out here so a test can compute the expected time by hand.
#ifndef QPROF_TESTS_MODEL_TEST_PLANS_H_
#define QPROF_TESTS_MODEL_TEST_PLANS_H_

#include <string>

#include "analysis/devices/device_specs.h"
#include "proto/plan.pb.h"

namespace qprof::model::testing {

// A device with round numbers: 1000 GB/s, 100 TFLOPS SIMT, 400 BF16, 800 FP8, 1600 FP4,
// 50 GB/s interconnect, no launch overhead figure.
inline devices::DeviceSpec RoundDevice() {
  devices::DeviceSpec d;
  d.name = "Round";
  d.key = "round";
  d.arch = "sm_120";
  d.sm_count = {100, "test"};
  d.memory_gb = {10, "test"};
  d.memory_bandwidth_gbps = {1000, "test"};
  d.fp32_simt_tflops = {100, "test"};
  d.bf16_tensor_tflops = {400, "test"};
  d.fp8_tensor_tflops = {800, "test"};
  d.fp4_tensor_tflops = {1600, "test"};
  d.interconnect = "PCIe test";
  d.interconnect_gbps = {50, "test"};
  return d;
}

inline proto::PlannedKernel* AddKernel(proto::DecodePlan& plan, const std::string& id,
                                       const std::string& role, const std::string& pipe_class,
                                       const std::string& compute_pipe, double bytes,
                                       double flops, const std::string& nvtx) {
  proto::PlannedKernel* k = plan.add_kernels();
  k->set_kernel_id(id);
  k->set_name(id + "_kernel");
  k->set_role(role);
  k->set_pipe_class(pipe_class);
  k->set_format("mxfp4");
  k->set_nvtx_path(nvtx);
  k->set_launches(1);
  k->mutable_work()->set_bytes(bytes);
  k->mutable_work()->set_flops(flops);
  k->mutable_work()->set_compute_pipe(compute_pipe);
  return k;
}

// One MoE layer at batch B, E experts top-k, per-expert weight bytes W and params P, on
// the slot path (B*k expert reads) or the grouped tensor path (U(E,k,B) reads). Also an
// attention kernel and an all-reduce of B*4096*2 bytes. Expert reads are computed by the
// caller-visible formula so tests can check bytes against it.
proto::DecodePlan MoeLayerPlan(int batch, bool slot_path, int tp = 1);

}  // namespace qprof::model::testing

#endif  // QPROF_TESTS_MODEL_TEST_PLANS_H_
