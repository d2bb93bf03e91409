// Element types of the tensors a trace records, and what they cost: bytes per element and
// the precision whose roof a kernel working on them is measured against.
//
// Two sources:
//  - PyTorch's profiler writes each input's dtype in "Input type" as c10's type name
//    ("c10::BFloat16", "float", "long int", "c10::Float8_e4m3fn"); non-tensor arguments are
//    "Scalar", "ScalarList", "TensorList", "GenericList", "" (None) and the like.
//  - torch's emit_nvtx ranges (nsys) record sizes only: the dtype comes from the kernel's
//    name where it says (bf16, fp16, e4m3, __nv_bfloat16, cutlass::half_t, ...). The rules
//    are conservative: a name that could be read two ways ("float" is also the accumulator
//    type in most templates) gives no dtype, and the bytes stay unknown.
#ifndef QPROF_ANALYSIS_WORK_DTYPES_H_
#define QPROF_ANALYSIS_WORK_DTYPES_H_

#include <optional>
#include <string_view>

namespace qprof::work {

struct Dtype {
  std::string_view name;       // "bf16", "fp16", "fp32", "tf32", "fp8_e4m3", "fp4_e2m1x2", "int64", ...
  double bytes = 0;            // per element as stored (Float4_e2m1fn_x2 packs two values in 1)
  // Precision whose dense tensor-core roof applies to GEMM-like work on it:
  // "bf16", "fp16", "tf32" (FP32 inputs on tensor cores), "fp8", "fp4", "int8", or "" when
  // no tensor-core precision matches (fp64, integers, bool).
  std::string_view precision;
};

// c10 type name as PyTorch's profiler writes it ("c10::BFloat16", "long int"); nullopt for
// anything that is not a tensor element type ("Scalar", "TensorList", "", unknown text).
std::optional<Dtype> DtypeOfTorchType(std::string_view type);

// Whether an "Input type" entry names a non-tensor argument (scalar, list, None, string,
// device, ...). Such arguments carry no bytes.
bool IsNonTensorType(std::string_view type);

// The element type a kernel name states, or nullopt. GEMM names spell operand types first
// ("sm90_xmma_gemm_bf16bf16_bf16f32_...", "ampere_fp16_s16816gemm_fp16_...",
// "cutlass_80_tensorop_bf16_s16816gemm_..."), template arguments name C++ types
// ("c10::BFloat16", "__nv_bfloat16", "cutlass::bfloat16_t", "__half", "cutlass::half_t",
// "__nv_fp8_e4m3"); FP32 only from unambiguous names ("sgemm", "_f32f32_f32f32_").
std::optional<Dtype> DtypeOfKernelName(std::string_view kernel);

// The weight-format name of a dtype ("bf16", "fp16", "fp32", "fp8" for both FP8 kinds,
// "fp4" for packed E2M1 without known scales), as format ceilings name formats.
std::string_view FormatOfDtype(const Dtype& d);

// The dtype by its short name ("bf16", "fp8_e4m3", ...), for tests and configs.
std::optional<Dtype> DtypeByName(std::string_view name);

}  // namespace qprof::work

#endif  // QPROF_ANALYSIS_WORK_DTYPES_H_
