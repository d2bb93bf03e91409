// Evidence from work: a kernel whose achieved FLOP rate, from the FLOPs its launching op's
// shapes give (analysis/work) over the measured time of those launches, is above the most
// the device reaches without tensor or matrix cores, runs on them ("rate above the CUDA-core
// roof"). It decides the pipe class only, above the launch context and the name rules and
// below measured counters, SASS and the registry (proto/vocabulary.h: evidence::kWorkRate).
//
// The roof it must beat is the device's non-tensor peak for the work's precision:
//   32-bit work (fp32, tf32 operands)   fp32_simt_tflops (FFMA / vector FP32, packed where the
//                                       vendor's figure is packed, e.g. MI210's 45.3 TF);
//   narrower work (bf16, fp16, fp8, ...) kSubWordSimtFactor x that: CUDA cores run 16-bit
//                                       FMAs two per lane (HFMA2) and A100's non-tensor FP16
//                                       peak is 4x its FP32 (78 vs 19.5 TFLOPS, NVIDIA A100
//                                       whitepaper), the widest ratio of the table's GPUs; a
//                                       kernel above 4x has no non-tensor way to get there.
// The bound is deliberately high: a false "tensor" would hide a SIMT kernel, which is the
// question qprof exists to answer.
#ifndef QPROF_ANALYSIS_CLASSIFY_RATE_EVIDENCE_H_
#define QPROF_ANALYSIS_CLASSIFY_RATE_EVIDENCE_H_

#include <cstdint>
#include <string>

#include "analysis/devices/device_specs.h"
#include "proto/trace.pb.h"

namespace qprof::classify {

inline constexpr double kSubWordSimtFactor = 4.0;

// The work of a kernel row's launches that carry work from shapes.
struct RowWork {
  double flops = 0;        // summed over those launches
  double time_ns = 0;      // their measured time
  uint64_t launches = 0;
  bool sub_word = true;    // any of the work narrower than 32 bits, or its precision unknown
  std::string source;      // "derived from shapes: aten::mm [..] bf16"
};

// The non-tensor roof in TFLOP/s for `w` on `d`, and how it was reached (for the detail).
double NonTensorRoofTflops(const devices::DeviceSpec& d, bool sub_word, std::string* how);

// When `w`'s rate is above the roof: the class becomes "tensor" and the evidence "work_rate",
// with a detail that gives both rates and keeps the role's own note; returns true. Leaves
// `a` alone (false) otherwise, or when `a`'s evidence is measured, SASS, registry or modelled.
bool ApplyRateEvidence(const RowWork& w, const devices::DeviceSpec& d, proto::Attribution* a);

}  // namespace qprof::classify

#endif  // QPROF_ANALYSIS_CLASSIFY_RATE_EVIDENCE_H_
