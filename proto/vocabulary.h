// The closed vocabularies used in string fields of the schemas (roles, pipe classes,
// formats, evidence kinds), in one place so that producers and consumers agree.
// Strings rather than proto enums keep the JSON readable ("tensor", not "PIPE_TENSOR").
#ifndef QPROF_PROTO_VOCABULARY_H_
#define QPROF_PROTO_VOCABULARY_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "proto/trace.pb.h"

namespace qprof {

inline constexpr uint32_t kTraceSchemaVersion = 1;
// Profile and Diff JSON. 2: 64-bit integers are JSON numbers (1 wrote them as strings).
// Bump when a field's meaning or JSON type changes; schemas/ and the README say what each
// version means. Fields may be added without a bump.
inline constexpr uint32_t kProfileSchemaVersion = 2;
inline constexpr std::string_view kTraceMagic = "QPROFTR1";

// Roles (DESIGN.md "Attribution").
namespace role {
inline constexpr std::string_view kMoeExperts = "moe.experts";
inline constexpr std::string_view kMoeRouter = "moe.router";
inline constexpr std::string_view kAttnSparseMla = "attn.sparse_mla";
inline constexpr std::string_view kAttnIndexer = "attn.indexer";
inline constexpr std::string_view kAttnDense = "attn.dense";
inline constexpr std::string_view kNorm = "norm";
inline constexpr std::string_view kGemmDense = "gemm.dense";
inline constexpr std::string_view kComm = "comm";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kElementwise = "elementwise";
inline constexpr std::string_view kSampling = "sampling";
inline constexpr std::string_view kEmbedding = "embedding";
inline constexpr std::string_view kOther = "other";
inline constexpr std::array<std::string_view, 13> kAll = {
    kMoeExperts, kMoeRouter, kAttnSparseMla, kAttnIndexer, kAttnDense, kNorm, kGemmDense,
    kComm, kMemory, kElementwise, kSampling, kEmbedding, kOther};
}  // namespace role

// Pipe classes: which hardware pipe does the work.
namespace pipe {
inline constexpr std::string_view kTensor = "tensor";
inline constexpr std::string_view kSimt = "simt";
inline constexpr std::string_view kComm = "comm";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kOther = "other";
inline constexpr std::array<std::string_view, 5> kAll = {kTensor, kSimt, kComm, kMemory, kOther};
}  // namespace pipe

// Weight formats.
namespace format {
inline constexpr std::string_view kMxfp4 = "mxfp4";
inline constexpr std::string_view kNvfp4 = "nvfp4";
inline constexpr std::string_view kFp8 = "fp8";
inline constexpr std::string_view kBf16 = "bf16";
inline constexpr std::string_view kFp16 = "fp16";
inline constexpr std::string_view kFp32 = "fp32";
inline constexpr std::string_view kInt8 = "int8";
inline constexpr std::string_view kInt4 = "int4";
inline constexpr std::string_view kUnknown = "unknown";
}  // namespace format

// Evidence, in order of trust (DESIGN.md): measured > sass > registry > work_rate >
// launch_context > name_rule > unknown. launch_context decides roles only (the frame a kernel
// was launched from, analysis/classify/context_rules.h); pipe classes never come from it.
// work_rate decides the class only: a kernel whose achieved FLOP rate from its op's shapes is
// above the most the device reaches without tensor/matrix cores runs on them.
namespace evidence {
inline constexpr std::string_view kMeasured = "measured";
inline constexpr std::string_view kSass = "sass";
inline constexpr std::string_view kRegistry = "registry";
inline constexpr std::string_view kLaunchContext = "launch_context";
inline constexpr std::string_view kNameRule = "name_rule";
inline constexpr std::string_view kWorkRate = "work_rate";
inline constexpr std::string_view kModelled = "modelled";
inline constexpr std::string_view kUnknown = "unknown";
// Higher is more trusted; unknown strings rank lowest.
int Rank(std::string_view evidence);
}  // namespace evidence

// Compute pipes of work models (WorkModel.compute_pipe).
namespace compute_pipe {
inline constexpr std::string_view kSimtFp32 = "simt_fp32";
inline constexpr std::string_view kTensorBf16 = "tensor_bf16";
inline constexpr std::string_view kTensorFp8 = "tensor_fp8";
inline constexpr std::string_view kTensorFp4 = "tensor_fp4";
inline constexpr std::string_view kNone = "none";
}  // namespace compute_pipe

bool IsKnownRole(std::string_view s);
bool IsKnownPipeClass(std::string_view s);

// Where time figures came from, in the words every report uses (terminal, HTML, and the
// JSON's string fields: Source.provenance, Totals.provenance, KernelRow.provenance,
// Profile.provenance_label). Profile.provenance is the same as an enum, which JSON spells by
// its proto name (PROVENANCE_IMPORTED) for programs.
namespace provenance {
inline constexpr std::string_view kMeasuredGpu = "measured on GPU";
inline constexpr std::string_view kMeasuredHost = "measured on host CPU";
inline constexpr std::string_view kImported = "imported";
inline constexpr std::string_view kModelled = "modelled";
inline constexpr std::string_view kUnspecified = "unspecified";
// Joins the label and the file of an imported figure: "imported from trace.sqlite".
inline constexpr std::string_view kFrom = " from ";
}  // namespace provenance

// One of the provenance:: labels.
std::string_view ProvenanceLabel(proto::Provenance p);
// The label with the file for imported figures ("imported from <path as given>"), else the
// label alone.
std::string ProvenanceWithSource(proto::Provenance p, std::string_view source_path);

namespace format {
// Bits one stored weight costs in `format`, block scales included; the one definition the
// registry's work models and the analysis's format ceilings share:
//   mxfp4 4 + 8/32 = 4.25   E2M1, one UE8M0 scale per 32 weights (OCP MX)
//   nvfp4 4 + 8/16 = 4.5    E2M1, one E4M3 scale per 16 (the FP32 tensor scale is one per
//                           matrix, counted per matrix by the work models, not here)
//   fp8   8 + 32/16384      E4M3 with one FP32 scale per 128x128 block: the layout of the
//                           DeepSeek FP8 checkpoints the published FP8 figures ran (8.00195)
//   bf16, fp16 16; fp32 32; int8 8; 0 for anything else.
double BitsPerWeight(std::string_view format);
}  // namespace format

}  // namespace qprof

#endif  // QPROF_PROTO_VOCABULARY_H_
