#include "analysis/work/dtypes.h"

#include <array>
#include <string>

namespace qprof::work {
namespace {

// name, bytes per element, tensor-core precision.
constexpr std::array<Dtype, 21> kDtypes = {{
    {"fp32", 4, "tf32"},        // FP32 GEMMs on tensor cores run as TF32
    {"fp64", 8, ""},
    {"bf16", 2, "bf16"},
    {"fp16", 2, "fp16"},
    {"fp8_e4m3", 1, "fp8"},
    {"fp8_e5m2", 1, "fp8"},
    {"fp8_e8m0", 1, ""},        // block scales (MX), not operands
    {"fp4_e2m1x2", 1, "fp4"},   // two E2M1 values per byte: shapes count packed bytes
    {"int64", 8, ""},
    {"int32", 4, ""},
    {"int16", 2, ""},
    {"int8", 1, "int8"},
    {"uint8", 1, ""},
    {"uint16", 2, ""},
    {"uint32", 4, ""},
    {"uint64", 8, ""},
    {"bool", 1, ""},
    // Elements known by their size only (ATen's OpaqueType<N> copy kernels).
    {"1-byte", 1, ""},
    {"2-byte", 2, ""},
    {"4-byte", 4, ""},
    {"8-byte", 8, ""},
}};

// c10 type names (c10::util::get_fully_qualified_type_name as GCC demangles them) -> dtype.
struct TorchName {
  std::string_view torch;
  std::string_view dtype;
};
constexpr std::array<TorchName, 27> kTorchNames = {{
    {"float", "fp32"},
    {"double", "fp64"},
    {"c10::BFloat16", "bf16"},
    {"c10::Half", "fp16"},
    {"c10::Float8_e4m3fn", "fp8_e4m3"},
    {"c10::Float8_e4m3fnuz", "fp8_e4m3"},
    {"c10::Float8_e5m2", "fp8_e5m2"},
    {"c10::Float8_e5m2fnuz", "fp8_e5m2"},
    {"c10::Float8_e8m0fnu", "fp8_e8m0"},
    {"c10::Float4_e2m1fn_x2", "fp4_e2m1x2"},
    {"long int", "int64"},
    {"long", "int64"},
    {"int64_t", "int64"},
    {"int", "int32"},
    {"short int", "int16"},
    {"short", "int16"},
    {"signed char", "int8"},
    {"unsigned char", "uint8"},
    {"short unsigned int", "uint16"},
    {"unsigned short", "uint16"},
    {"unsigned int", "uint32"},
    {"long unsigned int", "uint64"},
    {"unsigned long", "uint64"},
    {"bool", "bool"},
    {"c10::qint8", "int8"},
    {"c10::quint8", "uint8"},
    {"c10::qint32", "int32"},
}};

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace

std::optional<Dtype> DtypeByName(std::string_view name) {
  for (const Dtype& d : kDtypes) {
    if (d.name == name) return d;
  }
  return std::nullopt;
}

std::string_view FormatOfDtype(const Dtype& d) {
  if (d.name == "fp8_e4m3" || d.name == "fp8_e5m2") return "fp8";
  if (d.name == "fp4_e2m1x2") return "fp4";
  return d.name;
}

std::optional<Dtype> DtypeOfTorchType(std::string_view type) {
  for (const TorchName& t : kTorchNames) {
    if (t.torch == type) return DtypeByName(t.dtype);
  }
  return std::nullopt;
}

bool IsNonTensorType(std::string_view type) {
  return !DtypeOfTorchType(type).has_value();
}

std::optional<Dtype> DtypeOfKernelName(std::string_view k) {
  // Narrow types first: an FP8 GEMM's name also names its BF16 output.
  struct Rule {
    std::string_view part;
    std::string_view dtype;
  };
  static constexpr std::array<Rule, 28> kRules = {{
      {"e2m1", "fp4_e2m1x2"},
      {"E2m1", "fp4_e2m1x2"},
      {"nvfp4", "fp4_e2m1x2"},
      {"e4m3", "fp8_e4m3"},
      {"E4m3", "fp8_e4m3"},
      {"e5m2", "fp8_e5m2"},
      {"Float8_e4m3", "fp8_e4m3"},
      {"bf16", "bf16"},
      {"Bf16", "bf16"},
      {"BFloat16", "bf16"},
      {"bfloat16", "bf16"},
      {"__nv_bfloat16", "bf16"},
      {"fp16", "fp16"},
      {"f16f16", "fp16"},
      {"c10::Half", "fp16"},
      {"cutlass::half_t", "fp16"},
      {"__half", "fp16"},
      {"_h884gemm", "fp16"},
      {"_h1688gemm", "fp16"},
      {"_h16816gemm", "fp16"},
      {"sgemm", "fp32"},
      {"_f32f32_f32f32_", "fp32"},
      {"tf32f32_tf32f32", "fp32"},
      {"_s1688gemm", "fp32"},  // FP32 operands on tensor cores (TF32)
      // ATen copies elements as opaque N-byte words (cat, index, copy of any dtype).
      {"OpaqueType<1", "1-byte"},
      {"OpaqueType<2", "2-byte"},
      {"OpaqueType<4", "4-byte"},
      {"OpaqueType<8", "8-byte"},
  }};
  for (const Rule& r : kRules) {
    if (Contains(k, r.part)) return DtypeByName(r.dtype);
  }
  return std::nullopt;
}

}  // namespace qprof::work
