// One recorded operator call: the op's name and its inputs as the trace recorded them.
//
// Kineto (PyTorch profiler with record_shapes=True) writes three parallel JSON arrays on
// each cpu_op: "Input Dims" ([[8944, 1024], [1024, 2816]], [] for a scalar or None, a list
// of lists for a TensorList), "Input type" (["c10::BFloat16", "Scalar", ...]) and
// "Concrete Inputs" (["", "0.", "True", ...]: the values of scalar arguments). torch's
// emit_nvtx (record_shapes=True) names its NVTX ranges "aten::mm, seq = 12, op_id = 34,
// sizes = [[8944, 1024], [1024, 2816]], input_op_ids = [(33,0)]": sizes only, no types.
//
// ParseOpCall validates what the work rules rely on: every dimension a non-negative
// integer below kMaxDim, at most kMaxRank dimensions, tensors of at most kMaxElements, the
// three arrays of one length when present (an empty or missing array is allowed), every
// type a string. Anything else is an error naming what was wrong: the launch then carries
// no work and is counted in one warning.
#ifndef QPROF_ANALYSIS_WORK_OP_CALL_H_
#define QPROF_ANALYSIS_WORK_OP_CALL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/work/dtypes.h"

namespace qprof::work {

inline constexpr int64_t kMaxDim = int64_t{1} << 40;
inline constexpr double kMaxElements = 1e15;
inline constexpr size_t kMaxRank = 12;
inline constexpr size_t kMaxArgs = 256;

struct OpArg {
  bool is_list = false;                      // a TensorList (dims per element in `list`)
  std::vector<int64_t> dims;                 // a tensor's sizes; empty: scalar, None, 0-dim
  std::vector<std::vector<int64_t>> list;
  std::string type;                          // "Input type" entry ("" when not recorded)
  std::string value;                         // "Concrete Inputs" entry ("" when not recorded)
  std::optional<Dtype> dtype;                // from `type`, else the kernel name's (nsys)

  double Elements() const;                   // product of dims (1 for 0-dim); list: sum
  bool IsTensor() const { return !is_list && !dims.empty(); }
};

struct OpCall {
  std::string op;                            // "aten::addmm", with emit_nvtx decorations removed
  std::vector<OpArg> args;
  bool has_types = false;                    // Kineto recorded "Input type"
  bool has_values = false;                   // Kineto recorded "Concrete Inputs" (PyTorch 2.1+)
};

// A Kineto cpu_op: its name and the three arrays' JSON texts ("" when absent).
absl::StatusOr<OpCall> ParseKinetoOpCall(std::string_view name, std::string_view input_dims,
                                         std::string_view input_types,
                                         std::string_view concrete_inputs);

// An emit_nvtx range name; nullopt when the name has no ", sizes = [" part (a plain NVTX
// range, or emit_nvtx without record_shapes). An error when the sizes do not parse.
std::optional<absl::StatusOr<OpCall>> ParseNvtxOpCall(std::string_view range_name);

// A "[[...], ...]" sizes or "Input Dims" text alone (exposed for the fuzzer and tests).
absl::StatusOr<std::vector<OpArg>> ParseDims(std::string_view json);

// Gives `dtype` (the kernel name's) to the arguments that have none and say nothing of
// their own: tensors with no recorded type (nsys) and tensor lists ("TensorList" records no
// element type).
void FillMissingDtypes(const std::optional<Dtype>& dtype, OpCall* call);

// "[8944,1024]", "[2x[16,16,559,32]]" for lists: how descriptions print shapes.
std::string DimsText(const OpArg& a);

}  // namespace qprof::work

#endif  // QPROF_ANALYSIS_WORK_OP_CALL_H_
