// Helpers shared by the work conventions (op_work.h), and the conventions themselves, one
// function each, that op_work.cc dispatches to by the op's rule; not part of the module's
// interface.
#ifndef QPROF_ANALYSIS_WORK_WORK_UTIL_H_
#define QPROF_ANALYSIS_WORK_WORK_UTIL_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/work/op_work.h"

namespace qprof::work::internal {

OpWorkResult Invalid(const OpCall& call, std::string_view why);
OpWorkResult Done(OpWork w);

// Bytes of one argument at its dtype; sets *known = false when it is a tensor of unknown dtype.
double ArgBytes(const OpArg& a, bool* known);
// The dtype's short name, "?" when unknown.
std::string_view DtypeText(const OpArg& a);
// Bytes per element of `a`'s dtype, 0 when unknown.
double ElementBytes(const OpArg& a);
// "aten::mm [8944,1024]x[1024,2816] bf16": the op, its tensor shapes joined by `joiner`, the
// first tensor's dtype.
std::string Describe(const OpCall& call, std::string_view shapes, const OpArg& typed);
// The Concrete Inputs value at `index` is "True".
bool FlagAt(const OpCall& call, int index);
// The argument at `index` is a tensor (non-empty dims); false for index -1.
bool TensorAt(const OpCall& call, int index);
// The argument at `index`, or nullptr (index -1 or past the recorded arguments).
const OpArg* ArgAt(const OpCall& call, int index);
// The Concrete Inputs value at `index` ("" when absent).
std::string_view ValueAt(const OpCall& call, int index);
// "[1, 1]" or "1" as `n` integers (one value repeated); `fallback` each when empty;
// nullopt when it does not parse or has another count. Negative values are allowed
// (reduction dims).
std::optional<std::vector<int64_t>> IntList(std::string_view v, size_t n, int64_t fallback);
// "[True, True, False]" as bools; nullopt when empty or malformed.
std::optional<std::vector<bool>> BoolList(std::string_view v);
// A c10::ScalarType code recorded as a Concrete Inputs value ("15": bf16), or nullopt.
std::optional<Dtype> DtypeOfScalarTypeCode(std::string_view v);
// Product of dims[from, to).
double Prod(const std::vector<int64_t>& d, size_t from, size_t to);
// Every tensor argument's shape, joined by ','.
std::string ShapesOf(const OpCall& call);
// Compute precision of a tensor's dtype ("" when unknown).
std::string Precision(const OpArg& a);

// The conventions (op_work.h states each).
using ConventionFn = OpWorkResult (*)(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult GemmWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult BatchedGemmWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult MatmulWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult GroupedGemmWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult AttentionWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult StepAttentionWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult ConvWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult ConvBackwardWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult NormWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult NormBackwardWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult ElementwiseWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult CopyWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult FillWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult CatWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult ReduceWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult MovedWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult RopeWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult KvStoreWork(const OpCall&, const OpRule&, const OpContext&);
OpWorkResult TritonWork(const OpCall&, const OpRule&, const OpContext&);

}  // namespace qprof::work::internal

#endif  // QPROF_ANALYSIS_WORK_WORK_UTIL_H_
